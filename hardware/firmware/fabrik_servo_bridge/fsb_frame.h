/*
 * Frames of the board protocol (hardware/PROTOCOL.md, "Frame" and "Receiving").
 *
 * The receiver takes bytes one at a time and hands out complete frames. It never fails on
 * any input: garbage only costs the bytes it occupies, and a real frame hidden inside
 * garbage is still found because a failed candidate drops only its first sync byte.
 */
#ifndef FSB_FRAME_H
#define FSB_FRAME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FSB_SYNC0 0xA5u
#define FSB_SYNC1 0x5Au
#define FSB_MAX_PAYLOAD 64u
#define FSB_HEADER_SIZE 5u /* SYNC0 SYNC1 LEN SEQ CMD */
#define FSB_CRC_SIZE 2u
#define FSB_MAX_FRAME (FSB_HEADER_SIZE + FSB_MAX_PAYLOAD + FSB_CRC_SIZE)

typedef enum {
    FSB_RX_NONE = 0,    /* no complete candidate buffered yet */
    FSB_RX_FRAME = 1,   /* a frame whose CRC matched */
    FSB_RX_BAD_CRC = 2  /* a frame-shaped candidate whose CRC did not match */
} fsb_rx_kind_t;

typedef struct {
    uint8_t seq;
    uint8_t cmd;
    uint8_t length;
    const uint8_t *payload; /* valid until the next fsb_receiver_* call */
} fsb_frame_t;

typedef struct {
    uint8_t buffer[FSB_MAX_FRAME];
    uint8_t count;    /* bytes held in buffer */
    uint8_t consumed; /* bytes of the frame last handed out, dropped on the next call */
} fsb_receiver_t;

void fsb_receiver_init(fsb_receiver_t *rx);

/* Append one received byte. Call fsb_receiver_next() until it says FSB_RX_NONE after each. */
void fsb_receiver_push(fsb_receiver_t *rx, uint8_t byte);

/* Hand out the next complete frame or CRC failure held in the buffer (see fsb_rx_kind_t).
 * For FSB_RX_BAD_CRC only seq and cmd are meaningful (as received), the payload is empty. */
fsb_rx_kind_t fsb_receiver_next(fsb_receiver_t *rx, fsb_frame_t *frame);

/* Write the frame A5 5A LEN SEQ CMD payload CRC into out (room for FSB_MAX_FRAME bytes);
 * return its size, or 0 when length exceeds FSB_MAX_PAYLOAD. */
uint8_t fsb_frame_encode(uint8_t *out, uint8_t seq, uint8_t cmd, const uint8_t *payload,
                         uint8_t length);

#ifdef __cplusplus
}
#endif

#endif
