/*
 * Board-wide constants of the fabrik servo bridge (hardware/PROTOCOL.md v1).
 *
 * Plain C, no AVR headers: the protocol core includes this on the host as well.
 */
#ifndef FSB_CONFIG_H
#define FSB_CONFIG_H

#define FSB_PROTOCOL_VERSION 1u
#define FSB_CHANNELS 6u
#define FSB_FIRMWARE_NAME "fabrik_servo_bridge"

/* Widest limits SET_LIMITS accepts, and the limits every channel has after a reset. */
#define FSB_PULSE_FLOOR_US 400u
#define FSB_PULSE_CEILING_US 2600u
#define FSB_DEFAULT_MIN_US 500u
#define FSB_DEFAULT_MAX_US 2500u

/* SET_FRAME: 0 = the slotted 20 ms frame (the default after reset); otherwise every enabled
 * channel rises at once every period_us. The period must leave FSB_FRAME_GAP_US low after the
 * longest pulse any channel's limits allow, and be at most FSB_FRAME_MAX_US. */
#define FSB_FRAME_SLOTTED 0u
#define FSB_FRAME_GAP_US 300u
#define FSB_FRAME_MAX_US 20000u

#endif
