"""The protocol enum splits into PWM boards and bus servos, and each kind finds its own driver."""

import pytest

from fabrik_ros.servo_io.protocols.dialect import (
    BUS_PROTOCOLS,
    OFFERED_PROTOCOLS,
    Protocol,
    PWM_PROTOCOLS,
)
from fabrik_ros.servo_io.protocols.dialects import dialect_type


def test_every_protocol_is_either_a_pwm_board_or_a_bus_and_is_bus_says_which():
    assert set(PWM_PROTOCOLS) | set(BUS_PROTOCOLS) == set(Protocol)
    assert not set(PWM_PROTOCOLS) & set(BUS_PROTOCOLS)
    assert [p for p in Protocol if p.is_bus] == list(BUS_PROTOCOLS)
    assert Protocol('feetech') is Protocol.FEETECH and Protocol('dynamixel').is_bus


def test_only_known_protocols_are_offered_and_every_pwm_protocol_is():
    assert set(PWM_PROTOCOLS) <= set(OFFERED_PROTOCOLS) <= set(Protocol)


@pytest.mark.parametrize('protocol', PWM_PROTOCOLS, ids=lambda p: p.value)
def test_every_pwm_protocol_has_a_dialect(protocol):
    assert dialect_type(protocol).board_channels >= 1


@pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)
def test_a_bus_protocol_is_refused_a_pwm_dialect_by_name(protocol):
    with pytest.raises(ValueError, match=f"'{protocol.value}' addresses bus servos by id"):
        dialect_type(protocol)
