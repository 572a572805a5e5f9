/*
 * Command logic of the servo board (hardware/PROTOCOL.md v1), free of any hardware access.
 *
 * The firmware feeds it received bytes and elapsed time, and reads back which channels pulse
 * and how wide; replies leave through a write callback. The same file builds on the host,
 * where the unit tests and the fuzz harness drive it directly.
 *
 * Invariant (checked by the fuzz harness after every byte): every channel whose pulse is set
 * has its current, start and target pulse inside its limits, and its limits inside
 * FSB_PULSE_FLOOR_US..FSB_PULSE_CEILING_US; and a fast frame (frame_us != 0) is at most
 * FSB_FRAME_MAX_US and leaves FSB_FRAME_GAP_US after every channel's max_us.
 */
#ifndef FSB_BOARD_H
#define FSB_BOARD_H

#include <stdint.h>

#include "fsb_config.h"
#include "fsb_frame.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    FSB_CMD_PING = 0x01,
    FSB_CMD_SET_PULSES = 0x02,
    FSB_CMD_SET_LIMITS = 0x03,
    FSB_CMD_GET_POSITIONS = 0x04,
    FSB_CMD_ENABLE = 0x05,
    FSB_CMD_SET_TIMEOUT = 0x06,
    FSB_CMD_SET_FRAME = 0x07,
    FSB_REPLY_ACK = 0x80,
    FSB_REPLY_NACK = 0x81,
    FSB_REPLY_DATA = 0x82,
    FSB_REPLY_READY = 0x83
};

enum {
    FSB_ERR_BAD_CRC = 1,
    FSB_ERR_BAD_LENGTH = 2,
    FSB_ERR_UNKNOWN_CMD = 3,
    FSB_ERR_OUT_OF_RANGE = 4,
    FSB_ERR_BAD_CHANNEL = 5,
    FSB_ERR_NO_TARGET = 6
};

typedef enum { FSB_WATCHDOG_HOLD = 0, FSB_WATCHDOG_DETACH = 1 } fsb_watchdog_action_t;

typedef struct {
    uint16_t min_us;
    uint16_t max_us;
} fsb_limits_t;

/* Sends bytes to the host; the board calls it once per reply frame. */
typedef void (*fsb_write_fn)(void *context, const uint8_t *bytes, uint8_t length);

typedef struct {
    fsb_limits_t limits[FSB_CHANNELS];
    uint16_t current_us[FSB_CHANNELS]; /* pulse driven now; 0 = never set */
    uint16_t start_us[FSB_CHANNELS];   /* where the move in progress began */
    uint16_t target_us[FSB_CHANNELS];
    uint16_t move_ms;                  /* length of the move in progress */
    uint16_t move_elapsed_ms;          /* == move_ms once the move is over */
    uint16_t pending_us;               /* elapsed time not yet counted as a whole ms */
    uint8_t enabled_mask;
    uint16_t frame_us;                 /* FSB_FRAME_SLOTTED or the fast frame's period */
    uint16_t timeout_ms;               /* host-silence watchdog, 0 = off */
    uint8_t timeout_action;            /* fsb_watchdog_action_t */
    uint16_t silence_ms;               /* since the last valid frame, saturating */
    uint8_t watchdog_fired;            /* acted since the last valid frame */
    uint8_t limits_changed;            /* set on SET_LIMITS; the firmware persists and clears */
    fsb_receiver_t receiver;
    fsb_write_fn write;
    void *write_context;
} fsb_board_t;

/* Start in the reset state: all detached, no pulse set, watchdog off. limits holds
 * FSB_CHANNELS entries (as loaded from EEPROM), or is NULL for the defaults. */
void fsb_board_init(fsb_board_t *board, const fsb_limits_t *limits, fsb_write_fn write,
                    void *write_context);

/* Send the unsolicited READY frame (SEQ 0) that announces a reset. */
void fsb_board_send_ready(const fsb_board_t *board);

/* Take one byte from the host; replies to any frame it completes go out at once. */
void fsb_board_feed(fsb_board_t *board, uint8_t byte);

/* Let time pass: advances moves and the watchdog. */
void fsb_board_advance(fsb_board_t *board, uint16_t elapsed_us);

#ifdef __cplusplus
}
#endif

#endif
