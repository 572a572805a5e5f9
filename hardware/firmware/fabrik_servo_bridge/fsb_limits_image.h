/*
 * The EEPROM image of the channel limits: magic, layout version, channel count, the limits,
 * and a CRC-16 over all of it. A blank, foreign, half-written or corrupted image fails the
 * checks and the board falls back to the default limits.
 */
#ifndef FSB_LIMITS_IMAGE_H
#define FSB_LIMITS_IMAGE_H

#include <stdint.h>

#include "fsb_board.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FSB_LIMITS_IMAGE_SIZE (4u + 4u * FSB_CHANNELS + 2u)

/* Write the image of limits (FSB_CHANNELS entries) into image. */
void fsb_limits_image_encode(const fsb_limits_t *limits, uint8_t *image);

/* Read limits out of image; return 1 if the image is intact, else 0 (limits untouched). */
int fsb_limits_image_decode(const uint8_t *image, fsb_limits_t *limits);

#ifdef __cplusplus
}
#endif

#endif
