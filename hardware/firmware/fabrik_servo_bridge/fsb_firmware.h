/* The firmware's top level: boot, then one main-loop pass per call (AVR only). */
#ifndef FSB_FIRMWARE_H
#define FSB_FIRMWARE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bring up the UART, the pulse timer and the board state (limits from EEPROM), then send
 * READY. No pin pulses until the host enables a channel. */
void fsb_firmware_setup(void);

/* Handle received bytes, let time pass, update the pulses, store limits; then sleep until
 * the next interrupt. */
void fsb_firmware_poll(void);

#ifdef __cplusplus
}
#endif

#endif
