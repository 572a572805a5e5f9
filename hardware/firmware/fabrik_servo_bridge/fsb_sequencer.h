/*
 * The servo pulse sequencer's decisions, free of registers: which edge comes next and when.
 *
 * Each frame runs in one of two modes, chosen at its start from the requested frame length
 * (0 = slotted; SET_FRAME in hardware/PROTOCOL.md):
 *
 * Slotted (the default, for analog servos): a 20 ms frame (FSB_SEQ_FRAME_TICKS) is cut into
 * one slot (FSB_SEQ_SLOT_TICKS) per channel. At the start of its slot an enabled channel's pin
 * goes high, and it goes low again after the width that channel has *at that moment*: the
 * width is latched per channel at its own slot start. A width written any time before a
 * channel's slot starts is therefore the one it pulses in that very slot (not one frame
 * later), and a width written while the pulse is high cannot cut it short or stretch it.
 *
 * Fast (for digital servos, which take a shorter frame): every channel enabled at the frame
 * start rises on the same edge; the latch then sorts their widths so the pins fall in order
 * of width, channels of equal width (or within FSB_SEQ_FOLD_TICKS above) on one edge. The next frame starts the requested number
 * of ticks after this one, so every enabled pin repeats at that period. Widths and enable bits
 * are latched at the frame start, so again no pulse is cut short or stretched.
 *
 * fsb_pulse_timer.c calls fsb_sequencer_next() and fsb_sequencer_latch() from the timer
 * interrupt; the host unit tests call them directly. Times are Timer1 ticks (0.5 us), modulo
 * 2^16.
 */
#ifndef FSB_SEQUENCER_H
#define FSB_SEQUENCER_H

#include <stdint.h>

#include "fsb_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FSB_SEQ_TICKS_PER_US 2u
#define FSB_SEQ_FRAME_TICKS (20000u * FSB_SEQ_TICKS_PER_US)
#define FSB_SEQ_SLOT_TICKS (3000u * FSB_SEQ_TICKS_PER_US)
#define FSB_SEQ_GAP_TICKS (FSB_FRAME_GAP_US * FSB_SEQ_TICKS_PER_US)
/* Two falls need about 2 us of the interrupt handler between them; a width this close above a
 * shorter one (1 us, the protocol's resolution) falls with it, so at most 1 us short, rather
 * than late and making every later close fall later still. */
#define FSB_SEQ_FOLD_TICKS (1u * FSB_SEQ_TICKS_PER_US)
#define FSB_SEQ_ALL_CHANNELS ((uint8_t)((1u << FSB_CHANNELS) - 1u))

typedef enum { FSB_EDGE_NONE = 0, FSB_EDGE_RISE = 1, FSB_EDGE_FALL = 2 } fsb_edge_t;

typedef struct {
    uint16_t frame_start; /* tick of the current frame's start */
    uint16_t edge;        /* tick of the next edge (or of the next slot or frame start) */
    uint16_t frame_ticks; /* length of the current frame if fast, 0 if slotted */
    uint8_t starting;     /* the next edge starts a frame, whose mode is still open */
    uint8_t slot;         /* slotted: channel whose slot the next edge belongs to;
                           * fast: index of the next fall group */
    uint8_t pin_high;     /* slotted: the next edge ends that channel's pulse */
    uint8_t rose;         /* fast: channels that rose at this frame's start */
    uint8_t groups;       /* fast: number of fall groups this frame */
    uint8_t group_mask[FSB_CHANNELS];  /* fast: channels falling together, by width */
    uint16_t group_at[FSB_CHANNELS];   /* fast: the tick of their fall */
} fsb_sequencer_t;

/* Start with the first frame one slot after ``now``, all pins low. */
static inline void fsb_sequencer_init(fsb_sequencer_t *seq, uint16_t now)
{
    seq->frame_start = (uint16_t)(now + FSB_SEQ_SLOT_TICKS);
    seq->edge = seq->frame_start;
    seq->frame_ticks = 0;
    seq->starting = 1;
    seq->slot = 0;
    seq->pin_high = 0;
    seq->rose = 0;
    seq->groups = 0;
}

/* The current frame is over: the next edge starts the one after it. */
static inline void fsb_sequencer_end_frame(fsb_sequencer_t *seq, uint16_t length)
{
    seq->frame_start = (uint16_t)(seq->frame_start + length);
    seq->edge = seq->frame_start;
    seq->starting = 1;
}

/* Fast mode: fall groups before ``next`` have been driven (the interrupt handler drives falls
 * that come close together straight from group_at and group_mask, then calls this once). */
static inline void fsb_sequencer_fell(fsb_sequencer_t *seq, uint8_t next)
{
    seq->slot = next;
    if (next < seq->groups) {
        seq->edge = seq->group_at[next];
    } else {
        fsb_sequencer_end_frame(seq, seq->frame_ticks);
    }
}

/* Slotted mode: the edge at the current slot's start or its pulse's end. */
static inline fsb_edge_t fsb_sequencer_next_slotted(fsb_sequencer_t *seq, uint8_t enabled,
                                                   uint8_t *channels)
{
    *channels = (uint8_t)(1u << seq->slot);
    if (!seq->pin_high && (enabled & *channels)) {
        seq->pin_high = 1;
        return FSB_EDGE_RISE;
    }
    fsb_edge_t edge = seq->pin_high ? FSB_EDGE_FALL : FSB_EDGE_NONE;
    seq->pin_high = 0;
    if (++seq->slot == FSB_CHANNELS) {
        fsb_sequencer_end_frame(seq, FSB_SEQ_FRAME_TICKS);
    } else {
        seq->edge = (uint16_t)(seq->frame_start + seq->slot * FSB_SEQ_SLOT_TICKS);
    }
    return edge;
}

