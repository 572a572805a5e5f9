"""hardware/PROTOCOL.md's worked examples, checked byte for byte against the codec and the sim."""

from pathlib import Path

from fabrik_ros.boardsim.native_board import NativeFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import Command, FrameDecoder, NackError, Reply
from test.servo_io.protocols import protocol_vectors

PROTOCOL_MD = Path(__file__).parents[3] / 'hardware' / 'PROTOCOL.md'


def _vectors():
    return protocol_vectors.parse(PROTOCOL_MD.read_text(encoding='utf-8'))


def test_protocol_md_holds_exactly_the_session_the_codec_and_sim_produce():
    assert protocol_vectors.render() in PROTOCOL_MD.read_text(encoding='utf-8')


def test_every_host_line_is_what_the_codec_encodes():
    vectors = _vectors()
    expected = {f'h{step:02d}_{label}': data
                for step, (label, data) in enumerate(protocol_vectors.requests(), start=1)}
    assert {name: data for name, data in vectors.items() if name[0] == 'h'} == expected


def test_replaying_the_host_lines_byte_by_byte_gives_the_board_lines():
    vectors = _vectors()
    board = NativeFirmware(ServoModel(protocol_vectors.CHANNELS), protocol_vectors.FIRMWARE_NAME)
    assert board.boot(0.0) == vectors['b00_ready']
    replies = {}
    for name, data in vectors.items():
        if name[0] == 'h':
            replies[name[1:3]] = b''.join(board.receive(bytes((byte,)), 0.0) for byte in data)
    assert replies == {name[1:3]: data for name, data in vectors.items()
                       if name[0] == 'b' and name != 'b00_ready'}


def test_board_lines_decode_to_the_reply_their_label_names():
    for name, data in _vectors().items():
        if name[0] != 'b':
            continue
        (frame,) = FrameDecoder().feed(data)
        label = name[4:]
        if label.startswith('nack_'):
            assert frame.cmd == Reply.NACK
            assert NackError(frame.payload[1]).name.lower() == label[5:]
        else:
            assert Reply(frame.cmd).name.lower() == label


def test_session_covers_every_command_reply_kind_and_error_code():
    frames = [item for data in _vectors().values() for item in FrameDecoder().feed(data)
              if isinstance(item, native.Frame)]
    kinds = {frame.cmd for frame in frames}
    errors = {frame.payload[1] for frame in frames if frame.cmd == Reply.NACK}
    assert set(Command) <= kinds
    assert set(Reply) <= kinds
    assert set(NackError) <= errors


def test_every_line_matches_the_documented_format():
    text = PROTOCOL_MD.read_text(encoding='utf-8')
    block = text.split('```vectors\n', 1)[1].split('```', 1)[0]
    lines = [line for line in block.splitlines() if line]
    assert lines and all(protocol_vectors.LINE.match(line) for line in lines)
