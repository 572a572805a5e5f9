#include "fsb_crc16.h"

uint16_t fsb_crc16_update(uint16_t crc, uint8_t byte)
{
    /* Byte-at-a-time form of the 0x1021 shift register, no table (flash is scarce):
     *   x = (crc >> 8) ^ byte;  x ^= x >> 4;
     *   crc = (crc << 8) ^ (x << 12) ^ (x << 5) ^ x
     * written with 8-bit halves, because the AVR shifts a 16-bit value one bit per step:
     * this way a byte costs a few dozen cycles instead of a hundred or more, which is time
     * between a command's last byte and its pulses (a slot can start in that time). */
    uint8_t x = (uint8_t)((crc >> 8) ^ byte);
    x ^= (uint8_t)(x >> 4);
    uint8_t high = (uint8_t)((uint8_t)crc ^ (uint8_t)(x << 4) ^ (uint8_t)(x >> 3));
    uint8_t low = (uint8_t)((uint8_t)(x << 5) ^ x);
    return (uint16_t)(((uint16_t)high << 8) | low);
}

uint16_t fsb_crc16(const uint8_t *data, uint8_t length)
{
    uint16_t crc = FSB_CRC16_INIT;
    for (uint8_t i = 0; i < length; i++) {
        crc = fsb_crc16_update(crc, data[i]);
    }
    return crc;
}
