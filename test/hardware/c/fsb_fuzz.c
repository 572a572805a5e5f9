/*
 * Bounded random-bytes fuzz of the firmware's protocol core on the host.
 *
 *   fsb_fuzz [--seed N] [--rounds N]
 *
 * Each round starts a fresh board and feeds it a mix of pure noise, valid frames with random
 * fields, and valid frames with flipped bits, letting random amounts of time pass. After every
 * byte it checks the board's invariants: limits within 400..2600 and min < max, every set
 * channel's current, start and target pulse within its limits, no enable bit for a channel
 * that was never set or does not exist, a fast frame no longer than FSB_FRAME_MAX_US with
 * FSB_FRAME_GAP_US to spare after every channel's max_us, and every reply a well-formed frame. Run it under
 * AddressSanitizer/UBSan (the Makefile does) so a stray read or write fails the run too.
 */
#include <stdlib.h>

#include "fsb_test.h"

#define ALL_MASK ((uint8_t)((1u << FSB_CHANNELS) - 1u))

static uint64_t rng_state;

/* How often the interesting states were reached, so a test can tell the fuzz got there. */
static struct {
    uint32_t enabled;  /* steps that ended with a channel pulsing */
    uint32_t moving;   /* steps that ended with a move in progress */
    uint32_t limits;   /* accepted SET_LIMITS */
    uint32_t watchdog; /* steps that ended with the watchdog fired */
    uint32_t fast;     /* steps that ended in a fast frame */
} reached;

