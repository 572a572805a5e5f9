"""The Feetech STS codec against the maker's own SDK (scservo_sdk), and its receiver fed anything.

scservo_sdk is the independent witness: the same requests must give the same bytes, and the
status packets we build must parse in its receiver. The AX-12 (Dynamixel Protocol 1.0) variant
is held to ROBOTIS's dynamixel_sdk the same way.
"""

from dynamixel_sdk import GroupSyncWrite as DxlGroupSyncWrite
from dynamixel_sdk import PacketHandler as DxlPacketHandler
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
import scservo_sdk as scs

from fabrik_ros.servo_io.protocols import bus_codec
from fabrik_ros.servo_io.protocols.bus_codec import InstructionPacket, StatusPacket
from fabrik_ros.servo_io.protocols.feetech import DynamixelOneCodec, FeetechCodec

IDS = st.integers(0, 0xFC)
BYTE = st.integers(0, 255)


class CapturePort:
    """Stands in for an SDK's PortHandler: keeps what the SDK writes, reads from ``answer``."""

    def __init__(self, answer: bytes = b'') -> None:
        self.is_using = False
        self.written = bytearray()
        self._answer = bytearray(answer)

    def clearPort(self):  # noqa: N802 (the SDK's names)
        pass

    def writePort(self, packet):  # noqa: N802
        self.written += bytes(packet)
        return len(packet)

    def readPort(self, length):  # noqa: N802
        chunk = bytes(self._answer[:length])
        del self._answer[:length]
        return chunk

    def setPacketTimeout(self, packet_length):  # noqa: N802
        pass

    def isPacketTimeout(self):  # noqa: N802
        return True


def sdk_bytes(send) -> bytes:
    """Return the first packet scservo_sdk writes when ``send(port, packet_handler)`` runs."""
    port = CapturePort()
    send(port, scs.PacketHandler(0))
    return bytes(port.written)


# -- requests: our bytes are the SDK's bytes ----------------------------------------------------

def test_ping_is_what_scservo_sdk_sends():
    assert FeetechCodec().ping(7) == sdk_bytes(lambda port, ph: ph.ping(port, 7))[:6]


def test_read_is_what_scservo_sdk_sends():
    ours = FeetechCodec().read(3, 56, 8)
    assert ours == sdk_bytes(lambda port, ph: ph.readTxRx(port, 3, 56, 8))
    assert ours == bytes.fromhex('ffff 03 04 02 38 08 b6')


def test_write_is_what_scservo_sdk_sends():
    ours = FeetechCodec().write(5, 42, bytes((0x34, 0x12)))
    assert ours == sdk_bytes(lambda port, ph: ph.write2ByteTxRx(port, 5, 42, 0x1234))


@given(st.dictionaries(st.integers(0, 0xFC), st.binary(min_size=2, max_size=2), min_size=1,
                       max_size=12))
def test_sync_write_is_what_scservo_sdk_sends(goals):
    def send(port, ph):
        group = scs.GroupSyncWrite(port, ph, 42, 2)
        for servo_id in sorted(goals):
            group.addParam(servo_id, list(goals[servo_id]))
        group.txPacket()

    assert FeetechCodec().sync_write(42, 2, goals) == sdk_bytes(send)


@given(st.lists(IDS, min_size=1, max_size=20, unique=True))
def test_sync_read_is_what_scservo_sdk_sends(ids):
    def send(port, ph):
        group = scs.GroupSyncRead(port, ph, 56, 2)
        for servo_id in ids:
            group.addParam(servo_id)
        group.txPacket()

    assert FeetechCodec().sync_read(56, 2, ids) == sdk_bytes(send)


# -- status packets: ours parse in the SDK's receiver -------------------------------------------

@given(st.integers(0, 0xFD), st.integers(0, 0x7F), st.binary(max_size=40))
def test_status_packets_parse_in_scservo_sdks_receiver(servo_id, error, params):
    port = CapturePort(FeetechCodec().status(servo_id, error, params))
    data, result, sdk_error = scs.PacketHandler(0).readRx(port, servo_id, len(params))
    assert result == scs.COMM_SUCCESS
    assert (bytes(data), sdk_error) == (params, error)


def test_error_bits_are_named_as_the_sdk_names_them():
    codec = FeetechCodec()
    ph = scs.PacketHandler(0)
    words = {'input voltage': 'Input voltage', 'angle sensor': 'Angle sen',
             'overheat': 'Overheat', 'overcurrent': 'OverEle', 'overload': 'Overload'}
    for bit in (0x01, 0x02, 0x04, 0x08, 0x20):
        (word,) = codec.error_words(bit)
        assert words[word] in ph.getRxPacketError(bit)
    assert codec.error_words(0x25) == ('input voltage', 'overheat', 'overload')
    assert codec.error_words(0x10) == ('bit 4',)
    assert codec.error_words(0) == ()


# -- Dynamixel Protocol 1.0 (AX-12) against dynamixel_sdk --------------------------------------

def dxl_bytes(send) -> bytes:
    port = CapturePort()
    send(port, DxlPacketHandler(1.0))
    return bytes(port.written)


def test_ax12_requests_are_what_dynamixel_sdk_protocol_1_sends():
    codec = DynamixelOneCodec()
    assert codec.ping(1) == dxl_bytes(lambda port, ph: ph.ping(port, 1))[:6]
    assert codec.read(1, 36, 2) == dxl_bytes(lambda port, ph: ph.readTxRx(port, 1, 36, 2))
    assert codec.write(2, 30, b'\x00\x02') == dxl_bytes(
        lambda port, ph: ph.write2ByteTxRx(port, 2, 30, 512))

    def sync(port, ph):
        group = DxlGroupSyncWrite(port, ph, 30, 2)
        group.addParam(1, [0x00, 0x02])
        group.addParam(4, [0xff, 0x03])
        group.txPacket()

    assert codec.sync_write(30, 2, {4: b'\xff\x03', 1: b'\x00\x02'}) == dxl_bytes(sync)


