"""The PM QoS request that keeps idle CPUs quick to wake: what it writes, holds and withdraws."""

import errno
import os
from pathlib import Path
import struct

from hypothesis import given
from hypothesis import strategies as st
import pytest

from fabrik_ros.process import cpu_wake_latency
from fabrik_ros.process.cpu_wake_latency import (
    current_bound_us,
    DEVICE,
    MAX_LATENCY_US,
    NOT_ASKED,
    WakeLatencyRequest,
)

_REAL_DEVICE_WRITABLE = DEVICE.exists() and os.access(DEVICE, os.W_OK)


def _open_fds() -> set[str]:
    return set(os.listdir('/proc/self/fd'))


@given(st.integers(0, MAX_LATENCY_US))
def test_the_request_is_the_bound_as_a_native_32_bit_integer_kept_open(tmp_path_factory,
                                                                       latency_us):
    device = tmp_path_factory.mktemp('qos') / 'cpu_dma_latency'
    device.write_bytes(b'')
    before = _open_fds()
    request = WakeLatencyRequest(latency_us, device=device)
    assert request.held and request.why_not == ''
    assert struct.unpack('=i', device.read_bytes()) == (latency_us,)
    assert len(_open_fds() - before) == 1        # kept open: closing it would withdraw it
    request.close()
    assert not request.held and _open_fds() == before
    request.close()                              # a second close is nothing


def test_asking_for_nothing_opens_nothing(tmp_path):
    device = tmp_path / 'cpu_dma_latency'
    device.write_bytes(b'')
    request = WakeLatencyRequest(NOT_ASKED, device=device)
    assert not request.held
    assert request.why_not == 'cpu_wake_latency_us is -1'
    assert device.read_bytes() == b''


@given(st.one_of(st.integers(max_value=-2), st.integers(min_value=MAX_LATENCY_US + 1)))
def test_a_bound_the_kernel_would_refuse_is_refused_by_name(latency_us):
    with pytest.raises(ValueError, match=f'cpu_wake_latency_us = {latency_us}: must be -1'):
        WakeLatencyRequest(latency_us, device=Path('/nonexistent'))


def test_a_kernel_without_the_device_is_said_and_not_fatal(tmp_path):
    request = WakeLatencyRequest(0, device=tmp_path / 'missing')
    assert not request.held
    assert request.why_not == f'this kernel has no {tmp_path / "missing"}'


def test_a_device_that_cannot_be_opened_is_said(tmp_path):
    request = WakeLatencyRequest(0, device=tmp_path)      # a folder
    assert not request.held
    assert request.why_not.startswith(f'{tmp_path}: ')


def test_permission_denied_says_whose_file_it_is(tmp_path, monkeypatch):
    def refuse(path, flags):
        raise PermissionError(errno.EACCES, 'Permission denied', str(path))

    monkeypatch.setattr(cpu_wake_latency.os, 'open', refuse)
    device = tmp_path / 'cpu_dma_latency'
    request = WakeLatencyRequest(0, device=device)
    assert not request.held
    assert request.why_not == f"{device}: permission denied (root's by default)"


def test_a_dropped_request_is_withdrawn(tmp_path):
    device = tmp_path / 'cpu_dma_latency'
    device.write_bytes(b'')
    before = _open_fds()
    request = WakeLatencyRequest(0, device=device)
    assert len(_open_fds() - before) == 1
    del request
    assert _open_fds() == before


@pytest.mark.skipif(not _REAL_DEVICE_WRITABLE, reason=f'{DEVICE} is not writable here')
def test_the_kernel_applies_the_request_while_it_is_held():
    request = WakeLatencyRequest(0)
    try:
        assert request.held
        assert current_bound_us() == 0
    finally:
        request.close()


def test_the_bound_cannot_be_read_from_a_missing_device(tmp_path):
    assert current_bound_us(tmp_path / 'missing') is None
