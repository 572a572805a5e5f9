/*
 * fabrik_servo_sim: run the fabrik_servo_bridge firmware on a simulated ATmega328P (simavr)
 * and measure what a servo would see.
 *
 *   fabrik_servo_sim [--log PATH] [--duration-ms N] [--speed X] [--eeprom PATH]
 *                    [--pty-link PATH] FIRMWARE.elf
 *
 * UART0 appears on a pseudo-terminal (simavr's uart_pty part): the first line on stdout is
 * "pty /dev/pts/N", and a host opens that path at 115200 baud exactly as it would a real Uno.
 * --pty-link also makes a symlink to it.
 *
 * The log (stdout unless --log) has one event per line, times in CPU cycles at 16 MHz:
 *   # fabrik_servo_sim 1 f_cpu=16000000 channels=6 pins=PD2..PD7
 *   pulse CH RISE FALL   channel CH's pin went high at cycle RISE and low at FALL
 *   rx CYCLE XX NS       byte XX (hex) entered the AVR's UART from the host, NS = the host's
 *                        CLOCK_MONOTONIC [ns] when the simulation took it
 *   tx CYCLE XX          the firmware sent byte XX to the host
 *   tick CYCLE MASK NS   every 10 ms of simulated time; MASK = pins high now (bit = channel),
 *                        NS = CLOCK_MONOTONIC [ns] then (how simulated time tracks the host's)
 *   reset CYCLE          the AVR was reset (SIGUSR1), like a DTR pulse on a real Uno
 *   end CYCLE REASON     the run is over (duration, signal, crashed)
 *
 * The line runs at the speed the UART registers give a real ATmega328P (8N1: 10 bits a byte):
 * simavr 1.6 computes a byte's time only when UBRR is written, so it misses U2X set after
 * UBRR (the firmware's order, the Arduino core's too) and runs the line at half speed, and it
 * always counts a parity bit; keep_line_timing() corrects both.
 *
 * Time runs at --speed times real time (default 1, so a host's timeouts mean what they say;
 * 0 = as fast as the host CPU allows). --duration-ms bounds the simulated time. SIGTERM or
 * SIGINT end the run cleanly; --eeprom loads the EEPROM from a file (if present) at start and
 * writes it back at the end, so stored limits survive a restart.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "avr_eeprom.h"
#include "avr_extint.h"
#include "avr_ioport.h"
#include "avr_uart.h"
#include "parts/uart_pty.h"
#include "sim_avr.h"
#include "sim_elf.h"

#define MCU "atmega328p"
#define F_CPU 16000000u
#define CHANNELS 6
#define FIRST_PIN 2 /* PD2 */
#define EEPROM_SIZE 1024u
#define CYCLES_PER_MS (F_CPU / 1000u)
#define TICK_CYCLES (10u * CYCLES_PER_MS)
/* Real-time pacing sleeps only when simulated time is this far ahead of the wall clock. */
#define PACE_SLACK_NS 1000000LL

typedef struct {
    const char *elf;
    const char *log_path;
    const char *eeprom_path;
    const char *pty_link;
    uint64_t duration_ms; /* 0 = until a signal */
    double speed;         /* simulated seconds per real second; 0 = unpaced */
} options_t;

typedef struct {
    uint8_t high;
    uint8_t rise_known; /* a reset while high loses the rise: that pulse is not reported */
    avr_cycle_count_t rise;
} pin_t;

static avr_t *avr;
static FILE *log_file;
static pin_t pins[CHANNELS];
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t reset_requested;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static void on_reset(int sig)
{
    (void)sig;
    reset_requested = 1;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--log PATH] [--duration-ms N] [--speed X] [--eeprom PATH]\n"
            "       [--pty-link PATH] FIRMWARE.elf\n",
            argv0);
    exit(2);
}

static void parse_options(int argc, char **argv, options_t *opt)
{
    static const struct option longopts[] = {
        {"log", required_argument, 0, 'l'},      {"duration-ms", required_argument, 0, 'd'},
        {"speed", required_argument, 0, 's'},    {"eeprom", required_argument, 0, 'e'},
        {"pty-link", required_argument, 0, 'p'}, {0, 0, 0, 0}};
    memset(opt, 0, sizeof(*opt));
    opt->speed = 1.0;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'l': opt->log_path = optarg; break;
        case 'e': opt->eeprom_path = optarg; break;
        case 'p': opt->pty_link = optarg; break;
        case 'd':
            opt->duration_ms = strtoull(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0') {
                fprintf(stderr, "--duration-ms = %s, must be a whole number of ms\n", optarg);
                exit(2);
            }
            break;
        case 's':
            opt->speed = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || opt->speed < 0) {
                fprintf(stderr, "--speed = %s, must be a number >= 0\n", optarg);
                exit(2);
            }
            break;
        default: usage(argv[0]);
        }
    }
    if (optind != argc - 1) {
        usage(argv[0]);
    }
    opt->elf = argv[optind];
}

