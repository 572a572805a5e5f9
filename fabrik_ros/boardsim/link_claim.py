"""One live simulated board per symlink: a claim that ends with the board's process.

``sim_device --link ./ttyA`` twice used to re-point the first board's symlink at the second
board, and the first one, stopping, deleted the link the second then owned. A board now claims
its link before making it: an exclusive ``flock`` on ``<link>.lock``, which holds the owner's
pid. The kernel drops the lock when the owner's process ends however it ends (SIGKILL too),
so a stale ``.lock`` file left by a killed board claims nothing. The lock file is removed on
release; a claimant that locked a file just removed (a race with that release) sees its inode
gone and tries again.
"""

import fcntl
import os
import time
from typing import Optional

LOCK_SUFFIX = '.lock'
# A query (link_owner) holds the lock for an instant; a claim retries that long before it
# calls the link taken.
_BUSY_RETRY_S = 0.2
_RETRY_STEP_S = 0.01


class LinkClaimError(OSError):
    """The link cannot be claimed; the one-line message names the link and why."""


def lock_path(link: str) -> str:
    """Return the lock file that claims ``link``."""
    return f'{link}{LOCK_SUFFIX}'


def check_folder(link: str) -> None:
    """Refuse a link whose folder does not exist, in one line naming the folder.

    :raises LinkClaimError: if the folder of ``link`` is missing (or is no folder)
    """
    folder = os.path.dirname(os.path.abspath(link))
    if not os.path.isdir(folder):
        raise LinkClaimError(f'link {link}: its folder {folder} does not exist; create it or '
                             f'name a link in an existing folder')


def link_owner(link: str) -> Optional[int]:
    """Return the pid of the live board that claims ``link`` (0 if unknown), None if free."""
    try:
        fd = os.open(lock_path(link), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _pid_in(fd)
        return None
    finally:
        os.close(fd)


class LinkClaim:
    """The claim of one board on one link, from :meth:`acquire` until :meth:`release`."""

    def __init__(self, link: str) -> None:
        self.link = link
        self.path = lock_path(link)
        self._fd = -1

    def acquire(self) -> 'LinkClaim':
        """Claim the link for this process.

        :raises LinkClaimError: if the folder is missing or a live board claims the link
        """
        check_folder(self.link)
        deadline = time.monotonic() + _BUSY_RETRY_S
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _pid_in(fd)
                os.close(fd)
                if time.monotonic() < deadline:
                    time.sleep(_RETRY_STEP_S)
                    continue
                raise LinkClaimError(
                    f'link {self.link} belongs to a live simulated board (pid {owner or "?"}); '
                    f'stop that board or name another link') from None
            if _same_file(fd, self.path):
                break
            os.close(fd)          # locked a lock file its owner removed meanwhile: again
        os.ftruncate(fd, 0)
        os.write(fd, f'{os.getpid()}\n'.encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the link up: remove the lock file, then unlock (no-op if not claimed)."""
        if self._fd < 0:
            return
        if _same_file(self._fd, self.path):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = -1


def _pid_in(fd: int) -> int:
    """Return the pid written in the lock file open at ``fd``, 0 if there is none."""
    try:
        text = os.pread(fd, 32, 0).decode('ascii', 'replace').strip()
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0


def _same_file(fd: int, path: str) -> bool:
    """Return whether ``path`` still names the file open at ``fd``."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
