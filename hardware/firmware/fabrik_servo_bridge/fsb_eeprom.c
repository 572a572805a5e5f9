#include "fsb_eeprom.h"

#include <avr/eeprom.h>

#include "fsb_limits_image.h"

#define IMAGE_ADDRESS ((uint8_t *)0)

static uint8_t pending[FSB_LIMITS_IMAGE_SIZE];
static uint8_t dirty;

uint8_t fsb_eeprom_load(fsb_limits_t *limits)
{
    uint8_t image[FSB_LIMITS_IMAGE_SIZE];
    eeprom_read_block(image, IMAGE_ADDRESS, sizeof(image));
    return (uint8_t)fsb_limits_image_decode(image, limits);
}

void fsb_eeprom_store(const fsb_limits_t *limits)
{
    fsb_limits_image_encode(limits, pending);
    dirty = 1;
}

void fsb_eeprom_service(void)
{
    if (!dirty || !eeprom_is_ready()) {
        return;
    }
    for (uint8_t i = 0; i < FSB_LIMITS_IMAGE_SIZE; i++) {
        if (eeprom_read_byte(IMAGE_ADDRESS + i) != pending[i]) {
            eeprom_write_byte(IMAGE_ADDRESS + i, pending[i]);
            return;
        }
    }
    dirty = 0;
}
