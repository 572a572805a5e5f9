/*
 * Servo pulses on PD2..PD7 (Uno digital pins 2..7 = channels 0..5) from Timer1 (AVR only).
 *
 * Timer1 runs free at 2 MHz (0.5 us ticks). By default a 20 ms frame is cut into one 3 ms
 * slot per channel; a channel's pulse starts at the start of its slot, so each channel repeats
 * at exactly 50 Hz whatever the others do, and the servos' current peaks are staggered. A fast
 * frame (SET_FRAME) starts every enabled channel's pulse at once and repeats at its own
 * period (fsb_sequencer.h).
 */
#ifndef FSB_PULSE_TIMER_H
#define FSB_PULSE_TIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Make the pins outputs driven low and start the frame clock; no pulses yet. */
void fsb_pulse_timer_init(void);

/* Set the channels that pulse, their widths [us] and the frame (FSB_FRAME_SLOTTED or a fast
 * frame's period [us]); each takes effect at its next slot or frame start, so a pulse is never
 * cut short or stretched mid-way. */
void fsb_pulse_timer_set(uint8_t enabled_mask, const uint16_t *pulse_us, uint16_t frame_us);

/* Microseconds since the previous call. The timer wakes the main loop every millisecond, so
 * calls are never 32 ms (a timer wrap) apart. */
uint16_t fsb_pulse_timer_elapsed_us(void);

#ifdef __cplusplus
}
#endif

#endif
