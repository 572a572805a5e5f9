/*
 * Host-side unit tests of the firmware's protocol core (fsb_frame, fsb_board, fsb_limits_image)
 * and of the pulse sequencer's decisions (fsb_sequencer.h).
 *
 *   fsb_unit_tests [--protocol PATH/PROTOCOL.md] [--list] [TEST...]
 *
 * With no test names every test runs. --protocol gives the spec whose worked examples
 * the vector test checks byte for byte. Exit status 0 when every check passed.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdlib.h>

#include "fsb_crc16.h"
#include "fsb_limits_image.h"
#include "fsb_sequencer.h"
#include "fsb_test.h"

static void feed_bytes(fsb_board_t *board, const uint8_t *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        fsb_board_feed(board, bytes[i]);
    }
}

static int failures;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, \
                    #cond);                                                                \
        }                                                                                  \
    } while (0)

typedef struct {
    uint8_t seq;
    uint8_t cmd;
    uint8_t length;
    uint8_t payload[FSB_MAX_PAYLOAD];
} reply_t;

typedef struct {
    fsb_board_t board;
    capture_t out;
    size_t read; /* replies before this offset in out have been taken */
    uint8_t seq;
} bench_t;

static const char *protocol_path;

static void bench_init(bench_t *bench)
{
    memset(bench, 0, sizeof(*bench));
    fsb_board_init(&bench->board, NULL, capture_write, &bench->out);
}

/* Take the next reply frame the board wrote; return 0 if there is none. */
static int take_reply(bench_t *bench, reply_t *reply)
{
    fsb_receiver_t rx;
    fsb_frame_t frame;
    fsb_receiver_init(&rx);
    while (bench->read < bench->out.length) {
        fsb_receiver_push(&rx, bench->out.bytes[bench->read++]);
        if (fsb_receiver_next(&rx, &frame) == FSB_RX_FRAME) {
            reply->seq = frame.seq;
            reply->cmd = frame.cmd;
            reply->length = frame.length;
            memcpy(reply->payload, frame.payload, frame.length);
            return 1;
        }
    }
    return 0;
}

/* Send a request with the next sequence number; return the single reply it drew. */
static reply_t request(bench_t *bench, uint8_t cmd, const uint8_t *payload, uint8_t length)
{
    uint8_t frame[FSB_MAX_FRAME];
    reply_t reply = {0, 0, 0, {0}};
    uint8_t seq = ++bench->seq;
    feed_bytes(&bench->board, frame, fsb_frame_encode(frame, seq, cmd, payload, length));
    CHECK(take_reply(bench, &reply));
    CHECK(reply.seq == seq);
    reply_t extra;
    CHECK(!take_reply(bench, &extra));
    return reply;
}

static int is_ack(reply_t reply, uint8_t cmd)
{
    return reply.cmd == FSB_REPLY_ACK && reply.length == 1 && reply.payload[0] == cmd;
}

static int is_nack(reply_t reply, uint8_t cmd, uint8_t error)
{
    return reply.cmd == FSB_REPLY_NACK && reply.length == 2 && reply.payload[0] == cmd &&
           reply.payload[1] == error;
}

static reply_t set_pulses(bench_t *bench, uint16_t move_ms, const uint16_t *pulses,
                          uint8_t count)
{
    uint8_t payload[FSB_MAX_PAYLOAD];
    payload[0] = (uint8_t)(move_ms & 0xFF);
    payload[1] = (uint8_t)(move_ms >> 8);
    for (uint8_t i = 0; i < count; i++) {
        payload[2 + 2 * i] = (uint8_t)(pulses[i] & 0xFF);
        payload[3 + 2 * i] = (uint8_t)(pulses[i] >> 8);
    }
    return request(bench, FSB_CMD_SET_PULSES, payload, (uint8_t)(2 + 2 * count));
}

static reply_t set_limits(bench_t *bench, const uint16_t *pairs, uint8_t count)
{
    uint8_t payload[FSB_MAX_PAYLOAD];
    for (uint8_t i = 0; i < 2 * count; i++) {
        payload[2 * i] = (uint8_t)(pairs[i] & 0xFF);
        payload[2 * i + 1] = (uint8_t)(pairs[i] >> 8);
    }
    return request(bench, FSB_CMD_SET_LIMITS, payload, (uint8_t)(4 * count));
}

static reply_t enable(bench_t *bench, uint8_t mask)
{
    return request(bench, FSB_CMD_ENABLE, &mask, 1);
}

static reply_t set_timeout(bench_t *bench, uint16_t timeout_ms, uint8_t action)
{
    const uint8_t payload[3] = {(uint8_t)(timeout_ms & 0xFF), (uint8_t)(timeout_ms >> 8), action};
    return request(bench, FSB_CMD_SET_TIMEOUT, payload, 3);
}

static void advance_ms(bench_t *bench, unsigned ms)
{
    for (unsigned i = 0; i < ms; i++) {
        /* Uneven steps, as the firmware's main loop produces them. */
        fsb_board_advance(&bench->board, 400);
        fsb_board_advance(&bench->board, 600);
    }
}

/* Bit-at-a-time CRC straight from the definition, independent of the firmware's byte form. */
static uint16_t reference_crc(const uint8_t *data, size_t length)
{
    uint16_t crc = 0xFFFF;
    for (size_t i = 0; i < length; i++) {
        crc ^= (uint16_t)(data[i] << 8);
        for (int bit = 0; bit < 8; bit++) {
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
        }
    }
    return crc;
}

static void test_crc_matches_check_value_and_bitwise_definition(void)
{
    CHECK(fsb_crc16((const uint8_t *)"123456789", 9) == 0x29B1);
    uint8_t data[256];
    for (int i = 0; i < 256; i++) {
        data[i] = (uint8_t)(i * 37 + 11);
    }
    for (int length = 0; length <= 255; length += 17) {
        CHECK(fsb_crc16(data, (uint8_t)length) == reference_crc(data, (size_t)length));
    }
    /* The byte step (written in 8-bit halves for the AVR) against the shift register, for
     * every register value and every byte. */
    int mismatches = 0;
    for (uint32_t crc = 0; crc <= 0xFFFFu; crc++) {
        for (uint32_t byte = 0; byte <= 0xFFu; byte++) {
            uint32_t expected = crc ^ (byte << 8);
            for (int bit = 0; bit < 8; bit++) {
                expected = (expected & 0x8000u) ? (expected << 1) ^ 0x1021u : expected << 1;
            }
            expected &= 0xFFFFu;
            mismatches += fsb_crc16_update((uint16_t)crc, (uint8_t)byte) != expected;
        }
    }
    CHECK(mismatches == 0);
}

