"""Show bytes a device sent in a log line: escaped and bounded, never raw."""

SHOWN_MAX = 24           # bytes shown of a longer run; its length is given instead


def shown(data: bytes, *, limit: int = SHOWN_MAX) -> str:
    r"""Return ``data`` as an escaped literal of at most ``limit`` bytes, with its length.

    A device at the wrong baud rate sends control characters and bytes above 0x7f; printed as
    they are, they garble the terminal. ``repr`` escapes every one of them.

    >>> shown(b'SSC32\r\x1b[2J')
    "b'SSC32\\r\\x1b[2J' (10 bytes)"
    >>> shown(bytes(range(40)), limit=4)
    "b'\\x00\\x01\\x02\\x03'... (40 bytes)"
    """
    more = '...' if len(data) > limit else ''
    return f'{bytes(data[:limit])!r}{more} ({len(data)} bytes)'


def printable(data: bytes, *, limit: int = 64) -> str:
    r"""Return ``data`` as text with every non-printable byte escaped, cut at ``limit`` bytes.

    For names a board reports about itself (its firmware), which end up in log lines.

    >>> printable(b'fabrik-uno 1.4')
    'fabrik-uno 1.4'
    >>> printable(b'uno\x07\xff')
    'uno\\x07\\xff'
    """
    text = repr(bytes(data[:limit]))[2:-1]
    return text + ('...' if len(data) > limit else '')
