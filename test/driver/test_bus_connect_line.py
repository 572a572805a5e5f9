"""The bus connect line: one shape at every connect, however far the admission got (issue 34.3).

servo_driver said "board connected: XL430-W250 x6" on one run and "board connected: 6 of 6
dynamixel servos answered the ping (ids 1 2 3 4 5 6)" on the next: it read what the bus link
said of the servos when its tick came, before or after the servos' admission. BusOutput now
keeps what the connect's ping found, taken at READY on the link's own thread.
"""

from dataclasses import replace

import pytest

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.driver.bus_output import bus_options, BusOutput
from fabrik_ros.kinematics import load_arm
from fabrik_ros.servo_io import LinkState
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS
from test.nodes.conftest import REPO_ROOT
from test.polling import poll

ARM = load_arm(REPO_ROOT / 'config' / 'so101.yaml')
OPTIONS = replace(bus_options(), reply_timeout_s=0.1, handshake_timeout_s=0.5)
MODELS = {'feetech': 'STS3215', 'dynamixel': 'XL430-W250'}


@pytest.fixture
def bus(tmp_path):
    """Return a factory ``(protocol, silent=ids) -> (SimBoard, BusOutput)``, both started."""
    started = []

    def output_on(protocol, *, silent=()):
        board = SimBoard(protocol, link_path=str(tmp_path / 'ttyBUS')).start()
        for servo_id in silent:
            board.firmware.servo(servo_id).silent = True
        output = BusOutput(board.path, ARM, protocol=protocol, options=OPTIONS)
        started.append((board, output))
        output.start()
        return board, output

    yield output_on
    for board, output in started:
        output.close()
        board.stop()


def _admitted(output, text):
    """Wait until the link names the servos' models: their admission is over."""
    assert poll(lambda: output.link.board == text, timeout_s=10.0), output.link.board
    return output


@pytest.mark.timeout(60)
@pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)
def test_the_connect_line_is_the_pings_count_even_once_the_servos_are_admitted(bus, protocol):
    board, output = bus(protocol)
    _admitted(output, f'{MODELS[protocol.value]} x6')
    assert [event.state for event in output.take_events()] == [LinkState.CONNECTING,
                                                               LinkState.READY]
    assert output.board_name == (f'6 of 6 {protocol.value} servos answered the ping '
                                 '(ids 1 2 3 4 5 6)')
    assert output.link_values()['servos'] == f'{MODELS[protocol.value]} x6'
    board.unplug()
    board.replug()
    assert poll(lambda: LinkState.READY in [event.state for event in output.take_events()],
                timeout_s=10.0)
    _admitted(output, f'{MODELS[protocol.value]} x6')
    assert output.board_name.startswith('6 of 6 '), 'the same shape after a reconnect'


@pytest.mark.timeout(60)
def test_a_silent_servo_is_left_out_of_the_count(bus):
    board, output = bus(BUS_PROTOCOLS[0], silent=(4,))
    _admitted(output, 'STS3215 x5 (silent: id 4)')
    assert output.board_name == '5 of 6 feetech servos answered the ping (ids 1 2 3 5 6)'
