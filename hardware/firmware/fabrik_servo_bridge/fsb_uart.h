/* USART0 at 115200 baud 8N1 with interrupt-driven receive and transmit rings (AVR only). */
#ifndef FSB_UART_H
#define FSB_UART_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void fsb_uart_init(void);

/* Take the oldest received byte into *byte; return 0 when none is waiting. */
uint8_t fsb_uart_read(uint8_t *byte);

/* True when received bytes wait; call with interrupts disabled before sleeping. */
uint8_t fsb_uart_pending(void);

/* Queue bytes for sending; waits for room when the ring is full. The context argument is
 * unused: the signature matches fsb_write_fn so the board can write straight to the line. */
void fsb_uart_write(void *context, const uint8_t *bytes, uint8_t length);

#ifdef __cplusplus
}
#endif

#endif
