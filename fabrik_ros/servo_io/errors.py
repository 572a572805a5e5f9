"""Exceptions of the serial link: one base class, derived from OSError like pyserial's."""


class LinkError(OSError):
    """Base of every error the servo link raises, so one ``except`` can drive a reconnect."""


class LinkTimeout(LinkError):  # noqa: N818 (name fixed by STYLE.md)
    """A write, a reply or the board's handshake did not complete before its deadline."""


class LinkLost(LinkError):  # noqa: N818 (name fixed by STYLE.md)
    """The port went away (unplugged, path vanished, I/O error) or the link is closed."""


class BoardRefused(LinkError):  # noqa: N818 (reads as an event, like LinkLost)
    """The board answered NACK to a command; the message names the command and the error."""


class NotABoard(LinkError):  # noqa: N818 (reads as a finding, like LinkLost)
    """Something on the port answers, but not as the configured board can.

    A wrong baud rate, a board in another serial mode or another device on the port: its
    bytes are refused rather than taken for a version, an error register or a pose. The
    message shows the bytes escaped and names the likely cause.
    """
