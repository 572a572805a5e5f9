"""The page served on a network address, reached from another network namespace.

A client there is refused without the token (by HTTP and by websocket: its click never
reaches the arm) and gets through with it (its click does).
"""

import subprocess
import sys

import pytest

from fabrik_ros.webview.token_gate import COOKIE
from test.nodes.conftest import REPO_ROOT
from test.webview.browser import wait_for
from test.webview.netns import namespace
from test.webview.test_token_gate import Actions, make_page

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope='module')
def served():
    with namespace() as network:
        actions = Actions()
        page = make_page(network.host_address, actions)
        try:
            yield network, page, actions
        finally:
            page.stop()


def _curl(network, url: str, *options: str) -> str:
    done = network.run('curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '-m', '10',
                       *options, url)
    return done.stdout


def _click(network, url: str, uuid: str, *cookie: str, until=None) -> str:
    """Run page_client in the namespace; return what it printed first (sent / refused)."""
    client = subprocess.Popen(['ip', 'netns', 'exec', network.name, sys.executable, '-m',
                               'test.webview.page_client', url, uuid, *cookie],
                              cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        first = client.stdout.readline().strip()
        if until is not None:
            until()
    finally:
        client.terminate()
        client.communicate(timeout=30.0)
    return first


def _home_uuid(page) -> str:
    handles = page._server.gui._gui_input_handle_from_uuid      # the test finds the button
    return next(uuid for uuid, handle in handles.items() if handle.label == 'Home')


def test_from_another_namespace_the_page_is_refused_without_the_token(served):
    network, page, actions = served
    base = f'http://{network.host_address}:{page.port}'
    assert page.token and page.url() == f'{base}/?token={page.token}'
    assert _curl(network, f'{base}/') == '403'
    assert _curl(network, f'{base}/?token=0000') == '403'
    ws = f'ws://{network.host_address}:{page.port}'
    assert _click(network, ws, _home_uuid(page)) == 'refused 403'
    assert _click(network, f'{ws}/?token=wrong', _home_uuid(page)) == 'refused 403'
    assert actions.calls == []


def test_from_another_namespace_the_token_opens_the_page_and_a_click_reaches_the_arm(served):
    network, page, actions = served
    base = f'http://{network.host_address}:{page.port}'
    assert _curl(network, page.url()) == '303'
    assert _curl(network, f'{base}/', '-b', f'{COOKIE}={page.token}') == '200'
    ws = f'ws://{network.host_address}:{page.port}'
    assert _click(network, ws, _home_uuid(page), f'{COOKIE}={page.token}', until=lambda: wait_for(
        lambda: actions.calls == ['home'], timeout_s=10.0,
        what=lambda: f'the click to reach the arm; calls {actions.calls}')) == 'sent'


def test_the_page_is_not_served_unguarded_on_the_network_address(served):
    network, page, _ = served
    # viser itself listens on loopback only: from the namespace, only the gate answers.
    viser_port = page._server.get_port()
    assert viser_port != page.port
    assert _curl(network, f'http://{network.host_address}:{viser_port}/') == '000'


