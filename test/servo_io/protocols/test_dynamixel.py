"""The Dynamixel Protocol 2.0 codec against the e-Manual's packets and ROBOTIS' own SDK.

Expected bytes come from outside this package: the e-Manual's example packets (Protocol 2.0
page: ping, read, write, sync read, sync write and their status packets, copied as hex below)
and dynamixel_sdk's Protocol2PacketHandler, fed a port that only records what it would write.
"""

import random

from dynamixel_sdk import GroupSyncRead, GroupSyncWrite, PacketHandler
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.servo_io.protocols import dynamixel
from fabrik_ros.servo_io.protocols.bus_codec import InstructionPacket, line_time_us, StatusPacket
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec

CODEC = DynamixelCodec()
encode_ping = CODEC.ping
encode_read = CODEC.read
encode_write = CODEC.write
encode_sync_read = CODEC.sync_read
encode_sync_write = CODEC.sync_write
encode_status = CODEC.status

# The e-Manual's examples (emanual.robotis.com/docs/en/dxl/protocol2/, "Instruction Details").
MANUAL_INSTRUCTIONS = {
    'ping id 1': (lambda: encode_ping(1), 'ff ff fd 00 01 03 00 01 19 4e'),
    'broadcast ping': (lambda: CODEC.packet(0xFE, dynamixel.Instruction.PING, b''),
                       'ff ff fd 00 fe 03 00 01 31 42'),
    'read present position': (lambda: encode_read(1, 132, 4),
                              'ff ff fd 00 01 07 00 02 84 00 04 00 1d 15'),
    'write goal 512': (lambda: encode_write(1, 116, (512).to_bytes(4, 'little')),
                       'ff ff fd 00 01 09 00 03 74 00 00 02 00 00 ca 89'),
    'sync read ids 1 2': (lambda: encode_sync_read(132, 4, [1, 2]),
                          'ff ff fd 00 fe 09 00 82 84 00 04 00 01 02 ce fa'),
    'sync write 150 170': (
        lambda: encode_sync_write(116, 4, {1: (150).to_bytes(4, 'little'),
                                           2: (170).to_bytes(4, 'little')}),
        'ff ff fd 00 fe 11 00 83 74 00 04 00 01 96 00 00 00 02 aa 00 00 00 82 87'),
}
MANUAL_STATUS = {
    'ping answer id 1': ('ff ff fd 00 01 07 00 55 00 06 04 26 65 5d', 1, '06 04 26'),
    'ping answer id 2': ('ff ff fd 00 02 07 00 55 00 06 04 26 6f 6d', 2, '06 04 26'),
    'read answer 166': ('ff ff fd 00 01 08 00 55 00 a6 00 00 00 8c c0', 1, 'a6 00 00 00'),
    'sync read answer 2079': ('ff ff fd 00 02 08 00 55 00 1f 08 00 00 ba be', 2, '1f 08 00 00'),
    'write answer': ('ff ff fd 00 01 04 00 55 00 a1 0c', 1, ''),
}


@pytest.mark.parametrize('name', MANUAL_INSTRUCTIONS)
def test_instruction_packets_are_the_e_manuals(name):
    build, expected = MANUAL_INSTRUCTIONS[name]
    assert build().hex(' ') == expected


@pytest.mark.parametrize('name', MANUAL_STATUS)
def test_the_e_manuals_status_packets_are_received_and_rebuilt(name):
    wire, servo_id, params = MANUAL_STATUS[name]
    receiver = DynamixelCodec()
    receiver.feed(bytes.fromhex(wire))
    assert receiver.take_status() == StatusPacket(servo_id, 0, bytes.fromhex(params))
    assert encode_status(servo_id, 0, bytes.fromhex(params)).hex(' ') == wire


def test_crc_is_crc16_buypass_by_its_catalogue_check_value():
    # The CRC catalogue's check value for CRC-16/BUYPASS (poly 0x8005, init 0, no reflection).
    assert dynamixel.crc16(b'123456789') == 0xFEE8


@given(st.binary(max_size=64))
def test_crc_is_the_sdks(data):
    assert dynamixel.crc16(data) == PacketHandler(2.0).updateCRC(0, list(data), len(data))


