"""SerialPort over raw ptys: pyserial's failures arrive as LinkTimeout and LinkLost."""

import os
import threading
import time
import tty

import pytest

from fabrik_ros.servo_io import Deadline, LinkLost, LinkTimeout, open_serial
from fabrik_ros.servo_io.serial_port import SerialPort


@pytest.fixture
def pty_pair():
    """Return ``(master_fd, slave_path)`` of a raw pty nobody reads; closed afterwards."""
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    yield master, path
    try:
        os.close(master)
    except OSError:
        pass     # the test closed it already (unplug)


@pytest.mark.timeout(10)
def test_write_that_blocks_past_the_write_timeout_raises_link_timeout(pty_pair):
    _, path = pty_pair
    port = SerialPort.open(path, open_serial, 115200, 0.1)
    try:
        with pytest.raises(LinkTimeout) as raised:
            for _ in range(1000):          # nobody reads: the pty buffer fills, then blocks
                port.write(bytes(4096))
    finally:
        port.close()
    assert 'bytes blocked longer than 0.1 s' in str(raised.value)


@pytest.mark.timeout(10)
def test_read_after_the_other_end_vanished_raises_link_lost(pty_pair):
    master, path = pty_pair
    port = SerialPort.open(path, open_serial, 115200, 0.1)
    os.close(master)
    try:
        with pytest.raises(LinkLost) as raised:
            port.read(0.05, threading.Event())
    finally:
        port.close()
    message = str(raised.value)
    assert message.startswith(f'{path}: read failed'), message
    assert message.count('read failed') == 1 and message.count(path) == 1, message


@pytest.mark.timeout(10)
def test_read_returns_what_arrived_and_nothing_after_a_short_wait(pty_pair):
    master, path = pty_pair
    port = SerialPort.open(path, open_serial, 115200, 0.1)
    try:
        os.write(master, b'abc')
        received = b''
        deadline = Deadline(2.0)
        while len(received) < 3 and not deadline.expired():
            received += port.read(0.5, threading.Event())
        after = port.read(0.001, threading.Event())
    finally:
        port.close()
    assert received == b'abc' and after == b''


def test_missing_path_raises_link_lost(tmp_path):
    path = str(tmp_path / 'ttyGONE')
    with pytest.raises(LinkLost) as raised:
        SerialPort.open(path, open_serial, 115200, 0.1)
    assert f'{path}: no such device (unplugged?)' in str(raised.value)


def test_pyserial_urls_are_opened_without_a_file_check():
    port = SerialPort.open('loop://', open_serial, 115200, 0.1)
    port.write(b'echo')
    port.wake()
    data = port.read(0.5, threading.Event())
    port.close()
    assert data.startswith(b'e')


def _read_in_thread(port, max_wait_s):
    """Start ``port.read(max_wait_s)`` in a thread; return the thread and the list it fills."""
    received = []
    thread = threading.Thread(target=lambda: received.append(port.read(max_wait_s,
                                                                        threading.Event())))
    thread.start()
    return thread, received


@pytest.mark.timeout(30)
def test_a_long_wait_on_a_device_port_ends_with_the_first_bytes_or_a_wake(pty_pair):
    """An idle link thread sleeps until its next deadline, not in 10 ms slices (issue 34)."""
    master, path = pty_pair
    port = SerialPort.open(path, open_serial, 115200, 0.1)
    try:
        thread, received = _read_in_thread(port, 120.0)
        os.write(master, b'x')
        thread.join(20.0)
        assert received == [b'x'], 'the bytes end the wait'
        thread, received = _read_in_thread(port, 120.0)
        port.wake()
        thread.join(20.0)
        assert received == [b''], 'a wake ends the wait'
        port.wake()       # a wake before the wait: it ends the next one
        assert port.read(120.0, threading.Event()) == b''
        started = time.monotonic()
        assert port.read(0.3, threading.Event()) == b''
        assert time.monotonic() - started >= 0.3, 'a wait as long as asked, not a slice'
    finally:
        port.close()