static void test_encoded_frame_has_sync_length_and_little_endian_crc(void)
{
    const uint8_t payload[2] = {0x34, 0x12};
    uint8_t frame[FSB_MAX_FRAME];
    CHECK(fsb_frame_encode(frame, 9, 0x05, payload, 2) == 9);
    CHECK(frame[0] == 0xA5 && frame[1] == 0x5A && frame[2] == 2 && frame[3] == 9);
    CHECK(frame[4] == 0x05 && frame[5] == 0x34 && frame[6] == 0x12);
    uint16_t crc = reference_crc(frame + 2, 5);
    CHECK(frame[7] == (crc & 0xFF) && frame[8] == (crc >> 8));
    uint8_t too_long[FSB_MAX_PAYLOAD + 1] = {0};
    CHECK(fsb_frame_encode(frame, 0, 1, too_long, sizeof(too_long)) == 0);
}

/* Push bytes into a receiver; record what it hands out as "F<seq>" / "C<seq>" tokens. */
static void receive(fsb_receiver_t *rx, const uint8_t *bytes, size_t length, char *log)
{
    fsb_frame_t frame;
    fsb_rx_kind_t kind;
    for (size_t i = 0; i < length; i++) {
        fsb_receiver_push(rx, bytes[i]);
        while ((kind = fsb_receiver_next(rx, &frame)) != FSB_RX_NONE) {
            sprintf(log + strlen(log), "%c%u ", kind == FSB_RX_FRAME ? 'F' : 'C', frame.seq);
        }
    }
}

static void test_receiver_finds_frames_among_garbage_and_split_reads(void)
{
    uint8_t stream[64];
    size_t n = 0;
    const uint8_t junk[] = {0x00, 0xA5, 0xA5, 0x13, 0x5A, 0xFF};
    memcpy(stream, junk, sizeof(junk));
    n += sizeof(junk);
    n += fsb_frame_encode(stream + n, 3, FSB_CMD_PING, NULL, 0);
    stream[n++] = 0xA5;
    n += fsb_frame_encode(stream + n, 4, FSB_CMD_PING, NULL, 0);
    fsb_receiver_t rx;
    fsb_receiver_init(&rx);
    char log[256] = "";
    receive(&rx, stream, n, log);
    CHECK(strcmp(log, "F3 F4 ") == 0);
}

static void test_receiver_skips_length_over_64_and_resyncs(void)
{
    uint8_t stream[32] = {0xA5, 0x5A, 65};
    size_t n = 3 + fsb_frame_encode(stream + 3, 8, FSB_CMD_PING, NULL, 0);
    fsb_receiver_t rx;
    fsb_receiver_init(&rx);
    char log[256] = "";
    receive(&rx, stream, n, log);
    CHECK(strcmp(log, "F8 ") == 0);
}

static void test_receiver_reports_bad_crc_then_finds_frame_hidden_inside(void)
{
    /* A bogus header claiming 9 payload bytes swallows a real 7-byte PING. */
    uint8_t stream[32] = {0xA5, 0x5A, 9, 0x77, 0x02};
    size_t n = 5 + fsb_frame_encode(stream + 5, 5, FSB_CMD_PING, NULL, 0);
    stream[n++] = 0x00;
    stream[n++] = 0x00;
    stream[n++] = 0x00;
    stream[n++] = 0x00;
    fsb_receiver_t rx;
    fsb_receiver_init(&rx);
    char log[256] = "";
    receive(&rx, stream, n, log);
    CHECK(strcmp(log, "C119 F5 ") == 0);
}

static int has_board_info(const uint8_t *data, uint8_t length)
{
    const char *name = FSB_FIRMWARE_NAME;
    return length == 2 + strlen(name) && data[0] == 1 && data[1] == FSB_CHANNELS &&
           memcmp(data + 2, name, strlen(name)) == 0;
}

static void test_ready_and_ping_report_version_channels_and_name(void)
{
    bench_t bench;
    bench_init(&bench);
    fsb_board_send_ready(&bench.board);
    reply_t ready;
    CHECK(take_reply(&bench, &ready));
    CHECK(ready.seq == 0 && ready.cmd == FSB_REPLY_READY);
    CHECK(has_board_info(ready.payload, ready.length));
    reply_t data = request(&bench, FSB_CMD_PING, NULL, 0);
    CHECK(data.cmd == FSB_REPLY_DATA && data.payload[0] == FSB_CMD_PING);
    CHECK(has_board_info(data.payload + 1, (uint8_t)(data.length - 1)));
    const uint8_t extra = 0;
    CHECK(is_nack(request(&bench, FSB_CMD_PING, &extra, 1), FSB_CMD_PING, FSB_ERR_BAD_LENGTH));
}

static void test_unset_channel_takes_its_first_target_at_once(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t pulses[2] = {1500, 0};
    CHECK(is_ack(set_pulses(&bench, 1000, pulses, 2), FSB_CMD_SET_PULSES));
    CHECK(bench.board.current_us[0] == 1500);
    CHECK(bench.board.current_us[1] == 0);
    CHECK(bench.board.enabled_mask == 0);
}

static void test_move_is_linear_over_move_ms(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t start[1] = {1000};
    const uint16_t end[1] = {2000};
    set_pulses(&bench, 0, start, 1);
    CHECK(is_ack(set_pulses(&bench, 500, end, 1), FSB_CMD_SET_PULSES));
    CHECK(bench.board.current_us[0] == 1000);
    advance_ms(&bench, 100);
    CHECK(bench.board.current_us[0] == 1200);
    advance_ms(&bench, 250);
    CHECK(bench.board.current_us[0] == 1700);
    advance_ms(&bench, 150);
    CHECK(bench.board.current_us[0] == 2000);
    advance_ms(&bench, 100);
    CHECK(bench.board.current_us[0] == 2000);
}

static void test_new_move_starts_where_the_old_one_got_to(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t start[2] = {1000, 1000};
    const uint16_t first[2] = {2000, 2000};
    const uint16_t second[2] = {1000, 0};
    set_pulses(&bench, 0, start, 2);
    set_pulses(&bench, 1000, first, 2);
    advance_ms(&bench, 500);
    CHECK(bench.board.current_us[0] == 1500 && bench.board.current_us[1] == 1500);
    CHECK(is_ack(set_pulses(&bench, 100, second, 2), FSB_CMD_SET_PULSES));
    advance_ms(&bench, 50);
    /* Channel 0 turns back; channel 1 keeps its target, now on the new move's clock. */
    CHECK(bench.board.current_us[0] == 1250);
    CHECK(bench.board.current_us[1] == 1750);
    advance_ms(&bench, 50);
    CHECK(bench.board.current_us[0] == 1000 && bench.board.current_us[1] == 2000);
}