def test_stuffing_adds_fd_after_each_header_pattern_in_the_body():
    packet = encode_write(1, 116, bytes.fromhex('ff ff fd 01'))
    assert packet[7:-2].hex(' ') == '03 74 00 ff ff fd fd 01'
    assert int.from_bytes(packet[5:7], 'little') == len(packet) - 7


@given(st.binary(max_size=40))
def test_unstuffing_undoes_stuffing_and_stuffed_bodies_hold_no_header(body):
    stuffed = dynamixel.stuff(body)
    assert dynamixel.unstuff(stuffed) == body
    assert dynamixel.HEADER not in stuffed
    index = stuffed.find(b'\xff\xff\xfd')
    while index >= 0:
        assert stuffed[index + 3:index + 4] == b'\xfd'
        index = stuffed.find(b'\xff\xff\xfd', index + 1)


def test_a_header_pattern_without_its_added_fd_is_broken_stuffing():
    assert dynamixel.unstuff(bytes.fromhex('03 ff ff fd 00 01')) is None
    assert dynamixel.unstuff(bytes.fromhex('03 ff ff fd')) is None


@pytest.mark.parametrize('build', [
    lambda: encode_ping(253), lambda: encode_ping(0xFE), lambda: encode_read(0xFE, 0, 1),
    lambda: encode_read(1, 0, 0),
    lambda: encode_write(1, 70000, b'\x00'), lambda: encode_write(1, 64, b''),
    lambda: encode_sync_write(116, 4, {1: b'\x00\x00'}), lambda: encode_sync_read(132, 4, []),
    lambda: encode_sync_read(132, 4, [1, 1]), lambda: encode_sync_write(116, 4, {300: bytes(4)}),
])
def test_requests_a_servo_cannot_take_are_refused(build):
    with pytest.raises(ValueError):
        build()


# -- the same requests through ROBOTIS' SDK --------------------------------------------------