/*
 * Decide the edge due at seq->edge and move on; ``*channels`` (bit = channel) gets the pins
 * it drives (for NONE, what it would have). ``frame_ticks`` (0 = slotted, else the fast
 * frame's length, at least FSB_SEQ_GAP_TICKS longer than any width) is read at a frame start
 * only, ``enabled`` at a slot start (slotted) or frame start (fast) only. After a rise,
 * seq->edge is still the rise's tick until fsb_sequencer_latch() adds the width.
 */
static inline fsb_edge_t fsb_sequencer_next(fsb_sequencer_t *seq, uint8_t enabled,
                                            uint16_t frame_ticks, uint8_t *channels)
{
    if (seq->starting) {
        seq->starting = 0;
        seq->frame_ticks = frame_ticks;
        seq->slot = 0;
        seq->pin_high = 0;
        if (frame_ticks) {
            seq->rose = (uint8_t)(enabled & FSB_SEQ_ALL_CHANNELS);
            seq->groups = 0;
            *channels = seq->rose;
            if (seq->rose) {
                return FSB_EDGE_RISE;
            }
            fsb_sequencer_end_frame(seq, frame_ticks);
            return FSB_EDGE_NONE;
        }
    }
    if (!seq->frame_ticks) {
        return fsb_sequencer_next_slotted(seq, enabled, channels);
    }
    *channels = seq->group_mask[seq->slot];
    fsb_sequencer_fell(seq, (uint8_t)(seq->slot + 1u));
    return FSB_EDGE_FALL;
}

/* Fast mode, after the common rise: sort the channels that rose by width into fall groups
 * (equal or folded widths share one), each width capped to leave the frame's gap. */
static inline void fsb_sequencer_sort(fsb_sequencer_t *seq, const volatile uint16_t *width_ticks)
{
    uint16_t longest = (uint16_t)(seq->frame_ticks - FSB_SEQ_GAP_TICKS);
    uint16_t width_at[FSB_CHANNELS];
    uint8_t groups = 0;
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        uint8_t bit = (uint8_t)(1u << ch);
        if (!(seq->rose & bit)) {
            continue;
        }
        uint16_t width = width_ticks[ch];
        if (width > longest) {
            width = longest;
        }
        uint8_t at = groups;
        while (at > 0 && width_at[at - 1] > width) {
            at--;
        }
        if (at > 0 && width_at[at - 1] == width) {
            seq->group_mask[at - 1] |= bit;
            continue;
        }
        for (uint8_t move = groups; move > at; move--) {
            width_at[move] = width_at[move - 1];
            seq->group_mask[move] = seq->group_mask[move - 1];
        }
        width_at[at] = width;
        seq->group_mask[at] = bit;
        groups++;
    }
    /* Widths within FSB_SEQ_FOLD_TICKS of a shorter group's fall with it. */
    uint8_t kept = 0;
    for (uint8_t g = 0; g < groups; g++) {
        if (kept > 0 && (uint16_t)(width_at[g] - width_at[kept - 1]) <= FSB_SEQ_FOLD_TICKS) {
            seq->group_mask[kept - 1] |= seq->group_mask[g];
            continue;
        }
        width_at[kept] = width_at[g];
        seq->group_mask[kept] = seq->group_mask[g];
        seq->group_at[kept] = (uint16_t)(seq->frame_start + width_at[g]);
        kept++;
    }
    seq->groups = kept;
    seq->slot = 0;
    seq->edge = seq->group_at[0];
}

/* After a rise: the pulse ends after the width its channel has now (slotted: within the
 * slot; fast: each channel that rose after its own width). This is the latch: the interrupt
 * handler calls it just after driving the pins high, so a pulse takes the width its channel
 * has at the very start of its slot or frame, and keeps it. */
static inline void fsb_sequencer_latch(fsb_sequencer_t *seq, const volatile uint16_t *width_ticks)
{
    if (seq->frame_ticks) {
        fsb_sequencer_sort(seq, width_ticks);
    } else {
        seq->edge = (uint16_t)(seq->edge + width_ticks[seq->slot]);
    }
}

/* fsb_sequencer_next() and, after a rise, fsb_sequencer_latch(): one edge in one call. */
static inline fsb_edge_t fsb_sequencer_step(fsb_sequencer_t *seq, uint8_t enabled,
                                            uint16_t frame_ticks,
                                            const volatile uint16_t *width_ticks,
                                            uint8_t *channels)
{
    fsb_edge_t edge = fsb_sequencer_next(seq, enabled, frame_ticks, channels);
    if (edge == FSB_EDGE_RISE) {
        fsb_sequencer_latch(seq, width_ticks);
    }
    return edge;
}

/* Whether the next edge is due within ``lead`` ticks of ``now`` (or already past, by up to a
 * slot): the interrupt handler then drives it at once instead of through a compare match that
 * could be set too late to fire. Edges further ahead (up to a whole frame) are not due. */
static inline int fsb_sequencer_due(const fsb_sequencer_t *seq, uint16_t now, uint16_t lead)
{
    return (uint16_t)(now + lead - seq->edge) <= FSB_SEQ_SLOT_TICKS;
}

#ifdef __cplusplus
}
#endif

#endif
