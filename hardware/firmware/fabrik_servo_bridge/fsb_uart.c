#include "fsb_uart.h"

#include <avr/interrupt.h>
#include <avr/io.h>

/* 16 MHz / (8 * (16 + 1)) = 117647 baud, 2.1 % fast: the divisor the Arduino core picks for
 * 115200 too, which the Uno's USB-serial chip accepts. */
#define UBRR_115200_U2X 16u

/* Powers of two so the indices wrap with a mask; one reply frame (71 bytes) fits the TX ring. */
#define RX_SIZE 128u
#define TX_SIZE 128u

static volatile uint8_t rx_ring[RX_SIZE];
static volatile uint8_t rx_head; /* written by the ISR */
static volatile uint8_t rx_tail; /* written by the main loop */
static volatile uint8_t tx_ring[TX_SIZE];
static volatile uint8_t tx_head;
static volatile uint8_t tx_tail;

void fsb_uart_init(void)
{
    UBRR0H = 0;
    UBRR0L = UBRR_115200_U2X;
    UCSR0A = _BV(U2X0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);
}

ISR(USART_RX_vect)
{
    uint8_t byte = UDR0;
    uint8_t next = (uint8_t)((rx_head + 1u) & (RX_SIZE - 1u));
    if (next != rx_tail) { /* a full ring drops the new byte: garbage only costs bytes */
        rx_ring[rx_head] = byte;
        rx_head = next;
    }
}

ISR(USART_UDRE_vect)
{
    if (tx_head == tx_tail) {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = tx_ring[tx_tail];
    tx_tail = (uint8_t)((tx_tail + 1u) & (TX_SIZE - 1u));
}

uint8_t fsb_uart_read(uint8_t *byte)
{
    if (rx_head == rx_tail) {
        return 0;
    }
    *byte = rx_ring[rx_tail];
    rx_tail = (uint8_t)((rx_tail + 1u) & (RX_SIZE - 1u));
    return 1;
}

uint8_t fsb_uart_pending(void)
{
    return rx_head != rx_tail;
}

void fsb_uart_write(void *context, const uint8_t *bytes, uint8_t length)
{
    (void)context;
    for (uint8_t i = 0; i < length; i++) {
        uint8_t next = (uint8_t)((tx_head + 1u) & (TX_SIZE - 1u));
        while (next == tx_tail) {
            /* The UDRE interrupt drains the ring; interrupts are on in the main loop. */
        }
        tx_ring[tx_head] = bytes[i];
        tx_head = next;
        UCSR0B |= _BV(UDRIE0);
    }
}
