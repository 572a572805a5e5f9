/* Channel limits kept in EEPROM (AVR only); see fsb_limits_image.h for the image format. */
#ifndef FSB_EEPROM_H
#define FSB_EEPROM_H

#include <stdint.h>

#include "fsb_board.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read the stored limits into limits; return 1 if they were intact, else 0. */
uint8_t fsb_eeprom_load(fsb_limits_t *limits);

/* Schedule limits to be stored; fsb_eeprom_service() writes them out. */
void fsb_eeprom_store(const fsb_limits_t *limits);

/* Write at most one changed byte, and only if the EEPROM is idle: a byte takes 3.4 ms to
 * program, and the main loop must not stall that long while the host talks. */
void fsb_eeprom_service(void);

#ifdef __cplusplus
}
#endif

#endif