static void test_out_of_range_pulse_changes_no_channel(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t start[2] = {1000, 1000};
    const uint16_t bad[2] = {1200, 2501};
    const uint16_t low[1] = {499};
    set_pulses(&bench, 0, start, 2);
    CHECK(is_nack(set_pulses(&bench, 0, bad, 2), FSB_CMD_SET_PULSES, FSB_ERR_OUT_OF_RANGE));
    CHECK(is_nack(set_pulses(&bench, 0, low, 1), FSB_CMD_SET_PULSES, FSB_ERR_OUT_OF_RANGE));
    CHECK(bench.board.current_us[0] == 1000 && bench.board.target_us[0] == 1000);
    CHECK(bench.board.current_us[1] == 1000 && bench.board.target_us[1] == 1000);
}

static void test_set_pulses_length_and_channel_count_are_checked(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t seven[7] = {1500, 1500, 1500, 1500, 1500, 1500, 1500};
    const uint8_t odd[3] = {0, 0, 0};
    CHECK(is_nack(set_pulses(&bench, 0, seven, 0), FSB_CMD_SET_PULSES, FSB_ERR_BAD_LENGTH));
    CHECK(is_nack(request(&bench, FSB_CMD_SET_PULSES, odd, 3), FSB_CMD_SET_PULSES,
                  FSB_ERR_BAD_LENGTH));
    CHECK(is_nack(set_pulses(&bench, 0, seven, 7), FSB_CMD_SET_PULSES, FSB_ERR_BAD_CHANNEL));
    CHECK(is_ack(set_pulses(&bench, 0, seven, 6), FSB_CMD_SET_PULSES));
}

static void test_new_limits_clamp_pulses_and_are_flagged_for_storage(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t start[2] = {600, 2400};
    const uint16_t end[1] = {2400};
    const uint16_t limits[4] = {1000, 2000, 700, 2200};
    set_pulses(&bench, 0, start, 2);
    set_pulses(&bench, 1000, end, 1);
    CHECK(is_ack(set_limits(&bench, limits, 2), FSB_CMD_SET_LIMITS));
    CHECK(bench.board.limits_changed);
    CHECK(bench.board.current_us[0] == 1000 && bench.board.target_us[0] == 2000);
    CHECK(bench.board.current_us[1] == 2200 && bench.board.target_us[1] == 2200);
    advance_ms(&bench, 500);
    CHECK(bench.board.current_us[0] >= 1000 && bench.board.current_us[0] <= 2000);
    const uint16_t outside[1] = {2100};
    CHECK(is_nack(set_pulses(&bench, 0, outside, 1), FSB_CMD_SET_PULSES,
                  FSB_ERR_OUT_OF_RANGE));
}

static void test_invalid_limits_change_nothing(void)
{
    static const uint16_t bad_pairs[][4] = {
        {1000, 2000, 399, 2000}, {1000, 2000, 500, 2601}, {1000, 2000, 1500, 1500},
        {1000, 2000, 1600, 1500}};
    bench_t bench;
    bench_init(&bench);
    for (size_t i = 0; i < sizeof(bad_pairs) / sizeof(bad_pairs[0]); i++) {
        CHECK(is_nack(set_limits(&bench, bad_pairs[i], 2), FSB_CMD_SET_LIMITS,
                      FSB_ERR_OUT_OF_RANGE));
        CHECK(bench.board.limits[0].min_us == 500 && bench.board.limits[0].max_us == 2500);
    }
    const uint16_t seven[14] = {0};
    CHECK(is_nack(set_limits(&bench, seven, 7), FSB_CMD_SET_LIMITS, FSB_ERR_BAD_CHANNEL));
    const uint8_t three[3] = {0};
    CHECK(is_nack(request(&bench, FSB_CMD_SET_LIMITS, three, 3), FSB_CMD_SET_LIMITS,
                  FSB_ERR_BAD_LENGTH));
    CHECK(!bench.board.limits_changed);
}

static void test_enable_needs_a_target_and_existing_channels(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t pulses[1] = {1500};
    CHECK(is_nack(enable(&bench, 0x01), FSB_CMD_ENABLE, FSB_ERR_NO_TARGET));
    set_pulses(&bench, 0, pulses, 1);
    CHECK(is_nack(enable(&bench, 0x03), FSB_CMD_ENABLE, FSB_ERR_NO_TARGET));
    CHECK(is_nack(enable(&bench, 0x41), FSB_CMD_ENABLE, FSB_ERR_BAD_CHANNEL));
    CHECK(bench.board.enabled_mask == 0);
    CHECK(is_ack(enable(&bench, 0x01), FSB_CMD_ENABLE));
    CHECK(bench.board.enabled_mask == 0x01);
    CHECK(is_ack(enable(&bench, 0x00), FSB_CMD_ENABLE));
    CHECK(bench.board.enabled_mask == 0 && bench.board.current_us[0] == 1500);
    CHECK(is_nack(request(&bench, FSB_CMD_ENABLE, NULL, 0), FSB_CMD_ENABLE,
                  FSB_ERR_BAD_LENGTH));
}

static void test_get_positions_reports_mask_and_current_pulses(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t pulses[3] = {1500, 0, 0x0402};
    set_pulses(&bench, 0, pulses, 3);
    enable(&bench, 0x05);
    reply_t reply = request(&bench, FSB_CMD_GET_POSITIONS, NULL, 0);
    const uint8_t expected[] = {FSB_CMD_GET_POSITIONS, 0x05, 0xDC, 0x05, 0, 0, 0x02, 0x04,
                                0, 0, 0, 0, 0, 0};
    CHECK(reply.cmd == FSB_REPLY_DATA && reply.length == sizeof(expected));
    CHECK(memcmp(reply.payload, expected, sizeof(expected)) == 0);
}