/* simavr logs through printf to stdout; stdout carries only the pty line here. */
static void log_to_stderr(avr_t *unused, const int level, const char *format, va_list args)
{
    (void)unused;
    if (level <= LOG_WARNING) {
        vfprintf(stderr, format, args);
    }
}

static void on_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    int ch = (int)(intptr_t)param;
    uint8_t high = (uint8_t)(value & 1u);
    pin_t *pin = &pins[ch];
    if (high == pin->high) {
        return;
    }
    pin->high = high;
    if (high) {
        pin->rise = avr->cycle;
        pin->rise_known = 1;
    } else if (pin->rise_known) {
        fprintf(log_file, "pulse %d %llu %llu\n", ch, (unsigned long long)pin->rise,
                (unsigned long long)avr->cycle);
    }
}

static void on_uart_tx(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    fprintf(log_file, "tx %llu %02x\n", (unsigned long long)avr->cycle, value & 0xFFu);
}

static int64_t now_ns(void);

static void on_uart_rx(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    fprintf(log_file, "rx %llu %02x %lld\n", (unsigned long long)avr->cycle, value & 0xFFu,
            (long long)now_ns());
}

/* The CPU sleeps between interrupts; skip that time at once and let pace() keep the clock. */
static void sleep_none(avr_t *unused, avr_cycle_count_t cycles)
{
    (void)unused;
    (void)cycles;
}

static void load_firmware(const char *path)
{
    elf_firmware_t firmware;
    memset(&firmware, 0, sizeof(firmware));
    if (elf_read_firmware(path, &firmware) != 0) {
        fprintf(stderr, "cannot read firmware %s\n", path);
        exit(1);
    }
    snprintf(firmware.mmcu, sizeof(firmware.mmcu), "%s", MCU);
    firmware.frequency = F_CPU;
    avr = avr_make_mcu_by_name(MCU);
    if (!avr || avr_init(avr) != 0) {
        fprintf(stderr, "simavr has no %s\n", MCU);
        exit(1);
    }
    avr->log = LOG_WARNING;
    avr->sleep = sleep_none;
    /* INT0/INT1 share PD2/PD3 with channels 0 and 1. simavr polls a level-triggered external
     * interrupt pin every cycle while it is low, enabled or not, which would make the
     * simulation crawl; the firmware uses neither interrupt. */
    avr_extint_set_strict_lvl_trig(avr, 0, 0);
    avr_extint_set_strict_lvl_trig(avr, 1, 0);
    avr_load_firmware(avr, &firmware);
}

static void load_eeprom(const char *path)
{
    static uint8_t image[EEPROM_SIZE];
    FILE *f = fopen(path, "rb");
    if (!f) {
        return; /* first run: the EEPROM starts erased (0xFF) */
    }
    size_t size = fread(image, 1, sizeof(image), f);
    fclose(f);
    avr_eeprom_desc_t desc = {.ee = image, .offset = 0, .size = (uint32_t)size};
    avr_ioctl(avr, AVR_IOCTL_EEPROM_SET, &desc);
}

static void save_eeprom(const char *path)
{
    /* simavr's EEPROM ioctl answers -1 even when it succeeds: judge by the pointer. */
    avr_eeprom_desc_t desc = {.ee = NULL, .offset = 0, .size = EEPROM_SIZE};
    avr_ioctl(avr, AVR_IOCTL_EEPROM_GET, &desc);
    if (!desc.ee) {
        fprintf(stderr, "cannot read the simulated EEPROM\n");
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(desc.ee, 1, EEPROM_SIZE, f) != EEPROM_SIZE) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    }
    if (f) {
        fclose(f);
    }
}

static void connect_pins(void)
{
    for (int ch = 0; ch < CHANNELS; ch++) {
        avr_irq_t *irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('D'), FIRST_PIN + ch);
        avr_irq_register_notify(irq, on_pin, (void *)(intptr_t)ch);
    }
}

/* Put UART0 on a pty; return its slave path. uart_pty chats on stdout, so that goes to
 * stderr meanwhile, and the /tmp/simavr-uart0 link it makes is removed again (several
 * harnesses may run at once; --pty-link names a link of our own). */
static const char *connect_uart(uart_pty_t *pty, const char *link)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    uart_pty_init(avr, pty);
    uart_pty_connect(pty, '0');
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);

    char target[sizeof(pty->pty.slavename)];
    ssize_t n = readlink("/tmp/simavr-uart0", target, sizeof(target) - 1);
    if (n > 0) {
        target[n] = '\0';
        if (strcmp(target, pty->pty.slavename) == 0) {
            unlink("/tmp/simavr-uart0");
        }
    }
    if (link) {
        unlink(link);
        if (symlink(pty->pty.slavename, link) != 0) {
            fprintf(stderr, "cannot link %s -> %s: %s\n", link, pty->pty.slavename,
                    strerror(errno));
            exit(1);
        }
    }
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            on_uart_tx, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT),
                            on_uart_rx, NULL);
    return pty->pty.slavename;
}

