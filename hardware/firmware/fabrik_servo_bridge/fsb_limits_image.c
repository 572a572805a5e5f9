#include "fsb_limits_image.h"

#include "fsb_crc16.h"

#define MAGIC0 'F'
#define MAGIC1 'L'
#define LAYOUT_VERSION 1u
#define CRC_OFFSET (FSB_LIMITS_IMAGE_SIZE - 2u)

void fsb_limits_image_encode(const fsb_limits_t *limits, uint8_t *image)
{
    image[0] = MAGIC0;
    image[1] = MAGIC1;
    image[2] = LAYOUT_VERSION;
    image[3] = FSB_CHANNELS;
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        uint8_t *pair = image + 4 + 4 * ch;
        pair[0] = (uint8_t)(limits[ch].min_us & 0xFFu);
        pair[1] = (uint8_t)(limits[ch].min_us >> 8);
        pair[2] = (uint8_t)(limits[ch].max_us & 0xFFu);
        pair[3] = (uint8_t)(limits[ch].max_us >> 8);
    }
    uint16_t crc = fsb_crc16(image, CRC_OFFSET);
    image[CRC_OFFSET] = (uint8_t)(crc & 0xFFu);
    image[CRC_OFFSET + 1] = (uint8_t)(crc >> 8);
}

int fsb_limits_image_decode(const uint8_t *image, fsb_limits_t *limits)
{
    uint16_t crc = (uint16_t)(image[CRC_OFFSET] | (image[CRC_OFFSET + 1] << 8));
    if (image[0] != MAGIC0 || image[1] != MAGIC1 || image[2] != LAYOUT_VERSION ||
        image[3] != FSB_CHANNELS || crc != fsb_crc16(image, CRC_OFFSET)) {
        return 0;
    }
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        const uint8_t *pair = image + 4 + 4 * ch;
        limits[ch].min_us = (uint16_t)(pair[0] | (pair[1] << 8));
        limits[ch].max_us = (uint16_t)(pair[2] | (pair[3] << 8));
    }
    return 1;
}
