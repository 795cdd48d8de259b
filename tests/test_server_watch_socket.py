"""A table change reaches a watching socket (a director's view, a big screen: the watch
token), and a still table's every frame does not: the others hear a frame only when what
it says changed (`frames.FrameHub._deliver`)."""

from __future__ import annotations

import time

import cv2
import numpy as np

from tests.server_helpers import RUN_B1_B4, RUN_R2_R5, new_game, table_photo
from vision.recognition.labels import COLOR_WORDS


def _noisy(data: bytes, seed: int) -> bytes:
    """The frame as a camera streams it again: a little sensor noise, JPEG 85."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    noise = np.random.default_rng(seed).normal(0, 2.0, image.shape)
    return cv2.imencode(".jpg", np.clip(image + noise, 0, 255).astype(np.uint8),
                        [cv2.IMWRITE_JPEG_QUALITY, 85])[1].tobytes()


def _readings_until_pong(ws) -> list[dict]:
    """Every reading the socket was sent before it answers a ping (one queue, in order)."""
    ws.send_json({"type": "ping"})
    got = []
    while (message := ws.receive_json())["type"] != "pong":
        if message["type"] == "reading":
            got.append(message)
    return got


def _codes(message: dict) -> list[str]:
    letter = {word: code for code, word in COLOR_WORDS.items()}
    return sorted("J" if t["joker"] else f"{letter[t['color']]}{t['number']}"
                  for t in message["reading"]["tiles"])


def _send(camera, frames, spacing_s: float = 0.25) -> list[dict]:
    """Frames sent one by one (a camera's clock: `spacing_s` apart), each reading awaited."""
    readings = []
    for data in frames:
        began = time.monotonic()
        camera.send_bytes(data)
        while (message := camera.receive_json())["type"] != "reading":
            pass
        readings.append(message)
        time.sleep(max(0.0, spacing_s - (time.monotonic() - began)))
    return readings


def test_a_change_reaches_the_watch_socket_and_a_still_table_stays_quiet(client, app):
    game = new_game(client, app)
    gid = game["id"]
    before = table_photo(RUN_R2_R5)
    after = table_photo(RUN_R2_R5, RUN_B1_B4)
    with client.websocket_connect(f"/api/games/{gid}/live?token={game['watch_token']}") as watch, \
            client.websocket_connect(f"/api/games/{gid}/live?token={game['token']}") as camera:
        assert watch.receive_json()["type"] == "game"
        assert camera.receive_json()["type"] == "game"
        first = _send(camera, [_noisy(before, k) for k in range(10)])
        assert sum(m["changed"] for m in first) == 1
        heard = _readings_until_pong(watch)
        # The change, and no more than a few frames around it: not one per frame.
        assert [m for m in heard if m["changed"]], heard
        assert len(heard) < len(first) - 3, [m["changed"] for m in heard]
        second = _send(camera, [_noisy(after, 20 + k) for k in range(6)])
        changed = [m for m in second if m["changed"]]
        assert len(changed) == 1
        heard = _readings_until_pong(watch)
        told = [m for m in heard if m["changed"]]
        assert len(told) == 1
        assert _codes(told[0]) == _codes(changed[0])
        assert {"B1", "B2", "B3", "B4", "R2", "R3", "R4", "R5"} <= set(_codes(told[0]))
        # The camera heard every frame it sent; the watcher's frame carries no sequence.
        assert [m["frame"]["seq"] for m in second] == list(range(11, 17))
        assert told[0]["frame"]["seq"] is None


def test_a_refused_frame_is_told_to_the_camera_and_the_watchers(client, app):
    from tests.server_helpers import sample_bytes
    from tests.test_quality import BLURRED, _sample_unfit

    game = new_game(client, app)
    gid = game["id"]
    with client.websocket_connect(f"/api/games/{gid}/live?token={game['watch_token']}") as watch, \
            client.websocket_connect(f"/api/games/{gid}/live?token={game['token']}") as camera:
        assert watch.receive_json()["type"] == "game"
        assert camera.receive_json()["type"] == "game"
        _send(camera, [sample_bytes("table_runs_groups.jpg")] * 4, spacing_s=0.0)
        camera.send_bytes(_sample_unfit(BLURRED[0]))
        while (message := camera.receive_json())["type"] not in ("reading", "refused"):
            pass
        assert message["type"] == "refused" and message["detail"] == BLURRED[1]
        watch.send_json({"type": "ping"})
        heard = []
        while (message := watch.receive_json())["type"] != "pong":
            heard.append(message["type"])
        assert heard[-1] == "refused", heard
