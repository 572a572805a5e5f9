#include "fsb_firmware.h"

#include <avr/interrupt.h>
#include <avr/sleep.h>
#include <avr/wdt.h>

#include "fsb_board.h"
#include "fsb_eeprom.h"
#include "fsb_pulse_timer.h"
#include "fsb_uart.h"

static fsb_board_t board;

/* The board's reply callback. A reply leaves once its command has been applied, so the pulse
 * timer takes the new widths and enable bits here, before the reply is queued: a channel's
 * next slot uses them as soon as the command's last byte is processed, not after the rest of
 * the main-loop pass (which can miss a slot starting a few hundred microseconds later). */
static void apply_and_reply(void *context, const uint8_t *bytes, uint8_t length)
{
    const fsb_board_t *applied = (const fsb_board_t *)context;
    fsb_pulse_timer_set(applied->enabled_mask, applied->current_us, applied->frame_us);
    fsb_uart_write(0, bytes, length);
}

void fsb_firmware_setup(void)
{
    fsb_limits_t stored[FSB_CHANNELS];
    cli();
    /* After a watchdog reset the watchdog stays on; switch it off before anything slow. */
    MCUSR = 0;
    wdt_disable();
    fsb_uart_init();
    fsb_pulse_timer_init();
    fsb_board_init(&board, fsb_eeprom_load(stored) ? stored : 0, apply_and_reply, &board);
    set_sleep_mode(SLEEP_MODE_IDLE);
    /* A stuck main loop would leave the interrupt pulsing stale widths with no host watchdog
     * to stop it; the hardware watchdog resets the board instead (all detached, READY). Two
     * seconds outlast the wait of the old bootloaders, which leave the watchdog running. */
    wdt_enable(WDTO_2S);
    sei();
    fsb_board_send_ready(&board);
}

static void sleep_until_interrupt(void)
{
    cli();
    if (fsb_uart_pending()) {
        sei();
        return;
    }
    sleep_enable();
    sei(); /* the instruction after sei runs first, so no wake-up is lost in between */
    sleep_cpu();
    sleep_disable();
}

/* Bytes handled per main-loop pass: a flood of garbage, whose NACKs can outgrow the line
 * and stall on the transmit ring, still cannot starve time keeping and the watchdog. */
#define BYTES_PER_PASS 32u

void fsb_firmware_poll(void)
{
    uint8_t byte;
    for (uint8_t n = 0; n < BYTES_PER_PASS && fsb_uart_read(&byte); n++) {
        fsb_board_feed(&board, byte);
    }
    fsb_board_advance(&board, fsb_pulse_timer_elapsed_us());
    fsb_pulse_timer_set(board.enabled_mask, board.current_us, board.frame_us);
    if (board.limits_changed) {
        board.limits_changed = 0;
        fsb_eeprom_store(board.limits);
    }
    fsb_eeprom_service();
    wdt_reset();
    sleep_until_interrupt();
}