static void test_watchdog_hold_stops_moves_once_after_silence(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t start[1] = {1000};
    const uint16_t end[1] = {2000};
    set_pulses(&bench, 0, start, 1);
    enable(&bench, 0x01);
    set_pulses(&bench, 1000, end, 1);
    CHECK(is_ack(set_timeout(&bench, 200, FSB_WATCHDOG_HOLD), FSB_CMD_SET_TIMEOUT));
    advance_ms(&bench, 199);
    CHECK(!bench.board.watchdog_fired);
    advance_ms(&bench, 1);
    CHECK(bench.board.watchdog_fired && bench.board.current_us[0] == 1200);
    advance_ms(&bench, 300);
    CHECK(bench.board.current_us[0] == 1200 && bench.board.enabled_mask == 0x01);
}

static void test_watchdog_detach_clears_enables_and_valid_frames_rearm_it(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t pulses[2] = {1500, 1500};
    set_pulses(&bench, 0, pulses, 2);
    enable(&bench, 0x03);
    set_timeout(&bench, 100, FSB_WATCHDOG_DETACH);
    advance_ms(&bench, 60);
    /* Even a refused frame proves the host alive; a corrupted one does not. */
    CHECK(is_nack(request(&bench, 0x7F, NULL, 0), 0x7F, FSB_ERR_UNKNOWN_CMD));
    advance_ms(&bench, 60);
    uint8_t frame[FSB_MAX_FRAME];
    uint8_t n = fsb_frame_encode(frame, 50, FSB_CMD_PING, NULL, 0);
    frame[n - 1] ^= 0x01;
    feed_bytes(&bench.board, frame, n);
    reply_t reply;
    CHECK(take_reply(&bench, &reply) && is_nack(reply, FSB_CMD_PING, FSB_ERR_BAD_CRC));
    CHECK(bench.board.enabled_mask == 0x03);
    advance_ms(&bench, 40);
    CHECK(bench.board.enabled_mask == 0);
    CHECK(is_ack(enable(&bench, 0x03), FSB_CMD_ENABLE));
    advance_ms(&bench, 99);
    CHECK(bench.board.enabled_mask == 0x03);
    advance_ms(&bench, 1);
    CHECK(bench.board.enabled_mask == 0);
}

static void test_set_timeout_checks_length_and_action(void)
{
    bench_t bench;
    bench_init(&bench);
    CHECK(is_nack(set_timeout(&bench, 100, 2), FSB_CMD_SET_TIMEOUT, FSB_ERR_OUT_OF_RANGE));
    CHECK(bench.board.timeout_ms == 0);
    const uint8_t two[2] = {100, 0};
    CHECK(is_nack(request(&bench, FSB_CMD_SET_TIMEOUT, two, 2), FSB_CMD_SET_TIMEOUT,
                  FSB_ERR_BAD_LENGTH));
    CHECK(is_ack(set_timeout(&bench, 0, FSB_WATCHDOG_DETACH), FSB_CMD_SET_TIMEOUT));
    advance_ms(&bench, 1000);
    CHECK(!bench.board.watchdog_fired);
}

static reply_t set_frame(bench_t *bench, uint16_t frame_us)
{
    const uint8_t payload[2] = {(uint8_t)(frame_us & 0xFF), (uint8_t)(frame_us >> 8)};
    return request(bench, FSB_CMD_SET_FRAME, payload, 2);
}

static void test_set_frame_needs_room_for_the_widest_limit(void)
{
    bench_t bench;
    bench_init(&bench);
    CHECK(bench.board.frame_us == FSB_FRAME_SLOTTED);
    /* Default limits reach 2500 us, so a fast frame needs 2500 + the gap. */
    CHECK(is_nack(set_frame(&bench, 2500 + FSB_FRAME_GAP_US - 1), FSB_CMD_SET_FRAME,
                  FSB_ERR_OUT_OF_RANGE));
    CHECK(bench.board.frame_us == FSB_FRAME_SLOTTED);
    CHECK(is_ack(set_frame(&bench, 2500 + FSB_FRAME_GAP_US), FSB_CMD_SET_FRAME));
    CHECK(bench.board.frame_us == 2500 + FSB_FRAME_GAP_US);
    CHECK(is_nack(set_frame(&bench, FSB_FRAME_MAX_US + 1), FSB_CMD_SET_FRAME,
                  FSB_ERR_OUT_OF_RANGE));
    CHECK(is_ack(set_frame(&bench, FSB_FRAME_MAX_US), FSB_CMD_SET_FRAME));
    const uint8_t three[3] = {0x88, 0x13, 0};
    CHECK(is_nack(request(&bench, FSB_CMD_SET_FRAME, three, 3), FSB_CMD_SET_FRAME,
                  FSB_ERR_BAD_LENGTH));
    CHECK(is_nack(request(&bench, FSB_CMD_SET_FRAME, NULL, 0), FSB_CMD_SET_FRAME,
                  FSB_ERR_BAD_LENGTH));
    CHECK(bench.board.frame_us == FSB_FRAME_MAX_US);
    CHECK(is_ack(set_frame(&bench, FSB_FRAME_SLOTTED), FSB_CMD_SET_FRAME));
    CHECK(bench.board.frame_us == FSB_FRAME_SLOTTED);
    /* Narrower limits on every channel allow a shorter frame. */
    const uint16_t narrow[2 * FSB_CHANNELS] = {900, 2000, 900, 2000, 900, 2000,
                                               900, 2000, 900, 2000, 900, 2000};
    CHECK(is_ack(set_limits(&bench, narrow, FSB_CHANNELS), FSB_CMD_SET_LIMITS));
    CHECK(is_ack(set_frame(&bench, 2000 + FSB_FRAME_GAP_US), FSB_CMD_SET_FRAME));
}

static void test_limits_in_a_fast_frame_must_leave_the_gap(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint16_t pulses[2] = {2400, 1500};
    set_pulses(&bench, 0, pulses, 2);
    CHECK(is_ack(set_frame(&bench, 2550 + FSB_FRAME_GAP_US), FSB_CMD_SET_FRAME));
    /* 2550 + the gap fits the frame exactly; 2551 does not, and the whole request is refused. */
    const uint16_t wide[4] = {500, 2550, 500, 2551};
    CHECK(is_nack(set_limits(&bench, wide, 2), FSB_CMD_SET_LIMITS, FSB_ERR_OUT_OF_RANGE));
    CHECK(bench.board.limits[0].max_us == 2500 && !bench.board.limits_changed);
    const uint16_t fits[4] = {500, 2550, 500, 2550};
    CHECK(is_ack(set_limits(&bench, fits, 2), FSB_CMD_SET_LIMITS));
    CHECK(bench.board.limits[1].max_us == 2550);
    /* Back to slotted frames: the widest limits are allowed again. */
    CHECK(is_ack(set_frame(&bench, FSB_FRAME_SLOTTED), FSB_CMD_SET_FRAME));
    const uint16_t widest[2] = {400, 2600};
    CHECK(is_ack(set_limits(&bench, widest, 1), FSB_CMD_SET_LIMITS));
    CHECK(is_nack(set_frame(&bench, 2600 + FSB_FRAME_GAP_US - 1), FSB_CMD_SET_FRAME,
                  FSB_ERR_OUT_OF_RANGE));
    CHECK(bench.board.current_us[0] == 2400 && bench.board.frame_us == FSB_FRAME_SLOTTED);
}