static uint32_t rng(void)
{
    /* xorshift64*: small, seeded, the same on every host. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

static uint32_t below(uint32_t n)
{
    return rng() % n;
}

static int inside(uint16_t pulse, fsb_limits_t limits)
{
    return limits.min_us <= pulse && pulse <= limits.max_us;
}

static int invariants_hold(const fsb_board_t *board)
{
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        fsb_limits_t limits = board->limits[ch];
        if (limits.min_us < FSB_PULSE_FLOOR_US || limits.max_us > FSB_PULSE_CEILING_US ||
            limits.min_us >= limits.max_us) {
            fprintf(stderr, "channel %u limits %u..%u\n", ch, limits.min_us, limits.max_us);
            return 0;
        }
        if (board->current_us[ch] == 0) {
            if (board->enabled_mask & (1u << ch)) {
                fprintf(stderr, "channel %u enabled without a pulse\n", ch);
                return 0;
            }
            continue;
        }
        if (!inside(board->current_us[ch], limits) || !inside(board->start_us[ch], limits) ||
            !inside(board->target_us[ch], limits)) {
            fprintf(stderr, "channel %u pulse %u (start %u target %u) outside %u..%u\n", ch,
                    board->current_us[ch], board->start_us[ch], board->target_us[ch],
                    limits.min_us, limits.max_us);
            return 0;
        }
    }
    for (uint8_t ch = 0; ch < FSB_CHANNELS && board->frame_us != FSB_FRAME_SLOTTED; ch++) {
        if (board->frame_us > FSB_FRAME_MAX_US ||
            board->limits[ch].max_us + FSB_FRAME_GAP_US > board->frame_us) {
            fprintf(stderr, "fast frame %u us, channel %u max %u us\n", board->frame_us, ch,
                    board->limits[ch].max_us);
            return 0;
        }
    }
    if (board->enabled_mask & (uint8_t)~ALL_MASK) {
        fprintf(stderr, "enable mask %02x names missing channels\n", board->enabled_mask);
        return 0;
    }
    return 1;
}

/* Every byte the board sent must parse as back-to-back frames with good CRCs. */
static int replies_well_formed(const capture_t *out)
{
    if (out->length > CAPTURE_SIZE) {
        return 1; /* overflowed the capture: checked on the next, shorter round */
    }
    fsb_receiver_t rx;
    fsb_frame_t frame;
    size_t framed = 0;
    fsb_receiver_init(&rx);
    for (size_t i = 0; i < out->length; i++) {
        fsb_receiver_push(&rx, out->bytes[i]);
        fsb_rx_kind_t kind = fsb_receiver_next(&rx, &frame);
        if (kind == FSB_RX_BAD_CRC) {
            return 0;
        }
        if (kind == FSB_RX_FRAME) {
            framed += (size_t)frame.length + FSB_HEADER_SIZE + FSB_CRC_SIZE;
        }
    }
    return framed == out->length;
}

/* Pulses and limits drawn mostly near the interesting edges. */
static uint16_t random_pulse(void)
{
    static const uint16_t edges[] = {0, 399, 400, 499, 500, 1500, 2500, 2501, 2600, 2601, 65535};
    switch (below(3)) {
    case 0: return (uint16_t)(700 + below(1600)); /* inside every limit the fuzz sets */
    case 1: return (uint16_t)(300 + below(2400));
    default: return edges[below(sizeof(edges) / sizeof(edges[0]))];
    }
}

static void put_u16(uint8_t *bytes, uint16_t value)
{
    bytes[0] = (uint8_t)(value & 0xFF);
    bytes[1] = (uint8_t)(value >> 8);
}

/* A command of the right shape whose values are mostly, not always, acceptable. */
static uint8_t plausible_payload(uint8_t cmd, uint8_t *payload)
{
    uint8_t count = (uint8_t)(1 + below(3));
    switch (cmd) {
    case FSB_CMD_SET_PULSES:
        put_u16(payload, (uint16_t)below(300));
        for (uint8_t i = 0; i < count; i++) {
            put_u16(payload + 2 + 2 * i, below(4) ? (uint16_t)(700 + below(1600))
                                                  : random_pulse());
        }
        return (uint8_t)(2 + 2 * count);
    case FSB_CMD_SET_LIMITS:
        for (uint8_t i = 0; i < 2 * count; i++) {
            put_u16(payload + 2 * i, random_pulse());
        }
        return (uint8_t)(4 * count);
    case FSB_CMD_ENABLE:
        payload[0] = (uint8_t)below(1u << FSB_CHANNELS);
        return 1;
    case FSB_CMD_SET_TIMEOUT:
        put_u16(payload, (uint16_t)below(100));
        payload[2] = (uint8_t)below(3);
        return 3;
    case FSB_CMD_SET_FRAME:
        /* Around the shortest frames the limits allow, and sometimes back to slotted. */
        put_u16(payload, below(4) ? (uint16_t)(2600 + below(400)) : random_pulse());
        return 2;
    default:
        return 0;
    }
}

static uint8_t random_frame(uint8_t *out)
{
    uint8_t payload[FSB_MAX_PAYLOAD];
    uint8_t cmd = below(8) ? (uint8_t)(1 + below(7)) : (uint8_t)rng();
    uint8_t length;
    if (below(2)) {
        length = plausible_payload(cmd, payload);
    } else {
        length = (uint8_t)below(FSB_MAX_PAYLOAD + 1);
        for (uint8_t i = 0; i + 1 < length; i += 2) {
            put_u16(payload + i, random_pulse());
        }
        payload[length ? length - 1 : 0] = (uint8_t)rng();
    }
    return fsb_frame_encode(out, (uint8_t)rng(), cmd, payload, length);
}

static int feed_checked(fsb_board_t *board, const uint8_t *bytes, size_t length, uint32_t round)
{
    for (size_t i = 0; i < length; i++) {
        fsb_board_feed(board, bytes[i]);
        if (!invariants_hold(board)) {
            fprintf(stderr, "round %u: invariant broken after byte %zu\n", round, i);
            return 0;
        }
    }
    return 1;
}

static int fuzz_round(uint32_t round)
{
    fsb_board_t board;
    capture_t out = {{0}, 0};
    fsb_board_init(&board, NULL, capture_write, &out);
    for (uint32_t step = 0; step < 60; step++) {
        uint8_t bytes[FSB_MAX_FRAME];
        uint8_t length;
        switch (below(4)) {
        case 0: /* noise, with sync bytes more common than chance */
            length = (uint8_t)(1 + below(FSB_MAX_FRAME - 1));
            for (uint8_t i = 0; i < length; i++) {
                uint32_t r = below(8);
                bytes[i] = r == 0 ? FSB_SYNC0 : r == 1 ? FSB_SYNC1 : (uint8_t)rng();
            }
            break;
        case 1: /* a valid frame with one bit flipped */
            length = random_frame(bytes);
            bytes[below(length)] ^= (uint8_t)(1u << below(8));
            break;
        default:
            length = random_frame(bytes);
            break;
        }
        if (!feed_checked(&board, bytes, length, round)) {
            return 0;
        }
        if (board.limits_changed) {
            board.limits_changed = 0;
            reached.limits++;
        }
        fsb_board_advance(&board, (uint16_t)below(30000));
        reached.enabled += board.enabled_mask != 0;
        reached.moving += board.move_elapsed_ms < board.move_ms;
        reached.watchdog += board.watchdog_fired;
        reached.fast += board.frame_us != FSB_FRAME_SLOTTED;
        if (!invariants_hold(&board)) {
            fprintf(stderr, "round %u: invariant broken by the passing of time\n", round);
            return 0;
        }
    }
    if (!replies_well_formed(&out)) {
        fprintf(stderr, "round %u: a reply is not a well-formed frame\n", round);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    uint32_t rounds = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seed") == 0) {
            seed = strtoull(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--rounds") == 0) {
            rounds = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [--seed N] [--rounds N]\n", argv[0]);
            return 2;
        }
    }
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (uint32_t round = 0; round < rounds; round++) {
        if (!fuzz_round(round)) {
            printf("FAILED seed=%llu round=%u\n", (unsigned long long)seed, round);
            return 1;
        }
    }
    printf("OK seed=%llu rounds=%u enabled=%u moving=%u limits=%u watchdog=%u fast=%u\n",
           (unsigned long long)seed, rounds, reached.enabled, reached.moving, reached.limits,
           reached.watchdog, reached.fast);
    return 0;
}
