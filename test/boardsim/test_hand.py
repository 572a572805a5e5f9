"""The simulated hand: a limp bus servo moved back and forth (a leader arm in use)."""

import pytest

from fabrik_ros.boardsim import cli, SimBoard
from fabrik_ros.boardsim.hand import Hand, HandSweep, parse_sweep
from fabrik_ros.servo_io import Protocol
from test.polling import poll


def test_a_hand_moves_a_limp_servo_about_where_it_stood_and_a_torqued_one_drives_back():
    now = [100.0]
    firmware = SimBoard(Protocol.DYNAMIXEL, channels=2).firmware       # limp at power-up
    centre = firmware.present_positions(now[0])[0]
    hand = Hand(firmware, [HandSweep(1, 300.0, 4.0)], clock=lambda: now[0]).start()
    try:
        now[0] = 101.0                          # a quarter of the round trip
        assert poll(lambda: firmware.present_positions(now[0])[0] == centre + 300)
        now[0] = 103.0
        assert poll(lambda: firmware.present_positions(now[0])[0] == centre - 300)
    finally:
        hand.stop()
    assert firmware.present_positions(now[0])[1] == centre, 'the other servo is untouched'


@pytest.mark.parametrize('text', ['3', '3:300', 'x:300:6', '3:300:0.1', '3:-5:6', '3:1:2:3'])
def test_a_sweep_other_than_id_counts_period_is_refused(text):
    with pytest.raises(ValueError, match='ID:AMPLITUDE_COUNTS:PERIOD_S'):
        parse_sweep(text)


@pytest.mark.parametrize('args, rule', [
    (['--hand', '1:300:6'], '--hand: --protocol native drives PWM servos'),
    (['--protocol', 'feetech', '--channels', '6', '--hand', '7:300:6'],
     '--hand 7:...: no servo with id 7 (ids 1..6)'),
    (['--protocol', 'feetech', '--hand', 'six'], "argument --hand: 'six': must be"),
])
def test_a_hand_the_board_cannot_have_is_refused_before_it_starts(args, rule, capsys, tmp_path):
    with pytest.raises(SystemExit) as refused:
        cli.main([*args, '--link', str(tmp_path / 'tty')])
    assert refused.value.code == 2
    assert f'sim_device: error: {rule}' in capsys.readouterr().err