static void test_corrupted_frame_is_nacked_with_its_seq_and_changes_nothing(void)
{
    bench_t bench;
    bench_init(&bench);
    const uint8_t payload[6] = {0, 0, 0xDC, 0x05, 0xDC, 0x05};
    uint8_t frame[FSB_MAX_FRAME];
    uint8_t n = fsb_frame_encode(frame, 42, FSB_CMD_SET_PULSES, payload, sizeof(payload));
    frame[6] ^= 0x10;
    feed_bytes(&bench.board, frame, n);
    reply_t reply;
    CHECK(take_reply(&bench, &reply));
    CHECK(reply.seq == 42 && is_nack(reply, FSB_CMD_SET_PULSES, FSB_ERR_BAD_CRC));
    CHECK(bench.board.current_us[0] == 0 && bench.board.current_us[1] == 0);
}

static void test_unknown_command_and_reply_kinds_are_refused(void)
{
    bench_t bench;
    bench_init(&bench);
    CHECK(is_nack(request(&bench, 0x00, NULL, 0), 0x00, FSB_ERR_UNKNOWN_CMD));
    CHECK(is_nack(request(&bench, 0x08, NULL, 0), 0x08, FSB_ERR_UNKNOWN_CMD));
    CHECK(is_nack(request(&bench, FSB_REPLY_ACK, NULL, 0), FSB_REPLY_ACK, FSB_ERR_UNKNOWN_CMD));
}

static void test_limits_image_round_trips_and_rejects_damage(void)
{
    fsb_limits_t limits[FSB_CHANNELS];
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        limits[ch].min_us = (uint16_t)(600 + ch);
        limits[ch].max_us = (uint16_t)(2400 - ch);
    }
    uint8_t image[FSB_LIMITS_IMAGE_SIZE];
    fsb_limits_image_encode(limits, image);
    fsb_limits_t loaded[FSB_CHANNELS];
    CHECK(fsb_limits_image_decode(image, loaded));
    CHECK(memcmp(loaded, limits, sizeof(limits)) == 0);
    for (size_t i = 0; i < sizeof(image); i++) {
        image[i] ^= 0x04;
        CHECK(!fsb_limits_image_decode(image, loaded));
        image[i] ^= 0x04;
    }
    memset(image, 0xFF, sizeof(image)); /* a blank EEPROM */
    CHECK(!fsb_limits_image_decode(image, loaded));
}

static void test_stored_limits_outside_the_rules_fall_back_to_defaults(void)
{
    fsb_limits_t stored[FSB_CHANNELS];
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        stored[ch].min_us = 800;
        stored[ch].max_us = 2200;
    }
    stored[3].min_us = 2300;
    fsb_board_t board;
    capture_t out = {{0}, 0};
    fsb_board_init(&board, stored, capture_write, &out);
    CHECK(board.limits[0].min_us == 800 && board.limits[0].max_us == 2200);
    CHECK(board.limits[3].min_us == 500 && board.limits[3].max_us == 2500);
}

/* Parse "xNN_label: HH HH ..." into kind ('h' or 'b'), step and bytes; 0 if malformed. */
static int parse_vector_line(const char *line, char *kind, int *step, uint8_t *bytes,
                             size_t *length)
{
    const char *colon = strstr(line, ": ");
    if ((line[0] != 'h' && line[0] != 'b') || line[1] < '0' || line[1] > '9' || line[2] < '0' ||
        line[2] > '9' || line[3] != '_' || !colon) {
        return 0;
    }
    *kind = line[0];
    *step = (line[1] - '0') * 10 + (line[2] - '0');
    *length = 0;
    for (const char *p = colon + 2; *p; p += 3) {
        unsigned value;
        if (sscanf(p, "%2X", &value) != 1 || *length >= CAPTURE_SIZE) {
            return 0;
        }
        bytes[(*length)++] = (uint8_t)value;
        if (p[2] == '\0') {
            break;
        }
        if (p[2] != ' ') {
            return 0;
        }
    }
    return *length > 0;
}

/* The first ```vectors block of the file, as a malloc'ed string; NULL if there is none. */
static char *read_vectors_block(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    static char text[1 << 16];
    size_t size = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[size] = '\0';
    char *start = strstr(text, "```vectors\n");
    char *end = start ? strstr(start + 11, "```") : NULL;
    if (!end) {
        fprintf(stderr, "%s has no ```vectors block\n", path);
        return NULL;
    }
    *end = '\0';
    return strdup(start + 11);
}

/* Check one vector line against the board; return the number of lines checked (0 or 1). */
static int check_vector(bench_t *bench, const char *line, int *host_step)
{
    char kind;
    int step;
    uint8_t bytes[CAPTURE_SIZE];
    size_t length;
    if (!parse_vector_line(line, &kind, &step, bytes, &length)) {
        fprintf(stderr, "PROTOCOL.md vector line not understood: %s\n", line);
        failures++;
        return 0;
    }
    if (kind == 'h') {
        *host_step = step;
        feed_bytes(&bench->board, bytes, length);
        return 1;
    }
    if (step == 0) {
        fsb_board_send_ready(&bench->board);
    } else if (step != *host_step) {
        fprintf(stderr, "board line %s follows host step %d\n", line, *host_step);
        failures++;
    }
    size_t sent = bench->out.length - bench->read;
    if (sent != length || memcmp(bench->out.bytes + bench->read, bytes, length) != 0) {
        fprintf(stderr, "PROTOCOL.md %.*s: the board sent %zu other bytes:", 3, line, sent);
        for (size_t i = bench->read; i < bench->out.length; i++) {
            fprintf(stderr, " %02X", bench->out.bytes[i]);
        }
        fprintf(stderr, "\n");
        failures++;
    }
    bench->read = bench->out.length;
    return 1;
}

