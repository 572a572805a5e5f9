"""The unframed dialects take only what a real SSC-32U or Maestro can send (issue 22.2)."""

import random

import pytest

from fabrik_ros.servo_io.errors import NotABoard
from fabrik_ros.servo_io.protocols import maestro, ssc32
from fabrik_ros.servo_io.protocols.dialect import Answer
from fabrik_ros.servo_io.protocols.maestro_dialect import MaestroDialect
from fabrik_ros.servo_io.protocols.raw_dialect import MAX_LINE
from fabrik_ros.servo_io.protocols.ssc32_dialect import Ssc32Dialect


@pytest.mark.parametrize('line, version', [
    (b'SSC32-V2.50USB\r', 'SSC32-V2.50USB'), (b'SSC32-V2.50USB', 'SSC32-V2.50USB'),
    (b'SSC32-V2.04GP\r', 'SSC32-V2.04GP'), (b'SSC32-V2.50USB\r\n', None), (b'\r', None),
    (b'SSC32 V2.50USB\r', None), (b'SSC32-V\r', None), (b'\xff\xfe\r', None),
    (b'SSC32-V2.50USB' + b'X' * 20 + b'\r', None)])
def test_version_lines_follow_the_boards_format(line, version):
    assert ssc32.decode_version(line) == version


def test_a_version_line_that_is_not_one_is_refused_with_the_bytes_escaped():
    dialect = Ssc32Dialect(4)
    with pytest.raises(NotABoard) as raised:
        dialect.board_info(Answer(b'\x1b[2JSSC\r'))
    assert "VER answered b'\\x1b[2JSSC\\r' (8 bytes)" in str(raised.value)


def test_a_text_answer_is_cut_at_max_line_instead_of_waited_for():
    dialect = Ssc32Dialect(4)
    request = dialect.handshake()
    dialect.feed(b'x' * (MAX_LINE - 1))
    assert dialect.take_answer(request) is None
    dialect.feed(b'yz')
    assert dialect.take_answer(request).data == b'x' * (MAX_LINE - 1) + b'y'
    assert dialect.take_unrequested() == b'z'


def test_bytes_after_a_complete_answer_are_unrequested_and_not_the_next_answer():
    dialect = Ssc32Dialect(2)
    first, second = dialect.poll()
    dialect.feed(bytes((150, 7, 8)))
    assert dialect.take_answer(first).data == bytes((150,))
    assert dialect.take_answer(second) is None, 'the unrequested bytes were taken as an answer'
    dialect.feed(bytes((160,)))
    answers = [Answer(bytes((150,))), dialect.take_answer(second)]
    assert dialect.positions(answers, 0.0) is None, 'a poll with unrequested bytes passed'
    assert dialect.take_unrequested() == bytes((7, 8))
    assert dialect.positions(answers, 0.0).pulses_us == (1500, 1600)


def test_reset_forgets_unrequested_bytes_of_the_last_connection():
    dialect = MaestroDialect(1)
    (poll,) = dialect.poll()
    dialect.feed(b'\x70\x17\x01')
    dialect.take_answer(poll)
    dialect.reset()
    assert dialect.take_unrequested() == b''


@pytest.mark.parametrize('errors', [0, 1, 0x1FF, 0x100])
def test_every_defined_maestro_error_bit_is_accepted(errors):
    info = MaestroDialect(4).board_info(Answer(maestro.encode_u16(errors)))
    assert info.firmware == f'Pololu Maestro (errors 0x{errors:04x})'


def test_random_error_registers_with_undefined_bits_are_refused():
    rng = random.Random(22)
    dialect = MaestroDialect(4)
    for _ in range(200):
        errors = rng.randrange(0x200, 0x10000)
        with pytest.raises(NotABoard, match=f'0x{errors:04x}'):
            dialect.board_info(Answer(maestro.encode_u16(errors)))


def test_seeded_random_answers_never_give_a_pose_outside_the_boards_range():
    rng = random.Random(7)
    ssc, mae = Ssc32Dialect(6), MaestroDialect(6)
    for _ in range(300):
        report = ssc.positions([Answer(rng.randbytes(1)) for _ in range(6)], 0.0)
        if report is not None:
            assert all(p is None or 500 <= p <= 2500 for p in report.pulses_us)
        report = mae.positions([Answer(rng.randbytes(2)) for _ in range(6)], 0.0)
        if report is not None:
            assert all(p is None or 0 < p <= maestro.DATA_MAX / 4 for p in report.pulses_us)
