"""Let only clients that hold a secret token reach a page served beyond loopback.

viser has no authentication: whoever opens its websocket drives the arm. So a page served on
a network address is served by viser on loopback, behind this gate. The gate reads the first
request of each TCP connection (bounded in size and time) and forwards the connection to
viser only if the request carries the token: as ``?token=`` (a browser is then sent on with
the token in a cookie, since viser's page opens its websocket without the query) or in that
cookie. Anything else gets ``403`` and is closed before a byte reaches viser, so an
unauthenticated client cannot send a single GUI or scene event.

The token is made at start with :mod:`secrets` and compared in constant time.
"""

import asyncio
from collections.abc import Mapping
import hmac
from http.cookies import CookieError, SimpleCookie
import ipaddress
import secrets
import socket
import threading
from typing import Optional
from urllib.parse import parse_qsl, urlencode, urlsplit

COOKIE = 'fabrik_web_token'
MAX_HEAD_BYTES = 16384
HEAD_TIMEOUT_S = 10.0
_CHUNK_BYTES = 65536
_STOP_TIMEOUT_S = 5.0


def is_loopback(host: str) -> bool:
    """Return whether ``host`` serves this machine only (no token needed there).

    >>> [is_loopback(h) for h in ('127.0.0.1', '::1', 'localhost', '0.0.0.0', 'robot')]
    [True, True, True, False, False]
    """
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class TokenGate:
    """Serve ``host:port``; forward connections that carry the token to ``upstream_port``.

    :param host: the address to serve (a network address: loopback needs no gate)
    :param port: the port to serve (0: any free port)
    :param upstream_port: the port of the page on 127.0.0.1
    :raises OSError: if ``host:port`` cannot be bound
    """

    def __init__(self, host: str, port: int, *, upstream_port: int) -> None:
        self.token = secrets.token_urlsafe(32)
        self._token_bytes = self.token.encode('ascii')
        self._upstream_port = upstream_port
        self._socket = socket.create_server(
            (host, port), family=socket.AF_INET6 if ':' in host else socket.AF_INET)
        self._loop = asyncio.new_event_loop()
        self._connections: set[asyncio.Task] = set()
        self._server: Optional[asyncio.AbstractServer] = None
        started = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(started,), daemon=True,
                                        name='token_gate')
        self._thread.start()
        started.wait()

    @property
    def port(self) -> int:
        """Return the port served (the one asked for, or the free one given for 0)."""
        return self._socket.getsockname()[1]

    def url(self, host: str) -> str:
        """Return the address to open, token included, for a browser that reaches ``host``."""
        shown = f'[{host}]' if ':' in host else host
        return f'http://{shown}:{self.port}/?token={self.token}'

    def stop(self) -> None:
        """Stop serving and close every forwarded connection."""
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(_STOP_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_STOP_TIMEOUT_S)
        self._loop.close()

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(
            self._on_connection, sock=self._socket, limit=MAX_HEAD_BYTES))
        started.set()
        self._loop.run_forever()

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _on_connection(self, reader: asyncio.StreamReader,
                             writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._admit(reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass        # the client went away, or viser did: nothing to answer
        finally:
            self._connections.discard(task)
            writer.close()

    async def _admit(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b'\r\n\r\n'), HEAD_TIMEOUT_S)
        except (asyncio.LimitOverrunError, asyncio.TimeoutError):
            await _answer(writer, 431, 'Request Header Fields Too Large',
                          f'the request head must arrive whole within {HEAD_TIMEOUT_S} s '
                          f'and {MAX_HEAD_BYTES} bytes')
            return
        request = _Request.parse(head)
        if request is None:
            await _answer(writer, 400, 'Bad Request', 'not an HTTP request')
            return
        from_query, from_cookie = request.query_token(), request.cookie_token()
        if self._holds(from_cookie) or (request.upgrade and self._holds(from_query)):
            await self._forward(head, reader, writer)
        elif self._holds(from_query):
            # A browser: keep the token in a cookie (its page's websocket sends it) and
            # take it out of the address bar.
            await _answer(writer, 303, 'See Other', 'signed in', {
                'Location': request.without_token(),
                'Set-Cookie': f'{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict'})
        else:
            await _answer(writer, 403, 'Forbidden', 'this page needs its token: open the '
                          'address web_view printed when it started (it ends in ?token=...)')

    def _holds(self, presented: Optional[str]) -> bool:
        if presented is None:
            return False
        return hmac.compare_digest(presented.encode('utf-8', 'replace'), self._token_bytes)

    async def _forward(self, head: bytes, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection('127.0.0.1', self._upstream_port)
        try:
            up_writer.write(head)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()


class _Request:
    """The parts of a request head the gate reads: target, cookies, whether it upgrades."""

    def __init__(self, target: str, headers: Mapping[str, str]) -> None:
        self.target = target
        self.headers = headers
        self.upgrade = headers.get('upgrade', '').lower() == 'websocket'

    @classmethod
    def parse(cls, head: bytes) -> Optional['_Request']:
        r"""Return the request in ``head`` (request line and headers), or None if it is not one.

        >>> r = _Request.parse(b'GET /?token=a HTTP/1.1\r\nCookie: x=1\r\n\r\n')
        >>> (r.target, r.query_token(), r.cookie_token(), r.upgrade)
        ('/?token=a', 'a', None, False)
        """
        lines = head.decode('latin-1').split('\r\n')
        parts = lines[0].split(' ')
        if len(parts) != 3 or not parts[2].startswith('HTTP/'):
            return None
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(':')
            if colon:
                headers[name.strip().lower()] = value.strip()
        return cls(parts[1], headers)

    def query_token(self) -> Optional[str]:
        tokens = [v for k, v in parse_qsl(urlsplit(self.target).query) if k == 'token']
        return tokens[0] if len(tokens) == 1 else None

    def cookie_token(self) -> Optional[str]:
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(self.headers.get('cookie', ''))
        except CookieError:
            return None
        return cookies[COOKIE].value if COOKIE in cookies else None

    def without_token(self) -> str:
        parts = urlsplit(self.target)
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                          if k != 'token'])
        path = parts.path if parts.path.startswith('/') else '/'
        return f'{path}?{query}' if query else path


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str, text: str,
                  headers: Optional[Mapping[str, str]] = None) -> None:
    body = f'{text}\n'.encode()
    lines = [f'HTTP/1.1 {status} {reason}', 'Content-Type: text/plain; charset=utf-8',
             f'Content-Length: {len(body)}', 'Connection: close',
             *(f'{name}: {value}' for name, value in (headers or {}).items())]
    writer.write('\r\n'.join(lines).encode('latin-1') + b'\r\n\r\n' + body)
    await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until either end closes."""
    try:
        while chunk := await reader.read(_CHUNK_BYTES):
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()