/* PROTOCOL.md "Worked examples": one session with a fresh board, every reply byte for byte. */
static void test_protocol_worked_examples(void)
{
    char *block = protocol_path ? read_vectors_block(protocol_path) : NULL;
    if (!block) {
        fprintf(stderr, "test_protocol_worked_examples needs --protocol PATH/PROTOCOL.md\n");
        failures++;
        return;
    }
    bench_t bench;
    bench_init(&bench);
    int host_step = -1;
    int checked = 0;
    for (char *line = strtok(block, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != '#') {
            checked += check_vector(&bench, line, &host_step);
        }
    }
    free(block);
    CHECK(checked >= 2);
    printf("checked %d PROTOCOL.md vector lines\n", checked);
}


/* -- pulse sequencer (fsb_sequencer.h) -------------------------------------------------- */

#define SEQ_START 1000u /* an arbitrary timer value at init */
#define SEQ_SLOT FSB_SEQ_SLOT_TICKS
#define SEQ_FRAME FSB_SEQ_FRAME_TICKS

typedef struct {
    uint16_t tick;
    uint8_t channels; /* bit = channel */
    fsb_edge_t edge;
} seq_event_t;

#define BIT(ch) ((uint8_t)(1u << (ch)))

/* Step the sequencer until the next pin edge (skipping the slots of disabled channels). */
static seq_event_t next_edge_in(fsb_sequencer_t *seq, uint8_t enabled, uint16_t frame_ticks,
                                const uint16_t *widths)
{
    for (unsigned guard = 0; guard < 2u * FSB_CHANNELS + 2u; guard++) {
        seq_event_t event = {seq->edge, 0, FSB_EDGE_NONE};
        event.edge = fsb_sequencer_step(seq, enabled, frame_ticks, widths, &event.channels);
        if (event.edge != FSB_EDGE_NONE) {
            return event;
        }
    }
    seq_event_t none = {0, 0, FSB_EDGE_NONE};
    return none;
}

/* The same in slotted frames. */
static seq_event_t next_edge(fsb_sequencer_t *seq, uint8_t enabled, const uint16_t *widths)
{
    return next_edge_in(seq, enabled, 0, widths);
}

/* Tick at which channel ``ch``'s slot starts in frame ``frame`` (0 = the first). */
static uint16_t slot_start(uint8_t ch, uint16_t frame)
{
    return (uint16_t)(SEQ_START + SEQ_SLOT + frame * SEQ_FRAME + ch * SEQ_SLOT);
}

/* Expect channel ``ch``'s pulse in ``frame``: a rise at its slot start and a fall ``width``
 * ticks later, as the next two edges. */
static void expect_pulse(fsb_sequencer_t *seq, uint8_t enabled, const uint16_t *widths,
                         uint8_t ch, uint16_t frame, uint16_t width)
{
    seq_event_t rise = next_edge(seq, enabled, widths);
    seq_event_t fall = next_edge(seq, enabled, widths);
    CHECK(rise.edge == FSB_EDGE_RISE && rise.channels == BIT(ch));
    CHECK(rise.tick == slot_start(ch, frame));
    CHECK(fall.edge == FSB_EDGE_FALL && fall.channels == BIT(ch));
    CHECK(fall.tick == (uint16_t)(slot_start(ch, frame) + width));
}

static void test_sequencer_pulses_enabled_channels_at_their_slots_every_20ms(void)
{
    uint16_t widths[FSB_CHANNELS] = {1000, 2000, 3000, 4000, 5000, 5200};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    /* Channels 1 and 4 only; 20 frames, so the 16-bit tick wraps several times. */
    for (uint16_t frame = 0; frame < 20; frame++) {
        expect_pulse(&seq, 0x12, widths, 1, frame, 2000);
        expect_pulse(&seq, 0x12, widths, 4, frame, 5000);
    }
}

static void test_sequencer_width_written_before_a_slot_is_pulsed_in_that_slot(void)
{
    uint16_t widths[FSB_CHANNELS] = {2000, 2000, 2000, 2000, 2000, 2000};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    expect_pulse(&seq, 0x3F, widths, 0, 0, 2000);
    expect_pulse(&seq, 0x3F, widths, 1, 0, 2000);
    /* Mid-frame, after channel 1's pulse: every channel gets a new width. */
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        widths[ch] = (uint16_t)(3000 + 100 * ch);
    }
    /* Channels 2..5 take it in this frame's slots, not one frame later ... */
    for (uint8_t ch = 2; ch < FSB_CHANNELS; ch++) {
        expect_pulse(&seq, 0x3F, widths, ch, 0, (uint16_t)(3000 + 100 * ch));
    }
    /* ... and 0 and 1, whose slots had passed, at their next ones. */
    expect_pulse(&seq, 0x3F, widths, 0, 1, 3000);
    expect_pulse(&seq, 0x3F, widths, 1, 1, 3100);
}

static void test_sequencer_width_written_during_a_pulse_keeps_that_pulse(void)
{
    uint16_t widths[FSB_CHANNELS] = {2000, 2000, 2000, 2000, 2000, 2000};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    seq_event_t rise = next_edge(&seq, 0x01, widths);
    CHECK(rise.edge == FSB_EDGE_RISE && rise.channels == BIT(0));
    widths[0] = 5000; /* while channel 0 is high */
    seq_event_t fall = next_edge(&seq, 0x01, widths);
    CHECK(fall.edge == FSB_EDGE_FALL && fall.tick == (uint16_t)(rise.tick + 2000));
    expect_pulse(&seq, 0x01, widths, 0, 1, 5000);
    /* A width written between the decision to rise and the latch (the interrupt handler
     * drives the pin in between) is the one the pulse takes. */
    fsb_edge_t edge = FSB_EDGE_NONE;
    uint8_t channels = 0;
    for (unsigned i = 0; i < FSB_CHANNELS && edge == FSB_EDGE_NONE; i++) {
        /* past the slots of disabled channels */
        edge = fsb_sequencer_next(&seq, 0x01, 0, &channels);
    }
    CHECK(edge == FSB_EDGE_RISE && channels == BIT(0) && seq.edge == slot_start(0, 2));
    widths[0] = 4000;
    fsb_sequencer_latch(&seq, widths);
    CHECK(seq.edge == (uint16_t)(slot_start(0, 2) + 4000));
    seq_event_t fall1 = next_edge(&seq, 0x01, widths);
    CHECK(fall1.edge == FSB_EDGE_FALL && fall1.tick == (uint16_t)(slot_start(0, 2) + 4000));
    widths[0] = 5000;
    /* Shorter while high: the pulse still ends at its latched width, no runt, no stretch. */
    seq_event_t rise2 = next_edge(&seq, 0x01, widths);
    widths[0] = 1000;
    seq_event_t fall2 = next_edge(&seq, 0x01, widths);
    CHECK(fall2.tick == (uint16_t)(rise2.tick + 5000));
}

