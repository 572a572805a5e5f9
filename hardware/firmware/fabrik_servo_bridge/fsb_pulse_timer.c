#include "fsb_pulse_timer.h"

#include <avr/interrupt.h>
#include <avr/io.h>
#include <util/atomic.h>

#include "fsb_config.h"
#include "fsb_sequencer.h"

#define TICKS_PER_US FSB_SEQ_TICKS_PER_US
#define FIRST_PIN PD2
#define PIN_MASK ((uint8_t)(((1u << FSB_CHANNELS) - 1u) << FIRST_PIN))
/* The compare interrupt fires this early; the handler decides the edge, then waits for the
 * exact tick. Any other interrupt (UART, under 5 us) delaying it therefore cannot move an
 * edge. A width is latched just after its pulse's rising edge (fsb_sequencer.h). */
#define LEAD_TICKS (20u * TICKS_PER_US)
/* An edge due this soon after the one just driven is driven in the same interrupt: a compare
 * value written that close could already have passed. */
#define DUE_TICKS (LEAD_TICKS + 10u * TICKS_PER_US)
/* Compare B wakes the main loop every millisecond, so moves and the watchdog advance in
 * 1 ms steps and a pulse takes a width computed at most 1 ms before it starts. */
#define WAKE_TICKS (1000u * TICKS_PER_US)

static volatile uint16_t width_ticks[FSB_CHANNELS]; /* written by the main loop */
static volatile uint8_t enabled;                     /* written by the main loop */
static volatile uint16_t frame_ticks;                /* written by the main loop; 0 = slotted */

static fsb_sequencer_t sequencer; /* used only by the interrupt handler after init */

static uint16_t last_tick; /* for fsb_pulse_timer_elapsed_us */
static uint8_t odd_tick;   /* half microsecond carried to the next call */

void fsb_pulse_timer_init(void)
{
    PORTD &= (uint8_t)~PIN_MASK;
    DDRD |= PIN_MASK;
    TCCR1A = 0;
    TCCR1B = _BV(CS11); /* normal mode, clk/8 */
    fsb_sequencer_init(&sequencer, TCNT1);
    last_tick = TCNT1;
    OCR1A = (uint16_t)(sequencer.edge - LEAD_TICKS);
    OCR1B = (uint16_t)(last_tick + WAKE_TICKS);
    TIFR1 = _BV(OCF1A) | _BV(OCF1B);
    TIMSK1 = _BV(OCIE1A) | _BV(OCIE1B);
}

void fsb_pulse_timer_set(uint8_t enabled_mask, const uint16_t *pulse_us, uint16_t frame_us)
{
    /* The board core keeps pulses inside the limits, and a fast frame longer than the limits
     * plus the gap; this only guards the sequencer, whose slots assume widths within the
     * widest limits and whose fast frames a length within FSB_FRAME_MAX_US. */
    if (frame_us > FSB_FRAME_MAX_US) {
        frame_us = FSB_FRAME_MAX_US;
    }
    uint16_t ceiling = FSB_PULSE_CEILING_US;
    if (frame_us != FSB_FRAME_SLOTTED && frame_us < FSB_PULSE_CEILING_US + FSB_FRAME_GAP_US) {
        frame_us = frame_us < FSB_PULSE_FLOOR_US + FSB_FRAME_GAP_US
                       ? FSB_PULSE_FLOOR_US + FSB_FRAME_GAP_US
                       : frame_us;
        ceiling = (uint16_t)(frame_us - FSB_FRAME_GAP_US);
    }
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        frame_ticks = (uint16_t)(frame_us * TICKS_PER_US);
    }
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        uint16_t us = pulse_us[ch];
        if (us < FSB_PULSE_FLOOR_US) {
            us = FSB_PULSE_FLOOR_US;
        } else if (us > ceiling) {
            us = ceiling;
        }
        ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
        {
            width_ticks[ch] = (uint16_t)(us * TICKS_PER_US);
        }
    }
    enabled = enabled_mask;
}

uint16_t fsb_pulse_timer_elapsed_us(void)
{
    uint16_t now;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        now = TCNT1; /* 16-bit read through TEMP, which the handler also uses */
    }
    uint16_t ticks = (uint16_t)(now - last_tick + odd_tick);
    last_tick = now;
    odd_tick = (uint8_t)(ticks & 1u);
    return (uint16_t)(ticks / TICKS_PER_US);
}

/* Fast frame: drive the next fall group and every later one less than DUE_TICKS after the one
 * before, straight from the sorted groups: falls a microsecond apart leave the pins as close
 * together as this loop allows (the groups are in order, so no timer read decides that). */
static void fall_groups(void)
{
    const uint16_t *at = &sequencer.group_at[sequencer.slot];
    const uint16_t *end = &sequencer.group_at[sequencer.groups];
    const uint8_t *mask = &sequencer.group_mask[sequencer.slot];
    uint16_t tick = *at++;
    uint8_t keep = (uint8_t)~(uint8_t)(*mask++ << FIRST_PIN);
    for (;;) {
        while ((int16_t)(TCNT1 - tick) < 0) {
        }
        PORTD &= keep;
        if (at == end) {
            break;
        }
        uint16_t next = *at;
        if ((uint16_t)(next - tick) > DUE_TICKS) {
            break;
        }
        at++;
        tick = next;
        keep = (uint8_t)~(uint8_t)(*mask++ << FIRST_PIN);
    }
    fsb_sequencer_fell(&sequencer, (uint8_t)(at - sequencer.group_at));
}

ISR(TIMER1_COMPA_vect)
{
    if (sequencer.frame_ticks && !sequencer.starting &&
        fsb_sequencer_due(&sequencer, TCNT1, DUE_TICKS)) {
        fall_groups();
    }
    while (fsb_sequencer_due(&sequencer, TCNT1, DUE_TICKS)) {
        uint16_t at = sequencer.edge;
        uint8_t channels;
        fsb_edge_t edge = fsb_sequencer_next(&sequencer, enabled, frame_ticks, &channels);
        if (edge != FSB_EDGE_NONE) {
            uint8_t bits = (uint8_t)(channels << FIRST_PIN);
            uint8_t port =
                edge == FSB_EDGE_RISE ? (uint8_t)(PORTD | bits) : (uint8_t)(PORTD & ~bits);
            while ((int16_t)(TCNT1 - at) < 0) {
            }
            PORTD = port;
            if (edge == FSB_EDGE_RISE) {
                fsb_sequencer_latch(&sequencer, width_ticks);
            }
        }
    }
    OCR1A = (uint16_t)(sequencer.edge - LEAD_TICKS);
}

ISR(TIMER1_COMPB_vect)
{
    OCR1B = (uint16_t)(OCR1B + WAKE_TICKS);
}
