"""The firmware under abuse: fuzzed on the host, and fed garbage by hosts that vanish.

Its protocol core is fuzzed for a fixed budget of seeds; the real firmware in simavr is fed
random bytes by a host that also goes away in the middle of frames.
"""

import random

import pytest

from fabrik_ros.boardsim.simavr_board import CHANNELS, SimavrBoard
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import Command, FrameDecoder, Reply
from test.hardware.frame_host import FrameHost
from test.reliability.firmware_fuzz import fuzz_for
from test.reliability.results import record

FUZZ_BUDGET_S = 10.0
WAIT_S = 10.0
WIDTH_TOLERANCE_US = 2.0
LIMITS_US = (900, 2100)


@pytest.mark.timeout(120)
def test_the_firmware_parser_survives_a_fixed_fuzz_budget(hardware_build):
    run = fuzz_for(FUZZ_BUDGET_S, first_seed=1000)
    record('firmware.fuzz_fast', {'budget_s': FUZZ_BUDGET_S, 'seconds': run.seconds,
                                  'seeds': run.seeds, 'rounds': run.rounds, **run.reached})
    assert run.failure == ''
    assert run.seeds >= 3, 'the budget should cover a few seeds even on a slow machine'
    assert all(count > 0 for count in run.reached.values()), run.reached


def _ping(host: FrameHost, tries: int = 3) -> int:
    """PING until answered (a new SEQ each time); return how many tries went unanswered.

    The answer must echo PING: a NACK of the stale half frame may carry the same SEQ.
    """
    for attempt in range(tries):
        seq = host.next_seq()
        seen = len(host.frames)
        host.send(native.encode_ping(seq))
        try:
            host.wait_frame(lambda f, s=seq: f.seq == s and f.cmd == Reply.DATA
                            and f.payload[:1] == bytes((Command.PING,)), 1.0, seen)
            return attempt
        except TimeoutError:
            continue
    raise AssertionError(f'no answer to PING in {tries} tries; got {host.frames[-3:]}')


def _widths(board: SimavrBoard, since_s: float) -> list[float]:
    return [p.width_us for p in board.pulses(since_s=since_s)]


@pytest.mark.timeout(90)
def test_simavr_board_survives_random_bytes_and_hosts_vanishing_mid_frame(simavr_board):
    board = simavr_board
    rng = random.Random(20261121)
    host = FrameHost(board.port)
    assert host.request(native.encode_set_limits(host.next_seq(), [LIMITS_US] * CHANNELS)
                        ).cmd == Reply.ACK
    assert host.request(native.encode_set_pulses(host.next_seq(), [1500] * CHANNELS, 0)
                        ).cmd == Reply.ACK
    assert host.request(native.encode_enable(host.next_seq(), (1 << CHANNELS) - 1)
                        ).cmd == Reply.ACK
    start_s = board.now_s
    vanished, garbage_bytes, retries = 0, 0, 0
    for _ in range(12):
        # Random bytes, then half of a frame that would move every servo, then the host goes.
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(50, 400)))
        target = [rng.randrange(500, 2501) for _ in range(CHANNELS)]
        frame = native.encode_set_pulses(host.next_seq(), target, 0)
        host.send(noise + frame[:rng.randrange(1, len(frame))])
        garbage_bytes += len(noise)
        host.close()
        vanished += 1
        board.wait_sim_time(board.now_s + rng.uniform(0.01, 0.3), WAIT_S)
        host = FrameHost(board.port)
        retries += _ping(host)
    # The board still obeys, within its limits, and pulses at the commanded width.
    assert host.request(native.encode_set_pulses(host.next_seq(), [1700] * CHANNELS, 0)
                        ).cmd == Reply.ACK
    settled_s = board.now_s
    board.wait_for(lambda: len(board.pulses(0, settled_s + 0.05)) >= 3, WAIT_S,
                   'pulses after the abuse')
    end = [p.width_us for p in board.pulses(0, settled_s + 0.05)]
    widths = _widths(board, start_s)
    decoder = FrameDecoder()
    replies = decoder.feed(bytes(b.value for b in board.sent))
    record('firmware.simavr_abuse', {
        'hosts_vanished_mid_frame': vanished, 'garbage_bytes': garbage_bytes,
        'ping_retries_after_return': retries, 'pulses_checked': len(widths),
        'min_width_us': min(widths), 'max_width_us': max(widths),
        'ready_frames': sum(1 for f in replies if f.cmd == Reply.READY),
        'reply_bytes_not_in_a_frame': decoder.discarded_bytes})
    host.close()
    assert min(widths) >= LIMITS_US[0] - WIDTH_TOLERANCE_US
    assert max(widths) <= LIMITS_US[1] + WIDTH_TOLERANCE_US
    assert end == pytest.approx([1700] * len(end), abs=WIDTH_TOLERANCE_US)
    assert board.longest_high_ticks <= 1, 'a pin stuck high'
    assert decoder.discarded_bytes == 0 and decoder.corrupt_frames == 0
    assert [f.cmd for f in replies].count(Reply.READY) == 1, 'the board must not reset'
