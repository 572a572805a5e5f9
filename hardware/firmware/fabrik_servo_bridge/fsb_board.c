#include "fsb_board.h"

#include <stddef.h>

#define ALL_CHANNELS_MASK ((uint8_t)((1u << FSB_CHANNELS) - 1u))
#define NAME_LENGTH ((uint8_t)(sizeof(FSB_FIRMWARE_NAME) - 1u))

static uint16_t get_u16(const uint8_t *bytes)
{
    return (uint16_t)(bytes[0] | (bytes[1] << 8));
}

static void put_u16(uint8_t *bytes, uint16_t value)
{
    bytes[0] = (uint8_t)(value & 0xFFu);
    bytes[1] = (uint8_t)(value >> 8);
}

static uint16_t clamp(uint16_t value, fsb_limits_t limits)
{
    if (value < limits.min_us) {
        return limits.min_us;
    }
    return value > limits.max_us ? limits.max_us : value;
}

static int limits_valid(fsb_limits_t limits)
{
    return FSB_PULSE_FLOOR_US <= limits.min_us && limits.min_us < limits.max_us &&
           limits.max_us <= FSB_PULSE_CEILING_US;
}

/* A fast frame must leave the pin low for FSB_FRAME_GAP_US after the longest pulse. */
static int frame_holds(uint16_t frame_us, uint16_t max_us)
{
    return frame_us == FSB_FRAME_SLOTTED || (uint32_t)max_us + FSB_FRAME_GAP_US <= frame_us;
}

static void send(const fsb_board_t *board, uint8_t seq, uint8_t kind, const uint8_t *payload,
                 uint8_t length)
{
    uint8_t frame[FSB_MAX_FRAME];
    uint8_t size = fsb_frame_encode(frame, seq, kind, payload, length);
    board->write(board->write_context, frame, size);
}

static void ack(const fsb_board_t *board, const fsb_frame_t *request)
{
    send(board, request->seq, FSB_REPLY_ACK, &request->cmd, 1);
}

static void nack(const fsb_board_t *board, uint8_t seq, uint8_t cmd, uint8_t error)
{
    const uint8_t payload[2] = {cmd, error};
    send(board, seq, FSB_REPLY_NACK, payload, sizeof(payload));
}

/* proto_version, channels, name: the data of a PING reply and of READY. */
static uint8_t board_info(uint8_t *out)
{
    const char *name = FSB_FIRMWARE_NAME;
    out[0] = FSB_PROTOCOL_VERSION;
    out[1] = FSB_CHANNELS;
    for (uint8_t i = 0; i < NAME_LENGTH; i++) {
        out[2 + i] = (uint8_t)name[i];
    }
    return (uint8_t)(2u + NAME_LENGTH);
}

void fsb_board_init(fsb_board_t *board, const fsb_limits_t *limits, fsb_write_fn write,
                    void *write_context)
{
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        fsb_limits_t defaults = {FSB_DEFAULT_MIN_US, FSB_DEFAULT_MAX_US};
        board->limits[ch] = (limits != NULL && limits_valid(limits[ch])) ? limits[ch] : defaults;
        board->current_us[ch] = 0;
        board->start_us[ch] = 0;
        board->target_us[ch] = 0;
    }
    board->move_ms = 0;
    board->move_elapsed_ms = 0;
    board->pending_us = 0;
    board->enabled_mask = 0;
    board->frame_us = FSB_FRAME_SLOTTED;
    board->timeout_ms = 0;
    board->timeout_action = FSB_WATCHDOG_HOLD;
    board->silence_ms = 0;
    board->watchdog_fired = 0;
    board->limits_changed = 0;
    fsb_receiver_init(&board->receiver);
    board->write = write;
    board->write_context = write_context;
}

void fsb_board_send_ready(const fsb_board_t *board)
{
    uint8_t payload[2 + NAME_LENGTH];
    send(board, 0, FSB_REPLY_READY, payload, board_info(payload));
}

/* Put every channel where the move in progress has got to after move_elapsed_ms. */
static void update_moves(fsb_board_t *board)
{
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        if (board->current_us[ch] == 0) {
            continue;
        }
        if (board->move_elapsed_ms >= board->move_ms) {
            board->current_us[ch] = board->target_us[ch];
            continue;
        }
        int32_t span = (int32_t)board->target_us[ch] - (int32_t)board->start_us[ch];
        int32_t done = span * (int32_t)board->move_elapsed_ms / (int32_t)board->move_ms;
        board->current_us[ch] = (uint16_t)((int32_t)board->start_us[ch] + done);
    }
}

