"""A hand over the table when End turn is tapped: the live camera's tracker keeps the tiles
it hides where they lay, and the turn's end asks it which ones those are (`FrameHub.hidden`
-> `judge_turn(hidden=...)`): they are not "left the table", and the verdict names them
under `check` and `hidden`. Through the real live socket, on both databases."""

from __future__ import annotations

import cv2
import numpy as np

from bench.eval_tracker import _hand
from tests.live_helpers import FIRST_MELD, phone, read_frame
from tests.server_helpers import h, turn_body


def with_hand(photo: bytes, reading: dict) -> bytes:
    """The photo with a hand painted over the middle of the table's tiles (palm on one
    tile, fingers over those above it, the arm down to the photo's edge)."""
    image = cv2.imdecode(np.frombuffer(photo, np.uint8), cv2.IMREAD_COLOR)
    corners = np.array([t["corners"] for t in reading["tiles"]], float)
    size = float(np.median(np.linalg.norm(corners[:, 3] - corners[:, 0], axis=1)))
    centres = corners.mean(axis=1)
    # The lowest tile: the arm from the photo's bottom edge covers no other tile.
    centre = centres[int(np.argmax(centres[:, 1]))]
    painted = _hand(image.astype(np.float32), (centre[0], centre[1] + 0.3 * size), 0.9 * size,
                    1).astype(np.uint8)
    return cv2.imencode(".jpg", painted, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()


def code(tile: dict) -> str:
    from vision.recognition.labels import code_from_json

    return code_from_json(tile)


def send(ws, data: bytes) -> dict:
    ws.send_bytes(data)
    while (message := ws.receive_json())["type"] != "reading":
        assert message["type"] not in ("error", "camera-taken", "refused"), message
    return message


def settle(ws) -> dict:
    for _ in range(4):
        message = read_frame(ws)
    assert message["stable"] and len(message["reading"]["tiles"]) == 7, message
    return message


def test_a_hand_over_a_tile_at_end_turn_is_no_tile_taken_away(client, game):
    ws = phone(client, game, "ann-phone")
    try:
        reading = settle(ws)["reading"]
        # Ann lays the first meld; the table is accepted.
        first = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                            json=turn_body(client, game))
        assert first.status_code == 200, first.text
        assert first.json()["legal"] and len(first.json()["played"]) == 7
        assert first.json()["check"] == [] and first.json()["hidden"] == []
        # Ben's turn: a hand rests over the table as he taps End turn.
        hand = with_hand(FIRST_MELD, reading)
        for _ in range(5):
            message = send(ws, hand)
            assert not message["changed"], message  # the hand is no change of the table
        assert message["hidden"], "the hand hides no tile from the camera"
        hidden = sorted(code(reading["tiles"][i]) for i in message["hidden"])
        ended = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                            json=turn_body(client, game))
        assert ended.status_code == 200, ended.text
        verdict = ended.json()
        assert verdict["player"] == "Ben"
        assert verdict["left_table"] == [] and verdict["played"] == []
        assert not any("left the table" in p for p in verdict["problems"])
        assert sorted(verdict["hidden"]) == hidden
        n = len(hidden)
        assert any(f"{n} tile{'s' if n != 1 else ''} hidden under something" in c
                   and all(c.count(t) for t in hidden) for c in verdict["check"]), verdict
        # The hand goes: every tile is seen again, and the next turn has nothing to check.
        for _ in range(3):
            message = send(ws, FIRST_MELD)
        assert message["hidden"] == []
        last = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                           json=turn_body(client, game))
        assert last.status_code == 200, last.text
        assert last.json()["hidden"] == [] and last.json()["check"] == []
    finally:
        ws.__exit__(None, None, None)