static void test_sequencer_enable_is_latched_at_the_slot_and_a_pulse_always_ends(void)
{
    uint16_t widths[FSB_CHANNELS] = {2000, 2000, 2000, 2000, 2000, 2000};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    expect_pulse(&seq, 0x01, widths, 0, 0, 2000);
    /* Channel 3 enabled mid-frame, before its slot: it pulses in this frame. */
    seq_event_t rise = next_edge(&seq, 0x09, widths);
    CHECK(rise.edge == FSB_EDGE_RISE && rise.channels == BIT(3) && rise.tick == slot_start(3, 0));
    /* Detached while its pulse is high: the pulse still ends on time, then no more. */
    seq_event_t fall = next_edge(&seq, 0x00, widths);
    CHECK(fall.edge == FSB_EDGE_FALL && fall.channels == BIT(3));
    CHECK(fall.tick == (uint16_t)(slot_start(3, 0) + 2000));
    for (unsigned i = 0; i < 3u * FSB_CHANNELS; i++) {
        uint8_t channels;
        CHECK(fsb_sequencer_step(&seq, 0x00, 0, widths, &channels) == FSB_EDGE_NONE);
    }
}

#define FAST 10000u /* a 5 ms fast frame [ticks] */

/* Expect one fast frame starting at ``start``: a rise of ``rose``, then each fall group. */
static void expect_fast_frame(fsb_sequencer_t *seq, uint8_t enabled, const uint16_t *widths,
                              uint16_t start, uint8_t rose, const uint8_t *masks,
                              const uint16_t *ats, uint8_t groups)
{
    seq_event_t rise = next_edge_in(seq, enabled, FAST, widths);
    CHECK(rise.edge == FSB_EDGE_RISE && rise.channels == rose && rise.tick == start);
    for (uint8_t g = 0; g < groups; g++) {
        seq_event_t fall = next_edge_in(seq, enabled, FAST, widths);
        CHECK(fall.edge == FSB_EDGE_FALL && fall.channels == masks[g]);
        CHECK(fall.tick == (uint16_t)(start + ats[g]));
    }
    CHECK(seq->edge == (uint16_t)(start + FAST));
}

static void test_sequencer_fast_frame_rises_together_and_falls_in_width_order(void)
{
    const uint16_t widths[FSB_CHANNELS] = {3000, 1000, 3000, 4000, 2000, 5200};
    const uint8_t masks[4] = {BIT(1), BIT(4), BIT(0) | BIT(2), BIT(5)};
    const uint16_t ats[4] = {1000, 2000, 3000, 5200};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    /* Channel 3 detached; equal widths (0 and 2) fall on one edge; 20 frames wrap the tick. */
    for (uint16_t frame = 0; frame < 20; frame++) {
        uint16_t start = (uint16_t)(SEQ_START + SEQ_SLOT + frame * FAST);
        expect_fast_frame(&seq, 0x37, widths, start, 0x37, masks, ats, 4);
    }
}

static void test_sequencer_fast_frame_latches_widths_and_enables_at_its_start(void)
{
    uint16_t widths[FSB_CHANNELS] = {2000, 2000, 2000, 2000, 2000, 2000};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    uint16_t start = (uint16_t)(SEQ_START + SEQ_SLOT);
    seq_event_t rise = next_edge_in(&seq, 0x03, FAST, widths);
    CHECK(rise.edge == FSB_EDGE_RISE && rise.channels == 0x03 && rise.tick == start);
    /* Written while the pins are high: neither a width nor an enable bit changes this frame. */
    widths[0] = 1000;
    widths[1] = 4000;
    seq_event_t fall = next_edge_in(&seq, 0x3F, FAST, widths);
    CHECK(fall.edge == FSB_EDGE_FALL && fall.channels == 0x03);
    CHECK(fall.tick == (uint16_t)(start + 2000));
    /* The next frame takes them, and sorts anew. */
    const uint8_t masks[3] = {BIT(0), BIT(2) | BIT(3) | BIT(4) | BIT(5), BIT(1)};
    const uint16_t ats[3] = {1000, 2000, 4000};
    expect_fast_frame(&seq, 0x3F, widths, (uint16_t)(start + FAST), 0x3F, masks, ats, 3);
    /* A frame starting with every channel detached drives nothing, and the clock goes on. */
    uint8_t channels;
    CHECK(fsb_sequencer_step(&seq, 0x00, FAST, widths, &channels) == FSB_EDGE_NONE);
    CHECK(seq.edge == (uint16_t)(start + 3 * FAST));
    const uint8_t one[1] = {BIT(1)};
    const uint16_t at[1] = {4000};
    expect_fast_frame(&seq, 0x02, widths, (uint16_t)(start + 3 * FAST), 0x02, one, at, 1);
}

static void test_sequencer_fast_frame_caps_widths_to_leave_the_gap(void)
{
    /* Wider than the frame allows: only a corrupted width could be, but the pin still falls
     * FSB_SEQ_GAP_TICKS before the next frame starts. */
    const uint16_t widths[FSB_CHANNELS] = {9900, 9700, 1000, 1000, 1000, 1000};
    const uint8_t masks[2] = {BIT(2), BIT(0) | BIT(1)};
    const uint16_t ats[2] = {1000, FAST - FSB_SEQ_GAP_TICKS};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    expect_fast_frame(&seq, 0x07, widths, (uint16_t)(SEQ_START + SEQ_SLOT), 0x07, masks, ats,
                      2);
}

static void test_sequencer_fast_frame_folds_a_width_1us_above_another(void)
{
    /* 3000 and 3002 ticks fall together (at 3000); 3004 is 2 us above the group: its own. */
    const uint16_t widths[FSB_CHANNELS] = {3002, 3000, 3004, 3006, 4000, 4002};
    const uint8_t masks[4] = {BIT(0) | BIT(1), BIT(2) | BIT(3), BIT(4) | BIT(5)};
    const uint16_t ats[4] = {3000, 3004, 4000};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    expect_fast_frame(&seq, 0x3F, widths, (uint16_t)(SEQ_START + SEQ_SLOT), 0x3F, masks, ats,
                      3);
}

