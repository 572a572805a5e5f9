#include "fsb_crc16.h"

uint16_t fsb_crc16_update(uint16_t crc, uint8_t byte)
{
    /* Byte-at-a-time form of the 0x1021 shift register: no table (flash is scarce) and a
     * few dozen AVR cycles per byte, so re-checking a 71-byte candidate after a resync
     * costs well under one byte time at 115200 baud. */
    uint8_t x = (uint8_t)((crc >> 8) ^ byte);
    x ^= (uint8_t)(x >> 4);
    return (uint16_t)((crc << 8) ^ ((uint16_t)x << 12) ^ ((uint16_t)x << 5) ^ x);
}

uint16_t fsb_crc16(const uint8_t *data, uint8_t length)
{
    uint16_t crc = FSB_CRC16_INIT;
    for (uint8_t i = 0; i < length; i++) {
        crc = fsb_crc16_update(crc, data[i]);
    }
    return crc;
}
