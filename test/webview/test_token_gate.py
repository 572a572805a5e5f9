"""The token gate in front of viser: refused without the token, forwarded with it (loopback)."""

import http.client
from pathlib import Path

import pytest
import viser
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from fabrik_ros.kinematics import load_arm
from fabrik_ros.webview import CalibrationSession
from fabrik_ros.webview.token_gate import COOKIE, MAX_HEAD_BYTES, TokenGate

pytestmark = pytest.mark.timeout(60)

CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'arm_4dof.yaml'
PROTOCOL = f'viser-v{viser.__version__}'


class Actions:
    """What the page asked of the arm, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        return lambda *args: self.calls.append(name)


def make_page(host: str, actions: Actions):
    from fabrik_ros.webview.page import WebPage
    arm = load_arm(CONFIG)
    return WebPage(arm, host=host, port=0, actions=actions,
                   calibration=CalibrationSession(arm, CONFIG, None),
                   jog_range_us=(500.0, 2500.0), orientation=False)


@pytest.fixture(scope='module')
def gate():
    server = viser.ViserServer(host='127.0.0.1', port=0, verbose=False)
    gate = TokenGate('127.0.0.1', 0, upstream_port=server.get_port())
    yield gate
    gate.stop()
    server.stop()


def _get(gate: TokenGate, target: str, headers=None) -> tuple[int, dict, str]:
    connection = http.client.HTTPConnection('127.0.0.1', gate.port, timeout=10.0)
    try:
        connection.request('GET', target, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


def test_a_page_request_without_the_right_token_is_refused_with_the_reason(gate):
    for target, headers in (('/', {}), ('/?token=guess', {}), ('/?token=', {}),
                            (f'/?token={gate.token}x', {}),
                            ('/', {'Cookie': f'{COOKIE}={gate.token[:-1]}'}),
                            ('/', {'Cookie': 'garbage;;"=='})):
        status, _, body = _get(gate, target, headers)
        assert (status, 'needs its token' in body) == (403, True), (target, headers)


def test_the_token_in_the_address_signs_a_browser_in_with_a_cookie_and_drops_it_from_the_url(
        gate):
    status, headers, _ = _get(gate, f'/?darkMode&token={gate.token}')
    assert status == 303
    assert headers['Location'] == '/?darkMode='
    assert headers['Set-Cookie'] == (f'{COOKIE}={gate.token}; Path=/; HttpOnly; '
                                     'SameSite=Strict')
    status, _, body = _get(gate, '/', {'Cookie': f'theme=x; {COOKIE}={gate.token}'})
    assert status == 200 and '<title>Viser</title>' in body


def test_a_websocket_opens_only_with_the_token_in_its_address_or_cookie(gate):
    url = f'ws://127.0.0.1:{gate.port}'
    with pytest.raises(InvalidStatus) as refused:
        connect(url, subprotocols=[PROTOCOL], open_timeout=10.0)
    assert refused.value.response.status_code == 403
    for address, headers in ((f'{url}/?token={gate.token}', {}),
                             (url, {'Cookie': f'{COOKIE}={gate.token}'})):
        with connect(address, subprotocols=[PROTOCOL], additional_headers=headers,
                     open_timeout=10.0) as socket:
            assert socket.subprotocol == PROTOCOL
            assert socket.recv(timeout=10.0)        # viser sends the scene


def test_a_request_head_too_big_or_not_http_is_answered_and_closed(gate):
    status, _, _ = _get(gate, '/', {'X-Padding': 'x' * (MAX_HEAD_BYTES + 10)})
    assert status == 431
    import socket
    with socket.create_connection(('127.0.0.1', gate.port), timeout=10.0) as raw:
        raw.sendall(b'\x16\x03\x01 hello\r\n\r\n')
        assert raw.recv(100).startswith(b'HTTP/1.1 400 ')


def test_the_page_on_loopback_needs_no_token():
    page = make_page('127.0.0.1', Actions())
    try:
        assert page.token is None and page.url() == f'http://127.0.0.1:{page.port}'
        connection = http.client.HTTPConnection('127.0.0.1', page.port, timeout=10.0)
        connection.request('GET', '/')
        assert connection.getresponse().status == 200
        connection.close()
    finally:
        page.stop()


def test_the_page_never_opens_a_share_link_past_the_gate():
    # viser's Share would tunnel its own (ungated) port through the internet.
    page = make_page('127.0.0.1', Actions())
    try:
        assert page._server.request_share_url() is None
        assert page._server._share_tunnel is None
    finally:
        page.stop()
