/*
 * The servo pulse sequencer's decisions, free of registers: which edge comes next and when.
 *
 * A frame (FSB_SEQ_FRAME_TICKS) is cut into one slot (FSB_SEQ_SLOT_TICKS) per channel. At the
 * start of its slot an enabled channel's pin goes high, and it goes low again after the width
 * that channel has *at that moment*: the width is latched per channel at its own slot start.
 * A width written any time before a channel's slot starts is therefore the one it pulses in
 * that very slot (not one frame later), and a width written while the pulse is high cannot
 * cut it short or stretch it. fsb_pulse_timer.c calls fsb_sequencer_next() and
 * fsb_sequencer_latch() from the timer interrupt; the host unit tests call them directly. Times are Timer1 ticks (0.5 us), modulo
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

typedef enum { FSB_EDGE_NONE = 0, FSB_EDGE_RISE = 1, FSB_EDGE_FALL = 2 } fsb_edge_t;

typedef struct {
    uint16_t frame_start; /* tick of the current frame's start */
    uint16_t edge;        /* tick of the next slot start or pulse end */
    uint8_t slot;         /* channel whose slot the next edge belongs to */
    uint8_t pin_high;     /* the next edge ends that channel's pulse */
} fsb_sequencer_t;

/* Start with the first frame one slot after ``now``, all pins low. */
static inline void fsb_sequencer_init(fsb_sequencer_t *seq, uint16_t now)
{
    seq->frame_start = (uint16_t)(now + FSB_SEQ_SLOT_TICKS);
    seq->edge = seq->frame_start;
    seq->slot = 0;
    seq->pin_high = 0;
}

/*
 * Decide the edge due at seq->edge, on channel seq->slot (read both before the call), and
 * move on. ``enabled`` (bit = channel) is read at a slot start only. After a rise, seq->edge
 * is still the rise's tick until fsb_sequencer_latch() adds the width.
 */
static inline fsb_edge_t fsb_sequencer_next(fsb_sequencer_t *seq, uint8_t enabled)
{
    if (!seq->pin_high && (enabled & (1u << seq->slot))) {
        seq->pin_high = 1;
        return FSB_EDGE_RISE;
    }
    fsb_edge_t edge = seq->pin_high ? FSB_EDGE_FALL : FSB_EDGE_NONE;
    seq->pin_high = 0;
    if (++seq->slot == FSB_CHANNELS) {
        seq->slot = 0;
        seq->frame_start = (uint16_t)(seq->frame_start + FSB_SEQ_FRAME_TICKS);
    }
    seq->edge = (uint16_t)(seq->frame_start + seq->slot * FSB_SEQ_SLOT_TICKS);
    return edge;
}

/* After a rise: the pulse ends ``width_ticks[slot]`` (within the slot) after it began. This
 * is the latch: the interrupt handler calls it just after driving the pin high, so the pulse
 * takes the width its channel has at the very start of its slot, and keeps it. */
static inline void fsb_sequencer_latch(fsb_sequencer_t *seq, const volatile uint16_t *width_ticks)
{
    seq->edge = (uint16_t)(seq->edge + width_ticks[seq->slot]);
}

/* fsb_sequencer_next() and, after a rise, fsb_sequencer_latch(): one edge in one call. */
static inline fsb_edge_t fsb_sequencer_step(fsb_sequencer_t *seq, uint8_t enabled,
                                            const volatile uint16_t *width_ticks)
{
    fsb_edge_t edge = fsb_sequencer_next(seq, enabled);
    if (edge == FSB_EDGE_RISE) {
        fsb_sequencer_latch(seq, width_ticks);
    }
    return edge;
}

#ifdef __cplusplus
}
#endif

#endif