static avr_uart_t *find_uart0(void)
{
    for (avr_io_t *io = avr->io_port; io; io = io->next) {
        if (io->kind && strcmp(io->kind, "uart") == 0 && ((avr_uart_t *)io)->name == '0') {
            return (avr_uart_t *)io;
        }
    }
    fprintf(stderr, "simavr's %s has no UART0\n", MCU);
    exit(1);
}

/* Set UART0's byte time from its registers as the real chip clocks it (see the top). */
static void keep_line_timing(avr_uart_t *uart)
{
    uint32_t ubrr = avr_regbit_get(avr, uart->ubrrl) | (avr_regbit_get(avr, uart->ubrrh) << 8);
    uint32_t cycles_per_bit = (avr_regbit_get(avr, uart->u2x) ? 8u : 16u) * (ubrr + 1u);
    uint8_t ucsrc = avr->data[uart->r_ucsrc];
    uint32_t data_bits = 5u + avr_regbit_get(avr, uart->ucsz);
    uint32_t parity_bits = (ucsrc & 0x30u) ? 1u : 0u; /* UPM01:0 */
    uint32_t bits = 1u + data_bits + parity_bits + 1u + avr_regbit_get(avr, uart->usbs);
    uart->cycles_per_byte = (avr_cycle_count_t)(cycles_per_bit * bits);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Hold simulated time to speed x the wall clock since start_ns. */
static void pace(double speed, int64_t start_ns)
{
    if (speed <= 0) {
        return;
    }
    int64_t sim_ns = (int64_t)((double)avr->cycle * (1e9 / F_CPU) / speed);
    int64_t ahead = start_ns + sim_ns - now_ns();
    if (ahead > PACE_SLACK_NS) {
        fflush(log_file);
        struct timespec ts = {ahead / 1000000000LL, ahead % 1000000000LL};
        nanosleep(&ts, NULL);
    }
}

static void reset_avr(void)
{
    avr_reset(avr);
    for (int ch = 0; ch < CHANNELS; ch++) {
        pins[ch].high = 0;
        pins[ch].rise_known = 0;
    }
    fprintf(log_file, "reset %llu\n", (unsigned long long)avr->cycle);
}

static uint8_t high_mask(void)
{
    uint8_t mask = 0;
    for (int ch = 0; ch < CHANNELS; ch++) {
        mask |= (uint8_t)(pins[ch].high << ch);
    }
    return mask;
}

static const char *run(const options_t *opt)
{
    avr_cycle_count_t end = opt->duration_ms ? opt->duration_ms * CYCLES_PER_MS : 0;
    avr_cycle_count_t next_tick = TICK_CYCLES;
    avr_cycle_count_t next_check = CYCLES_PER_MS;
    avr_uart_t *uart = find_uart0();
    int64_t start_ns = now_ns();
    for (;;) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            return state == cpu_Done ? "done" : "crashed";
        }
        if (avr->cycle < next_check) {
            continue;
        }
        next_check = avr->cycle + CYCLES_PER_MS;
        keep_line_timing(uart);
        if (avr->cycle >= next_tick) {
            fprintf(log_file, "tick %llu %u %lld\n", (unsigned long long)avr->cycle,
                    high_mask(), (long long)now_ns());
            fflush(log_file);
            next_tick += TICK_CYCLES;
        }
        if (stop_signal) {
            return "signal";
        }
        if (end && avr->cycle >= end) {
            return "duration";
        }
        if (reset_requested) {
            reset_requested = 0;
            reset_avr();
        }
        pace(opt->speed, start_ns);
    }
}

int main(int argc, char **argv)
{
    options_t opt;
    parse_options(argc, argv, &opt);
    avr_global_logger_set(log_to_stderr);
    log_file = stdout;
    if (opt.log_path && !(log_file = fopen(opt.log_path, "w"))) {
        fprintf(stderr, "cannot write %s: %s\n", opt.log_path, strerror(errno));
        return 1;
    }
    load_firmware(opt.elf);
    if (opt.eeprom_path) {
        load_eeprom(opt.eeprom_path);
    }
    connect_pins();
    static uart_pty_t pty;
    const char *pty_path = connect_uart(&pty, opt.pty_link);

    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    signal(SIGUSR1, on_reset);
    printf("pty %s\n", pty_path);
    fflush(stdout);
    fprintf(log_file, "# fabrik_servo_sim 1 f_cpu=%u channels=%d pins=PD2..PD7\n", F_CPU,
            CHANNELS);

    const char *reason = run(&opt);
    fprintf(log_file, "end %llu %s\n", (unsigned long long)avr->cycle, reason);
    fflush(log_file);
    if (opt.eeprom_path) {
        save_eeprom(opt.eeprom_path);
    }
    if (opt.pty_link) {
        unlink(opt.pty_link);
    }
    return strcmp(reason, "crashed") == 0 ? 1 : 0;
}