class RecordingPort:
    """What dynamixel_sdk needs of a PortHandler to send a packet; records the bytes."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.is_using = False

    def clearPort(self):  # noqa: N802 (the SDK's name)
        pass

    def writePort(self, packet):  # noqa: N802
        self.sent.append(bytes(packet))
        return len(packet)

    def setPacketTimeout(self, size):  # noqa: N802
        pass

    def isPacketTimeout(self):  # noqa: N802
        return True

    def readPort(self, size):  # noqa: N802
        return []

    def getBaudRate(self):  # noqa: N802
        return 1_000_000


def sdk_wire(packet: bytes) -> bytes:
    """Return ``packet`` as the SDK's own stuffing and CRC functions frame it.

    dynamixel_sdk 4.1.0's txPacket drops the result of addStuffing when stuffing makes a packet
    longer (it rebinds a local list), so its wire bytes are unstuffed then; this builds what
    txPacket would send with that result kept: the SDK's addStuffing, then its updateCRC.
    """
    handler = PacketHandler(2.0)
    unstuffed = list(packet[:7]) + list(dynamixel.unstuff(packet[7:-2])) + [0, 0]
    length = len(unstuffed) - 7
    unstuffed[5:7] = [length & 0xFF, length >> 8]
    stuffed = handler.addStuffing(unstuffed)
    total = stuffed[5] + (stuffed[6] << 8) + 7
    crc = handler.updateCRC(0, stuffed, total - 2)
    return bytes(stuffed[:total - 2]) + bytes((crc & 0xFF, crc >> 8))


servo_ids = st.integers(0, dynamixel.MAX_ID)
addresses = st.integers(0, 0xFFFF)


def sent_by_sdk(call) -> bytes:
    port = RecordingPort()
    call(PacketHandler(2.0), port)
    (packet,) = port.sent
    return packet


@settings(max_examples=200)
@given(servo_ids, addresses, st.integers(1, 0xFFFF))
def test_ping_and_read_are_the_sdks_bytes(servo_id, address, size):
    assert encode_ping(servo_id) == sent_by_sdk(lambda h, p: h.ping(p, servo_id))
    assert encode_read(servo_id, address, size) == sent_by_sdk(
        lambda h, p: h.readTx(p, servo_id, address, size))


@settings(max_examples=300)
@given(servo_ids, addresses, st.binary(min_size=1, max_size=8)
       | st.sampled_from([b'\xff\xff\xfd', b'\x00\xff\xff\xfd\xfd', b'\xff\xff\xfd\x00']))
def test_write_is_the_sdks_bytes_stuffing_and_crc_included(servo_id, address, data):
    ours = encode_write(servo_id, address, data)
    sdk = sent_by_sdk(lambda h, p: h.writeTxOnly(p, servo_id, address, len(data), list(data)))
    if ours == sdk:
        return
    assert dynamixel.stuff(data) != data        # only where the SDK's txPacket skips stuffing
    assert ours == sdk_wire(ours)


@settings(max_examples=200)
@given(addresses, st.integers(1, 4), st.lists(servo_ids, min_size=1, max_size=8, unique=True),
       st.data())
def test_sync_write_and_sync_read_are_the_sdks_bytes(address, size, ids, data):
    values = {i: data.draw(st.binary(min_size=size, max_size=size)) for i in ids}
    port = RecordingPort()
    handler = PacketHandler(2.0)
    writer = GroupSyncWrite(port, handler, address, size)
    for servo_id in sorted(values):             # ours go in ascending order
        assert writer.addParam(servo_id, list(values[servo_id]))
    writer.txPacket()
    reader = GroupSyncRead(port, handler, address, size)
    for servo_id in ids:
        assert reader.addParam(servo_id)
    reader.txPacket()
    sync_write, sync_read = port.sent
    ours = encode_sync_write(address, size, values)
    assert ours in (sync_write, sdk_wire(ours))
    assert encode_sync_read(address, size, ids) == sync_read


# -- the receiver --------------------------------------------------------------------------

statuses = st.builds(encode_status, servo_ids, st.integers(0, 255),
                     st.binary(max_size=12) | st.just(b'\xff\xff\xfd\x00'))
noise = st.binary(max_size=20).map(lambda b: b.replace(b'\xff', b'\x00'))


def taken(receiver: DynamixelCodec) -> list[StatusPacket]:
    found = []
    while (status := receiver.take_status()) is not None:
        found.append(status)
    return found


@settings(max_examples=300)
@given(st.lists(st.tuples(noise, statuses), max_size=6), st.data())
def test_receiver_finds_every_packet_among_noise_in_any_chunks(items, data):
    stream = b''.join(junk + packet for junk, packet in items)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    receiver = DynamixelCodec()
    got = []
    for start, end in zip([0] + cuts, cuts + [len(stream)], strict=True):
        receiver.feed(stream[start:end])
        got += taken(receiver)
    assert [encode_status(s.id, s.error, s.params) for s in got] == [p for _, p in items]
    assert receiver.bad_checksums == 0


@settings(max_examples=500)
@given(st.lists(st.binary(max_size=40) | statuses | st.just(dynamixel.HEADER), max_size=12),
       st.integers(0, 2**32))
def test_receiver_never_raises_and_yields_only_packets_that_were_sent_whole(parts, seed):
    stream = bytearray(b''.join(parts))
    rng = random.Random(seed)
    for _ in range(rng.randrange(3)):
        if stream:
            stream[rng.randrange(len(stream))] ^= 1 << rng.randrange(8)
    receiver = DynamixelCodec()
    receiver.feed(bytes(stream))
    for status in taken(receiver):
        wire = encode_status(status.id, status.error, status.params)
        assert wire in stream                    # a whole packet, its CRC as sent
    while receiver.take_instruction() is not None:
        pass


def test_instructions_are_read_on_the_servo_side_and_statuses_are_not():
    servo = DynamixelCodec()
    servo.feed(encode_status(1, 0, b'') + encode_write(3, 116, b'\x01\x02\x03\x04'))
    assert servo.take_instruction() == InstructionPacket(
        3, dynamixel.Instruction.WRITE, bytes.fromhex('74 00 01 02 03 04'))
    assert servo.foreign_packets == 1


def test_a_damaged_length_does_not_hold_back_the_packets_behind_it():
    first = bytearray(encode_status(1, 0, b'\x01\x02'))
    first[5] = 0xF0                              # the length now claims 240 bytes
    receiver = DynamixelCodec()
    receiver.feed(bytes(first) + encode_status(2, 0, b'\x03'))
    assert taken(receiver) == [StatusPacket(2, 0, b'\x03')]
    assert receiver.bad_checksums == 1


def test_bad_crc_and_garbage_are_counted():
    good = encode_status(3, 0, b'\x10')
    bad = bytearray(good)
    bad[-1] ^= 0x01
    receiver = DynamixelCodec()
    receiver.feed(b'\x00\x01' + bytes(bad) + good)
    assert taken(receiver) == [StatusPacket(3, 0, b'\x10')]
    assert receiver.bad_checksums == 1
    assert receiver.garbage_bytes == 2 + len(bad) - 1


def test_error_byte_and_hardware_error_in_words():
    assert CODEC.error_words(0) == ()
    assert CODEC.error_words(0x07) == (
        'access error (read-only or undefined address, or an EEPROM write with torque on)',)
    assert CODEC.error_words(0x80)[0].startswith('alert')
    assert CODEC.error_words(0x0F) == ('unknown error number 15',)
    assert CODEC.hardware_error_words(0x3D) == (
        'input voltage', 'overheating', 'motor encoder', 'electrical shock', 'overload')
    assert CODEC.hardware_error_words(0x82) == ('bit 1', 'bit 7')


def test_the_hosts_own_request_echoed_by_the_adapter_is_not_a_status():
    host = DynamixelCodec()
    host.feed(encode_read(1, 132, 4) + encode_status(1, 0, bytes(4)))
    assert taken(host) == [StatusPacket(1, 0, bytes(4))]
    assert host.foreign_packets == 1


def test_a_servo_side_codec_takes_an_unstuffed_packet_by_length_as_the_servo_does():
    # What dynamixel_sdk 4.1.0 sends for a write whose data hold FF FF FD (see sdk_wire).
    unstuffed = sent_by_sdk(lambda h, p: h.writeTxOnly(p, 1, 20, 4, [0xFF, 0xFF, 0xFD, 0xFF]))
    host, servo = DynamixelCodec(), DynamixelCodec(strict_stuffing=False)
    host.feed(unstuffed)
    servo.feed(unstuffed)
    assert host.take_instruction() is None
    assert servo.take_instruction() == InstructionPacket(
        1, dynamixel.Instruction.WRITE, bytes.fromhex('14 00 ff ff fd ff'))


def test_line_time_of_a_command_and_a_feedback_round_at_1_mbaud():
    ids = [1, 2, 3, 4, 5, 6]
    # Sizes by hand from the e-Manual's packet layouts (10 bytes around an instruction's
    # parameters, 11 around a status's): sync write of 6 goals = 4 + 6 x (1 + 4) params;
    # of 6 Profile_Velocity + Goal_Position blocks = 4 + 6 x (1 + 8); sync read of 6 = 4 + 6.
    goals = CODEC.sync_write(116, 4, {i: (2048).to_bytes(4, 'little') for i in ids})
    blocks = CODEC.sync_write(112, 8, {i: bytes(8) for i in ids})
    ask = CODEC.sync_read(132, 4, ids)
    answer = CODEC.status(1, 0, (2048).to_bytes(4, 'little'))
    assert [len(goals), len(blocks), len(ask), len(answer)] == [44, 68, 20, 15]
    assert CODEC.instruction_size(4 + 6 * 5) == len(goals)
    assert CODEC.instruction_size(4 + 6 * 9) == len(blocks)
    assert CODEC.instruction_size(4 + 6) == len(ask)
    assert CODEC.status_size(4) == len(answer)
    assert line_time_us(len(goals), 1_000_000) == 440.0
    assert line_time_us(len(blocks), 1_000_000) == 680.0
    feedback = line_time_us(CODEC.instruction_size(10) + 6 * CODEC.status_size(4), 1_000_000)
    assert feedback == 1100.0        # plus each servo's Return Delay Time (factory 500 us)