static void test_sequencer_changes_frame_mode_only_at_a_frame_start(void)
{
    const uint16_t widths[FSB_CHANNELS] = {2000, 2000, 2000, 3000, 2000, 2000};
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, SEQ_START);
    expect_pulse(&seq, 0x09, widths, 0, 0, 2000);
    /* A fast frame asked for mid-frame: the slotted frame finishes first (channel 3's slot). */
    seq_event_t rise = next_edge_in(&seq, 0x09, FAST, widths);
    CHECK(rise.edge == FSB_EDGE_RISE && rise.channels == BIT(3));
    CHECK(rise.tick == slot_start(3, 0));
    seq_event_t fall = next_edge_in(&seq, 0x09, FAST, widths);
    CHECK(fall.channels == BIT(3) && fall.tick == (uint16_t)(slot_start(3, 0) + 3000));
    /* The next frame, where the slotted one would have started, is fast. */
    const uint8_t masks[2] = {BIT(0), BIT(3)};
    const uint16_t ats[2] = {2000, 3000};
    expect_fast_frame(&seq, 0x09, widths, slot_start(0, 1), 0x09, masks, ats, 2);
    /* Back to slotted: the fast frame runs to its end, then slot 0 starts a slotted frame. */
    uint16_t start = (uint16_t)(slot_start(0, 1) + FAST);
    seq_event_t rise0 = next_edge(&seq, 0x09, widths);
    CHECK(rise0.edge == FSB_EDGE_RISE && rise0.channels == BIT(0) && rise0.tick == start);
    seq_event_t fall0 = next_edge(&seq, 0x09, widths);
    CHECK(fall0.channels == BIT(0) && fall0.tick == (uint16_t)(start + 2000));
    seq_event_t rise3 = next_edge(&seq, 0x09, widths);
    CHECK(rise3.channels == BIT(3) && rise3.tick == (uint16_t)(start + 3 * SEQ_SLOT));
}

static void test_sequencer_due_covers_the_lead_and_late_edges_not_far_ones(void)
{
    fsb_sequencer_t seq;
    fsb_sequencer_init(&seq, 65000u); /* the first edge wraps past 0 */
    uint16_t edge = seq.edge;
    CHECK(fsb_sequencer_due(&seq, (uint16_t)(edge - 40), 40));
    CHECK(!fsb_sequencer_due(&seq, (uint16_t)(edge - 41), 40));
    CHECK(fsb_sequencer_due(&seq, (uint16_t)(edge + 100), 40));
    /* A whole 20 ms frame ahead is not due, whatever the 16-bit wrap makes of it. */
    CHECK(!fsb_sequencer_due(&seq, (uint16_t)(edge - FSB_SEQ_FRAME_TICKS), 40));
    CHECK(!fsb_sequencer_due(&seq, (uint16_t)(edge - 20000u), 40));
}

typedef struct {
    const char *name;
    void (*run)(void);
} test_case_t;

#define TEST(fn) {#fn, fn}

static const test_case_t TESTS[] = {
    TEST(test_crc_matches_check_value_and_bitwise_definition),
    TEST(test_encoded_frame_has_sync_length_and_little_endian_crc),
    TEST(test_receiver_finds_frames_among_garbage_and_split_reads),
    TEST(test_receiver_skips_length_over_64_and_resyncs),
    TEST(test_receiver_reports_bad_crc_then_finds_frame_hidden_inside),
    TEST(test_ready_and_ping_report_version_channels_and_name),
    TEST(test_unset_channel_takes_its_first_target_at_once),
    TEST(test_move_is_linear_over_move_ms),
    TEST(test_new_move_starts_where_the_old_one_got_to),
    TEST(test_out_of_range_pulse_changes_no_channel),
    TEST(test_set_pulses_length_and_channel_count_are_checked),
    TEST(test_new_limits_clamp_pulses_and_are_flagged_for_storage),
    TEST(test_invalid_limits_change_nothing),
    TEST(test_enable_needs_a_target_and_existing_channels),
    TEST(test_get_positions_reports_mask_and_current_pulses),
    TEST(test_watchdog_hold_stops_moves_once_after_silence),
    TEST(test_watchdog_detach_clears_enables_and_valid_frames_rearm_it),
    TEST(test_set_timeout_checks_length_and_action),
    TEST(test_set_frame_needs_room_for_the_widest_limit),
    TEST(test_limits_in_a_fast_frame_must_leave_the_gap),
    TEST(test_corrupted_frame_is_nacked_with_its_seq_and_changes_nothing),
    TEST(test_unknown_command_and_reply_kinds_are_refused),
    TEST(test_limits_image_round_trips_and_rejects_damage),
    TEST(test_stored_limits_outside_the_rules_fall_back_to_defaults),
    TEST(test_protocol_worked_examples),
    TEST(test_sequencer_pulses_enabled_channels_at_their_slots_every_20ms),
    TEST(test_sequencer_width_written_before_a_slot_is_pulsed_in_that_slot),
    TEST(test_sequencer_width_written_during_a_pulse_keeps_that_pulse),
    TEST(test_sequencer_enable_is_latched_at_the_slot_and_a_pulse_always_ends),
    TEST(test_sequencer_fast_frame_rises_together_and_falls_in_width_order),
    TEST(test_sequencer_fast_frame_latches_widths_and_enables_at_its_start),
    TEST(test_sequencer_fast_frame_caps_widths_to_leave_the_gap),
    TEST(test_sequencer_fast_frame_folds_a_width_1us_above_another),
    TEST(test_sequencer_changes_frame_mode_only_at_a_frame_start),
    TEST(test_sequencer_due_covers_the_lead_and_late_edges_not_far_ones),
};

#define TEST_COUNT (sizeof(TESTS) / sizeof(TESTS[0]))

static int run_named(const char *name)
{
    for (size_t i = 0; i < TEST_COUNT; i++) {
        if (strcmp(TESTS[i].name, name) == 0) {
            TESTS[i].run();
            return 1;
        }
    }
    fprintf(stderr, "no test named %s\n", name);
    failures++;
    return 0;
}

int main(int argc, char **argv)
{
    int named = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            for (size_t t = 0; t < TEST_COUNT; t++) {
                printf("%s\n", TESTS[t].name);
            }
            return 0;
        }
        if (strcmp(argv[i], "--protocol") == 0 && i + 1 < argc) {
            protocol_path = argv[++i];
        } else {
            run_named(argv[i]);
            named++;
        }
    }
    if (!named) {
        for (size_t t = 0; t < TEST_COUNT; t++) {
            TESTS[t].run();
        }
    }
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}
