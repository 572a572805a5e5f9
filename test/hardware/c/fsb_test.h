/*
 * Shared by the host-side C tests of the firmware core: a buffer that captures what the board
 * writes to the host.
 */
#ifndef FSB_TEST_H
#define FSB_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fsb_board.h"
#include "fsb_frame.h"

#define CAPTURE_SIZE 4096

typedef struct {
    uint8_t bytes[CAPTURE_SIZE];
    size_t length;
} capture_t;

static inline void capture_write(void *context, const uint8_t *bytes, uint8_t length)
{
    capture_t *capture = (capture_t *)context;
    if (capture->length + length <= CAPTURE_SIZE) {
        memcpy(capture->bytes + capture->length, bytes, length);
    }
    capture->length += length;
}

#endif