/* End the move in progress where it is now. */
static void stop_moves(fsb_board_t *board)
{
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        board->start_us[ch] = board->current_us[ch];
        board->target_us[ch] = board->current_us[ch];
    }
    board->move_elapsed_ms = board->move_ms;
}

static uint8_t set_pulses(fsb_board_t *board, const fsb_frame_t *request)
{
    if (request->length < 4 || (request->length & 1u)) {
        return FSB_ERR_BAD_LENGTH;
    }
    uint8_t count = (uint8_t)((request->length - 2u) / 2u);
    if (count > FSB_CHANNELS) {
        return FSB_ERR_BAD_CHANNEL;
    }
    const uint8_t *pulses = request->payload + 2;
    for (uint8_t ch = 0; ch < count; ch++) {
        uint16_t pulse = get_u16(pulses + 2 * ch);
        if (pulse != 0 && clamp(pulse, board->limits[ch]) != pulse) {
            return FSB_ERR_OUT_OF_RANGE;
        }
    }
    /* The new move starts from wherever each channel has got to; a channel given 0 keeps its
     * target, so it carries on toward it on the new move's clock. */
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        board->start_us[ch] = board->current_us[ch];
    }
    for (uint8_t ch = 0; ch < count; ch++) {
        uint16_t pulse = get_u16(pulses + 2 * ch);
        if (pulse == 0) {
            continue;
        }
        board->target_us[ch] = pulse;
        if (board->current_us[ch] == 0) {
            board->current_us[ch] = pulse;
            board->start_us[ch] = pulse;
        }
    }
    board->move_ms = get_u16(request->payload);
    board->move_elapsed_ms = 0;
    update_moves(board);
    return 0;
}

static uint8_t set_limits(fsb_board_t *board, const fsb_frame_t *request)
{
    if (request->length == 0 || (request->length & 3u)) {
        return FSB_ERR_BAD_LENGTH;
    }
    uint8_t count = (uint8_t)(request->length / 4u);
    if (count > FSB_CHANNELS) {
        return FSB_ERR_BAD_CHANNEL;
    }
    for (uint8_t ch = 0; ch < count; ch++) {
        fsb_limits_t limits = {get_u16(request->payload + 4 * ch),
                               get_u16(request->payload + 4 * ch + 2)};
        if (!limits_valid(limits) || !frame_holds(board->frame_us, limits.max_us)) {
            return FSB_ERR_OUT_OF_RANGE;
        }
    }
    for (uint8_t ch = 0; ch < count; ch++) {
        fsb_limits_t limits = {get_u16(request->payload + 4 * ch),
                               get_u16(request->payload + 4 * ch + 2)};
        board->limits[ch] = limits;
        if (board->current_us[ch] != 0) {
            /* Clamping both ends keeps the rest of the move inside the new limits too. */
            board->current_us[ch] = clamp(board->current_us[ch], limits);
            board->start_us[ch] = clamp(board->start_us[ch], limits);
            board->target_us[ch] = clamp(board->target_us[ch], limits);
        }
    }
    board->limits_changed = 1;
    return 0;
}

static uint8_t enable(fsb_board_t *board, const fsb_frame_t *request)
{
    if (request->length != 1) {
        return FSB_ERR_BAD_LENGTH;
    }
    uint8_t mask = request->payload[0];
    if (mask & (uint8_t)~ALL_CHANNELS_MASK) {
        return FSB_ERR_BAD_CHANNEL;
    }
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        if ((mask & (1u << ch)) && board->current_us[ch] == 0) {
            return FSB_ERR_NO_TARGET;
        }
    }
    board->enabled_mask = mask;
    return 0;
}

static uint8_t set_timeout(fsb_board_t *board, const fsb_frame_t *request)
{
    if (request->length != 3) {
        return FSB_ERR_BAD_LENGTH;
    }
    uint8_t action = request->payload[2];
    if (action != FSB_WATCHDOG_HOLD && action != FSB_WATCHDOG_DETACH) {
        return FSB_ERR_OUT_OF_RANGE;
    }
    board->timeout_ms = get_u16(request->payload);
    board->timeout_action = action;
    return 0;
}

