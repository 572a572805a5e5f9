/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR). */
#ifndef FSB_CRC16_H
#define FSB_CRC16_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FSB_CRC16_INIT 0xFFFFu

/* Fold one byte into a running CRC; start from FSB_CRC16_INIT. */
uint16_t fsb_crc16_update(uint16_t crc, uint8_t byte);

/* CRC of a whole buffer. */
uint16_t fsb_crc16(const uint8_t *data, uint8_t length);

#ifdef __cplusplus
}
#endif

#endif
