"""The firmware image: fits an Uno, has only its own interrupt handlers, builds the IDE way."""

from pathlib import Path
import re
import subprocess

import pytest

from fabrik_ros.boardsim.simavr_board import (
    BUILD_DIR,
    build_hardware,
    FIRMWARE_ELF,
    HARNESS,
    SimavrBoard,
)
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import Command, Reply
from test.hardware.frame_host import FrameHost

# An Uno has 32 KiB of flash, 512 B of it taken by the Optiboot bootloader, and 2 KiB of RAM;
# keep at least half the RAM for the stack.
FLASH_BYTES = 32 * 1024 - 512
RAM_BUDGET_BYTES = 1024
# ATmega328P vectors: 11 TIMER1_COMPA (edges), 12 TIMER1_COMPB (1 ms wake-up), 18 USART_RX,
# 19 USART_UDRE. 16 would be the Arduino core's Timer0 millis interrupt.
EXPECTED_VECTORS = {'__vector_11', '__vector_12', '__vector_18', '__vector_19'}
ARDUINO_MK = Path('/usr/share/arduino/Arduino.mk')


def section_sizes(elf: Path) -> dict[str, int]:
    output = subprocess.run(['avr-size', '-A', str(elf)], capture_output=True, text=True,
                            check=True).stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r'^(\.\w+)\s+(\d+)', output, re.M)}


def defined_vectors(elf: Path) -> set[str]:
    output = subprocess.run(['avr-nm', str(elf)], capture_output=True, text=True,
                            check=True).stdout
    return set(re.findall(r'\bT (__vector_\d+)$', output, re.M))


def test_firmware_fits_an_uno_with_its_bootloader(hardware_build):
    sizes = section_sizes(FIRMWARE_ELF)
    assert sizes['.text'] + sizes['.data'] <= FLASH_BYTES
    assert sizes['.data'] + sizes['.bss'] <= RAM_BUDGET_BYTES
    hex_lines = (BUILD_DIR / 'fabrik_servo_bridge.hex').read_text().splitlines()
    assert hex_lines[0].startswith(':') and hex_lines[-1] == ':00000001FF'


def test_firmware_handles_only_its_own_interrupts(hardware_build):
    assert defined_vectors(FIRMWARE_ELF) == EXPECTED_VECTORS


@pytest.mark.timeout(120)
@pytest.mark.skipif(not ARDUINO_MK.exists(), reason='arduino-mk not installed '
                    '(/usr/share/arduino/Arduino.mk); it builds the sketch the Arduino IDE way')
def test_sketch_built_with_the_arduino_core_behaves_the_same(hardware_build):
    build_hardware('arduino')
    elf = BUILD_DIR / 'arduino' / 'fabrik_servo_bridge.elf'
    # The sketch's own main() keeps the core's init() and its Timer0 interrupt out.
    assert defined_vectors(elf) == EXPECTED_VECTORS
    assert HARNESS.exists()
    with SimavrBoard(elf=elf) as board:
        host = FrameHost(board.port)
        info = host.request(native.encode_ping(host.next_seq()))
        assert info.cmd == Reply.DATA and info.payload[0] == Command.PING
        host.request(native.encode_set_pulses(host.next_seq(), [1234], 0))
        host.request(native.encode_enable(host.next_seq(), 0b1))
        board.wait_for(lambda: len(board.pulses(0)) >= 2, 10.0, 'two pulses on channel 0')
        assert board.pulses(0)[-1].width_us == pytest.approx(1234, abs=2)
        host.close()
