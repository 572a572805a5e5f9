#include "fsb_frame.h"

#include <string.h>

#include "fsb_crc16.h"

void fsb_receiver_init(fsb_receiver_t *rx)
{
    rx->count = 0;
    rx->consumed = 0;
}

static void drop(fsb_receiver_t *rx, uint8_t n)
{
    if (n >= rx->count) {
        rx->count = 0;
        return;
    }
    rx->count = (uint8_t)(rx->count - n);
    memmove(rx->buffer, rx->buffer + n, rx->count);
}

static void drop_consumed(fsb_receiver_t *rx)
{
    if (rx->consumed) {
        drop(rx, rx->consumed);
        rx->consumed = 0;
    }
}

void fsb_receiver_push(fsb_receiver_t *rx, uint8_t byte)
{
    drop_consumed(rx);
    /* fsb_receiver_next() leaves at most one incomplete candidate (< FSB_MAX_FRAME bytes), so
     * this only overflows if the caller skipped it; then the oldest byte goes, never memory. */
    if (rx->count >= FSB_MAX_FRAME) {
        drop(rx, 1);
    }
    rx->buffer[rx->count++] = byte;
}

static uint16_t frame_crc(const uint8_t *frame, uint8_t length)
{
    /* The CRC covers LEN SEQ CMD payload: everything after the sync pair. */
    return fsb_crc16(frame + 2, (uint8_t)(3u + length));
}

fsb_rx_kind_t fsb_receiver_next(fsb_receiver_t *rx, fsb_frame_t *frame)
{
    drop_consumed(rx);
    for (;;) {
        const uint8_t *b = rx->buffer;
        if (rx->count == 0) {
            return FSB_RX_NONE;
        }
        if (b[0] != FSB_SYNC0) {
            drop(rx, 1);
            continue;
        }
        if (rx->count < 2) {
            return FSB_RX_NONE;
        }
        if (b[1] != FSB_SYNC1 || (rx->count >= 3 && b[2] > FSB_MAX_PAYLOAD)) {
            drop(rx, 1);
            continue;
        }
        if (rx->count < FSB_HEADER_SIZE || rx->count < FSB_HEADER_SIZE + b[2] + FSB_CRC_SIZE) {
            return FSB_RX_NONE;
        }
        uint8_t length = b[2];
        uint16_t received = (uint16_t)(b[FSB_HEADER_SIZE + length] |
                                       (b[FSB_HEADER_SIZE + length + 1] << 8));
        frame->seq = b[3];
        frame->cmd = b[4];
        if (received != frame_crc(b, length)) {
            frame->length = 0;
            frame->payload = b + FSB_HEADER_SIZE;
            drop(rx, 1);
            return FSB_RX_BAD_CRC;
        }
        frame->length = length;
        frame->payload = b + FSB_HEADER_SIZE;
        rx->consumed = (uint8_t)(FSB_HEADER_SIZE + length + FSB_CRC_SIZE);
        return FSB_RX_FRAME;
    }
}

uint8_t fsb_frame_encode(uint8_t *out, uint8_t seq, uint8_t cmd, const uint8_t *payload,
                         uint8_t length)
{
    if (length > FSB_MAX_PAYLOAD) {
        return 0;
    }
    out[0] = FSB_SYNC0;
    out[1] = FSB_SYNC1;
    out[2] = length;
    out[3] = seq;
    out[4] = cmd;
    if (length) {
        memmove(out + FSB_HEADER_SIZE, payload, length);
    }
    uint16_t crc = frame_crc(out, length);
    out[FSB_HEADER_SIZE + length] = (uint8_t)(crc & 0xFFu);
    out[FSB_HEADER_SIZE + length + 1] = (uint8_t)(crc >> 8);
    return (uint8_t)(FSB_HEADER_SIZE + length + FSB_CRC_SIZE);
}