def test_ax12_has_no_sync_read_and_its_own_error_bits():
    with pytest.raises(ValueError) as raised:
        DynamixelOneCodec().sync_read(36, 2, [1, 2])
    assert 'no sync read' in str(raised.value)
    assert DynamixelOneCodec().error_words(0x50) == ('checksum', 'instruction')


# -- round trips ----------------------------------------------------------------------------

@given(st.integers(0, 0xFE), BYTE, st.binary(max_size=248))
def test_an_instruction_packet_reads_back_as_sent(servo_id, instruction, params):
    codec = FeetechCodec()
    codec.feed(codec.packet(servo_id, instruction, params))
    assert codec.take_instruction() == InstructionPacket(servo_id, instruction, params)
    assert codec.pending == 0


@given(st.lists(st.tuples(st.integers(0, 0xFD), st.integers(0, 0x7F), st.binary(max_size=30)),
                max_size=8),
       st.lists(st.binary(max_size=12).map(lambda junk: junk.replace(b'\xff', b'')),
                min_size=9, max_size=9),
       st.integers(1, 7))
def test_statuses_between_garbage_without_ff_are_all_found_in_order(statuses, junk, chunk):
    codec = FeetechCodec()
    stream = junk[0] + b''.join(codec.status(*status) + junk[i + 1]
                                for i, status in enumerate(statuses))
    found = []
    for start in range(0, len(stream), chunk):          # the line delivers it in pieces
        codec.feed(stream[start:start + chunk])
        status = codec.take_status()
        while status is not None:
            found.append(status)
            status = codec.take_status()
    assert found == [StatusPacket(*status) for status in statuses]
    assert codec.garbage_bytes == sum(map(len, junk[:len(statuses) + 1]))
    assert codec.bad_checksums == 0


@settings(max_examples=300)
@given(st.binary(max_size=600), st.lists(st.sampled_from([b'\xff\xff', b'\xff', b'\x00']),
                                         max_size=20))
def test_random_bytes_never_raise_and_only_checked_packets_come_out(noise, markers):
    stream = noise + b''.join(markers) + noise[::-1]
    codec = FeetechCodec()
    codec.feed(stream)
    status = codec.take_status()
    while status is not None:
        assert codec.status(status.id, status.error, status.params) in stream
        status = codec.take_status()
    assert codec.pending <= bus_codec.BUFFER_MAX


def test_a_corrupted_status_is_dropped_and_the_next_one_is_still_found():
    codec = FeetechCodec()
    damaged = bytearray(codec.status(1, 0, b'\x00\x08'))
    damaged[5] ^= 0x10
    codec.feed(bytes(damaged) + codec.status(2, 0, b'\x01\x08'))
    assert codec.take_status() == StatusPacket(2, 0, b'\x01\x08')
    assert codec.bad_checksums == 1


def test_a_half_packet_waits_for_the_rest():
    codec = FeetechCodec()
    packet = codec.status(6, 0x20, b'\x10\x00')
    codec.feed(packet[:5])
    assert codec.take_status() is None
    codec.feed(packet[5:])
    assert codec.take_status() == StatusPacket(6, 0x20, b'\x10\x00')


def test_a_status_with_bit_7_of_its_error_is_no_status_as_the_sdk_reads_it():
    codec = FeetechCodec()
    codec.feed(codec.status(1, 0x80, b''))
    assert codec.take_status() is None
    assert codec.foreign_packets == 1


def test_a_flood_keeps_the_buffer_bounded():
    codec = FeetechCodec()
    codec.feed(b'\xff\xff\x01\xfa' + bytes(3 * bus_codec.BUFFER_MAX))
    assert codec.pending <= bus_codec.BUFFER_MAX
    assert codec.take_status() is None


# -- refusals name the value and the rule ---------------------------------------------------------

@pytest.mark.parametrize(('build', 'fragment'), [
    (lambda codec: codec.ping(0xFE), 'servo id = 254, must be within [0, 252]'),
    (lambda codec: codec.read(1, 56, 0), 'size = 0, must be within [1, 255]'),
    (lambda codec: codec.read(1, 256, 2), 'address = 256, must be within [0, 255]'),
    (lambda codec: codec.write(1, 42, b''), 'data is empty'),
    (lambda codec: codec.sync_write(42, 2, {1: b'\x00'}), 'data_by_id[1] has 1 bytes'),
    (lambda codec: codec.sync_write(42, 2, {}), 'data_by_id is empty'),
    (lambda codec: codec.sync_read(56, 2, [1, 1]), 'must not repeat an id'),
    (lambda codec: codec.packet(1, 3, bytes(249)), 'packet length = 251, must be at most 250'),
])
def test_bad_requests_are_refused_with_the_value_and_the_rule(build, fragment):
    with pytest.raises(ValueError) as raised:
        build(FeetechCodec())
    assert fragment in str(raised.value)


def test_a_write_may_go_to_every_servo_at_once():
    assert FeetechCodec().write(0xFE, 40, b'\x00')[2] == 0xFE


@pytest.mark.parametrize('params', [0, 2, 20, 248])
def test_the_sizes_the_line_budget_uses_are_the_packets_lengths(params):
    codec = FeetechCodec()
    assert codec.instruction_size(params) == len(codec.packet(1, 3, bytes(params)))
    assert codec.status_size(params) == len(codec.status(1, 0, bytes(params)))
