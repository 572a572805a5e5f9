"""The worked-example session of hardware/PROTOCOL.md, built from the codec and the sim firmware.

``python test/servo_io/protocol_vectors.py`` prints the fenced block to paste into PROTOCOL.md;
``test_protocol_md.py`` checks that the file still holds exactly this.
"""

import re

from fabrik_ros.boardsim.native_board import NativeFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import Command, WatchdogAction

FIRMWARE_NAME = 'fabrik_servo_bridge'
CHANNELS = 6
LINE = re.compile(r'^([hb])(\d\d)_([a-z0-9_]+): ((?:[0-9A-F]{2})(?: [0-9A-F]{2})*)$')


def _corrupt_crc(frame: bytes) -> bytes:
    return frame[:-1] + bytes((frame[-1] ^ 0xFF,))


def requests() -> list[tuple[str, bytes]]:
    """Return the host frames of the session, in order, named after what they show."""
    return [
        ('ping', native.encode_ping(1)),
        ('enable_without_target', native.encode_enable(2, 0x01)),
        ('set_pulses_all_1500', native.encode_set_pulses(3, [1500] * 6, 0)),
        ('set_limits_two_channels', native.encode_set_limits(4, [(600, 2400), (700, 2300)])),
        ('set_pulses_outside_limits', native.encode_set_pulses(5, [2450], 500)),
        ('set_pulses_three_over_1s', native.encode_set_pulses(6, [1000, 0, 2000], 1000)),
        ('enable_all', native.encode_enable(7, 0x3F)),
        ('get_positions', native.encode_get_positions(8)),
        ('set_timeout_500ms_detach', native.encode_set_timeout(9, 500, WatchdogAction.DETACH)),
        ('ping_with_bad_crc', _corrupt_crc(native.encode_ping(10))),
        ('unknown_cmd', native.encode_frame(11, 0x7F)),
        ('set_pulses_seven_channels', native.encode_set_pulses(12, [1500] * 7, 0)),
        ('set_pulses_odd_length', native.encode_frame(13, Command.SET_PULSES, b'\x00\x00\xdc')),
        ('enable_channel_6', native.encode_enable(14, 0x40)),
        ('garbage_then_ping', b'\x00\xa5\xa5\x5a\xff\x13' + native.encode_ping(15)),
        ('set_timeout_off', native.encode_set_timeout(16, 0, WatchdogAction.HOLD)),
        ('set_frame_shorter_than_limits', native.encode_set_frame(17, 2799)),
        ('set_frame_3ms', native.encode_set_frame(18, 3000)),
        ('set_limits_beyond_frame', native.encode_set_limits(19, [(500, 2701)])),
        ('set_frame_bad_length', native.encode_frame(20, Command.SET_FRAME, b'\x88\x13\x00')),
        ('set_frame_slotted', native.encode_set_frame(21, 0)),
        ('ping_seq_255', native.encode_ping(255)),
    ]


def session() -> list[tuple[str, bytes]]:
    """Return every line of the session: READY, then each request and the board's answer."""
    board = NativeFirmware(ServoModel(CHANNELS), FIRMWARE_NAME)
    lines = [('b00_ready', board.boot(0.0))]
    for step, (label, request) in enumerate(requests(), start=1):
        lines.append((f'h{step:02d}_{label}', request))
        reply = board.receive(request, 0.0)
        lines.append((f'b{step:02d}_{_reply_label(reply)}', reply))
    return lines


def _reply_label(reply: bytes) -> str:
    kind = native.Reply(reply[4]).name.lower()
    if reply[4] == native.Reply.NACK:
        return f'nack_{native.NackError(reply[6]).name.lower()}'
    return kind


def render() -> str:
    """Return the fenced ``vectors`` block for PROTOCOL.md."""
    body = '\n'.join(f'{name}: {data.hex(" ").upper()}' for name, data in session())
    return f'```vectors\n{body}\n```'


def parse(markdown: str) -> dict[str, bytes]:
    """Return name → bytes for every vector line in the first ``vectors`` block of the text."""
    block = markdown.split('```vectors\n', 1)[1].split('```', 1)[0]
    vectors = {}
    for line in block.splitlines():
        if not line or line.startswith('#'):
            continue
        match = LINE.match(line)
        if match is None:
            raise ValueError(f'PROTOCOL.md vector line {line!r} does not match {LINE.pattern}')
        vectors[line.split(':', 1)[0]] = bytes.fromhex(match.group(4))
    return vectors


if __name__ == '__main__':
    print(render())
