"""A port that is not the board is refused, not taken for one (issue 22.2).

Each test puts a :class:`PtyImpostor` on a real pty: seeded random bytes (a wrong baud rate or
another device), or answers a real board cannot give. The link must never become READY on
them, must refuse with one line naming the likely cause and showing the device's bytes
escaped, and must treat a pose the board cannot have reported as unknown.
"""

import time

import pytest

from fabrik_ros.servo_io import LinkState, LinkTimeout, Protocol, ServoLink
from fabrik_ros.servo_io.errors import NotABoard
from fabrik_ros.servo_io.protocols import maestro
from test.servo_io.conftest import FAST
from test.servo_io.impostor import answering_maestro, answering_ssc32, PtyImpostor

pytestmark = pytest.mark.timeout(30)

CHANNELS = 4
CAUSES = {Protocol.SSC32: 'an SSC-32U ships at 9600 baud',
          Protocol.MAESTRO: 'USB Dual Port serial mode'}


def _wait(condition, timeout_s=10.0, what='condition'):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f'{what} within {timeout_s} s'
        time.sleep(0.01)


def _refusal(impostor: PtyImpostor, protocol: Protocol) -> tuple[BaseException, list]:
    """Run a link on the impostor until its first failed handshake; return it and the states."""
    states: list[LinkState] = []
    link = ServoLink(impostor.path, protocol=protocol, channels=CHANNELS, options=FAST,
                     on_state=states.append).start()
    try:
        _wait(lambda: link.last_error is not None, what='the handshake to fail')
        error = link.last_error
        assert link.board is None and link.positions() is None
    finally:
        link.close()
    return error, states


def _assert_one_clean_line(text: str) -> None:
    assert '\n' not in text and '\r' not in text
    assert all(' ' <= ch <= '~' for ch in text), f'raw device bytes in {text!r}'
    assert len(text) < 700


@pytest.mark.parametrize('protocol', [Protocol.SSC32, Protocol.MAESTRO])
@pytest.mark.parametrize('seed', [1, 22])
def test_random_bytes_are_refused_with_one_line_naming_the_likely_cause(protocol, seed):
    with PtyImpostor(seed=seed) as impostor:
        error, states = _refusal(impostor, protocol)
    assert isinstance(error, NotABoard), repr(error)
    assert LinkState.READY not in states
    text = str(error)
    assert text.startswith(f'{impostor.path}: refused, no ')
    assert CAUSES[protocol] in text
    _assert_one_clean_line(text)


def test_random_bytes_are_refused_by_the_native_protocol_as_silence():
    with PtyImpostor(seed=3) as impostor:
        error, states = _refusal(impostor, Protocol.NATIVE)
    assert isinstance(error, LinkTimeout) and not isinstance(error, NotABoard), repr(error)
    assert 'no NATIVE board answered within' in str(error)
    assert LinkState.READY not in states
    _assert_one_clean_line(str(error))


@pytest.mark.parametrize('line', [b'SSC-32 V2.50\r', b'VER 2.50USB\r', b'SSC32-V2.50USB\x00\r',
                                  b'ssc32-v2.50usb\r'])
def test_a_plausible_but_wrong_version_line_is_refused(line):
    with PtyImpostor(respond=answering_ssc32(line)) as impostor:
        error, states = _refusal(impostor, Protocol.SSC32)
    assert isinstance(error, NotABoard), repr(error)
    assert repr(line)[:12] in str(error)
    assert "not a version line like 'SSC32-V2.50USB'" in str(error)
    _assert_one_clean_line(str(error))


def test_a_version_line_followed_by_bytes_nobody_asked_for_is_refused():
    with PtyImpostor(respond=answering_ssc32(b'SSC32-V2.50USB\r\x1b[2J\x07')) as impostor:
        error, states = _refusal(impostor, Protocol.SSC32)
    assert isinstance(error, NotABoard), repr(error)
    assert "b'\\x1b[2J\\x07' (5 bytes) that no request asked for" in str(error)
    _assert_one_clean_line(str(error))


def test_error_bits_no_maestro_has_are_refused():
    with PtyImpostor(respond=answering_maestro(0xED98)) as impostor:
        error, states = _refusal(impostor, Protocol.MAESTRO)
    assert isinstance(error, NotABoard), repr(error)
    assert 'Get Errors answered 0xed98' in str(error)
    assert 'only bits 0-8 are defined' in str(error)
    assert LinkState.READY not in states


def _link_on(impostor: PtyImpostor, protocol: Protocol) -> ServoLink:
    link = ServoLink(impostor.path, protocol=protocol, channels=CHANNELS, options=FAST).start()
    link.wait_ready(5.0)
    return link


def _after_polls(link: ServoLink, polls: int = 3):
    """Return the positions once ``polls`` whole position reads were answered."""
    first = link.stats().acks
    _wait(lambda: link.stats().acks >= first + polls * CHANNELS, what=f'{polls} polls')
    return link.positions()


def test_a_defined_maestro_error_bit_is_accepted_and_named():
    respond = answering_maestro(int(maestro.MaestroError.SERIAL_PROTOCOL))
    with PtyImpostor(respond=respond) as impostor:
        link = _link_on(impostor, Protocol.MAESTRO)
        try:
            assert link.board.firmware == 'Pololu Maestro (errors 0x0010)'
            assert _after_polls(link).pulses_us == (1500,) * CHANNELS
        finally:
            link.close()


@pytest.mark.parametrize('pulse_byte, expected', [
    (150, (1500,) * CHANNELS), (0, (None,) * CHANNELS), (255, None), (49, None), (251, None)])
def test_ssc32_positions_outside_what_the_board_drives_are_unknown(pulse_byte, expected):
    with PtyImpostor(respond=answering_ssc32(b'SSC32-V2.50USB\r', pulse_byte)) as impostor:
        link = _link_on(impostor, Protocol.SSC32)
        try:
            positions = _after_polls(link)
        finally:
            link.close()
    assert (positions.pulses_us if positions else None) == expected


@pytest.mark.parametrize('quarters, expected', [(6000, (1500,) * CHANNELS),
                                                (maestro.DATA_MAX + 1, None), (0xFFFF, None)])
def test_maestro_positions_beyond_fourteen_bits_are_unknown(quarters, expected):
    with PtyImpostor(respond=answering_maestro(0, quarters)) as impostor:
        link = _link_on(impostor, Protocol.MAESTRO)
        try:
            positions = _after_polls(link)
        finally:
            link.close()
    assert (positions.pulses_us if positions else None) == expected


def test_ssc32_positions_are_unknown_while_bytes_nobody_asked_for_arrive():
    """A board that answers and then chatters: each poll sees the chatter, no pose passes."""
    respond = answering_ssc32(b'SSC32-V2.50USB\r')
    chatter = {'on': False}

    def chatty(data: bytes) -> bytes:
        answer = respond(data)
        return answer + (b'\x00\xff' if chatter['on'] and answer else b'')

    with PtyImpostor(respond=chatty) as impostor:
        link = _link_on(impostor, Protocol.SSC32)
        try:
            assert _after_polls(link) is not None
            chatter['on'] = True
            first = link.stats().acks
            _wait(lambda: link.stats().acks >= first + CHANNELS, what='a poll with chatter')
            stamp = link.positions().stamp_s
            _after_polls(link)
            assert link.positions().stamp_s == stamp, 'a report with chatter was taken'
        finally:
            link.close()