static uint8_t set_frame(fsb_board_t *board, const fsb_frame_t *request)
{
    if (request->length != 2) {
        return FSB_ERR_BAD_LENGTH;
    }
    uint16_t frame_us = get_u16(request->payload);
    if (frame_us > FSB_FRAME_MAX_US) {
        return FSB_ERR_OUT_OF_RANGE;
    }
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        if (!frame_holds(frame_us, board->limits[ch].max_us)) {
            return FSB_ERR_OUT_OF_RANGE;
        }
    }
    board->frame_us = frame_us;
    return 0;
}

static void ping(const fsb_board_t *board, const fsb_frame_t *request)
{
    uint8_t payload[1 + 2 + NAME_LENGTH];
    payload[0] = request->cmd;
    send(board, request->seq, FSB_REPLY_DATA, payload, (uint8_t)(1u + board_info(payload + 1)));
}

static void get_positions(const fsb_board_t *board, const fsb_frame_t *request)
{
    uint8_t payload[2 + 2 * FSB_CHANNELS];
    payload[0] = request->cmd;
    payload[1] = board->enabled_mask;
    for (uint8_t ch = 0; ch < FSB_CHANNELS; ch++) {
        put_u16(payload + 2 + 2 * ch, board->current_us[ch]);
    }
    send(board, request->seq, FSB_REPLY_DATA, payload, sizeof(payload));
}

/* Commands that answer with data: check the length, then reply. */
static void query(const fsb_board_t *board, const fsb_frame_t *request)
{
    if (request->length != 0) {
        nack(board, request->seq, request->cmd, FSB_ERR_BAD_LENGTH);
    } else if (request->cmd == FSB_CMD_PING) {
        ping(board, request);
    } else {
        get_positions(board, request);
    }
}

static void execute(fsb_board_t *board, const fsb_frame_t *request)
{
    uint8_t error;
    switch (request->cmd) {
    case FSB_CMD_PING:
    case FSB_CMD_GET_POSITIONS:
        query(board, request);
        return;
    case FSB_CMD_SET_PULSES:
        error = set_pulses(board, request);
        break;
    case FSB_CMD_SET_LIMITS:
        error = set_limits(board, request);
        break;
    case FSB_CMD_ENABLE:
        error = enable(board, request);
        break;
    case FSB_CMD_SET_TIMEOUT:
        error = set_timeout(board, request);
        break;
    case FSB_CMD_SET_FRAME:
        error = set_frame(board, request);
        break;
    default:
        error = FSB_ERR_UNKNOWN_CMD;
        break;
    }
    if (error) {
        nack(board, request->seq, request->cmd, error);
    } else {
        ack(board, request);
    }
}

void fsb_board_feed(fsb_board_t *board, uint8_t byte)
{
    fsb_frame_t frame;
    fsb_rx_kind_t kind;
    fsb_receiver_push(&board->receiver, byte);
    while ((kind = fsb_receiver_next(&board->receiver, &frame)) != FSB_RX_NONE) {
        if (kind == FSB_RX_BAD_CRC) {
            nack(board, frame.seq, frame.cmd, FSB_ERR_BAD_CRC);
            continue;
        }
        /* Any frame with a good CRC proves the host alive, even one that is refused. */
        board->silence_ms = 0;
        board->watchdog_fired = 0;
        execute(board, &frame);
    }
}

static void watchdog(fsb_board_t *board, uint16_t elapsed_ms)
{
    uint16_t silence = (uint16_t)(board->silence_ms + elapsed_ms);
    board->silence_ms = silence < board->silence_ms ? UINT16_MAX : silence;
    if (board->timeout_ms == 0 || board->watchdog_fired ||
        board->silence_ms < board->timeout_ms) {
        return;
    }
    board->watchdog_fired = 1;
    if (board->timeout_action == FSB_WATCHDOG_DETACH) {
        board->enabled_mask = 0;
    } else {
        stop_moves(board);
    }
}

void fsb_board_advance(fsb_board_t *board, uint16_t elapsed_us)
{
    uint32_t total_us = (uint32_t)board->pending_us + elapsed_us;
    uint16_t elapsed_ms = (uint16_t)(total_us / 1000u);
    board->pending_us = (uint16_t)(total_us - (uint32_t)elapsed_ms * 1000u);
    if (elapsed_ms == 0) {
        return;
    }
    if (board->move_elapsed_ms < board->move_ms) {
        uint16_t left = (uint16_t)(board->move_ms - board->move_elapsed_ms);
        board->move_elapsed_ms =
            (uint16_t)(board->move_elapsed_ms + (elapsed_ms < left ? elapsed_ms : left));
        update_moves(board);
    }
    watchdog(board, elapsed_ms);
}
