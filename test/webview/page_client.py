"""A websocket client of the page, run as a process (in a network namespace, say).

    python -m test.webview.page_client <ws url> <gui uuid> [<cookie>]

Connects with viser's subprotocol, says where its camera is (viser counts a client as
connected from then on), clicks the GUI button ``<gui uuid>``, prints ``sent`` and stays
connected until the page closes or the process is stopped; or prints ``refused <status>``
if the handshake is refused.
"""

import sys

import msgspec.msgpack
import viser
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

CAMERA = {'type': 'ViewerCameraMessage', 'wxyz': [1.0, 0.0, 0.0, 0.0],
          'position': [0.3, 0.3, 0.3], 'fov': 1.0, 'near': 0.01, 'far': 100.0,
          'image_height': 480, 'image_width': 640, 'look_at': [0.0, 0.0, 0.0],
          'up_direction': [0.0, 0.0, 1.0]}


def main(argv: list[str]) -> int:
    url, uuid = argv[0], argv[1]
    headers = {'Cookie': argv[2]} if len(argv) > 2 else {}
    click = {'type': 'GuiUpdateMessage', 'uuid': uuid, 'updates': {'value': True}}
    try:
        with connect(url, subprotocols=[f'viser-v{viser.__version__}'],
                     additional_headers=headers, open_timeout=10.0) as socket:
            socket.send(msgspec.msgpack.encode(CAMERA))
            socket.send(msgspec.msgpack.encode(click))
            print('sent', flush=True)
            for _ in socket:
                pass
    except InvalidStatus as refused:
        print(f'refused {refused.response.status_code}', flush=True)
    except ConnectionClosed:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
