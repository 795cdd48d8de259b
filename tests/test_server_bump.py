"""A bumped phone, through the real live socket: after the view turns and shifts, the live
messages draw the stable table where the camera now sees its tiles (at once, not after 40
s), and a tap that corrects a tile there corrects that tile."""

from __future__ import annotations

import cv2
import numpy as np

from tests.live_helpers import FIRST_MELD, phone, read_frame


def bumped(photo: bytes, degrees: float, shift) -> tuple[bytes, np.ndarray]:
    image = cv2.imdecode(np.frombuffer(photo, np.uint8), cv2.IMREAD_COLOR)
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    m[:, 2] += shift
    fill = tuple(float(v) for v in np.median(image[:4].reshape(-1, 3), axis=0))
    out = cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
    return cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes(), m


def centres(reading) -> np.ndarray:
    return np.array([np.mean(t["corners"], axis=0) for t in reading["tiles"]])


def send(ws, data: bytes) -> dict:
    ws.send_bytes(data)
    while (message := ws.receive_json())["type"] != "reading":
        assert message["type"] != "error", message
    return message


def test_a_bumped_view_moves_the_drawn_table_with_it_and_a_tap_lands_right(client, game, app):
    ws = phone(client, game, "ann-phone")
    try:
        for _ in range(4):
            settled = read_frame(ws)
        assert settled["stable"] and len(settled["reading"]["tiles"]) == 7
        reading = settled["reading"]
        first = reading["tiles"][0]["corners"]
        size = float(np.linalg.norm(np.subtract(first[3], first[0])))
        view, m = bumped(FIRST_MELD, 6.0, (40, -25))
        truth = centres(reading) @ m[:, :2].T + m[:, 2]
        for k in range(3):
            message = send(ws, view)
            moved = message["reading"]
            # The same stored table (no change of the table was stored)...
            assert moved["reading_id"] == reading["reading_id"], k
            assert [t["id"] for t in moved["tiles"]] == [t["id"] for t in reading["tiles"]]
            # ...drawn where this frame shows its tiles, from the first frame after the bump.
            err = np.linalg.norm(centres(moved) - truth, axis=1).max() / size
            assert err < 0.25, (k, err)
        # Tiles the frame does not show (the bump took them out of the view) are named,
        # and the hub says so for a turn judged on this reading.
        assert set(message["hidden"]) <= {t["id"] for t in moved["tiles"]}
        hub = app.state.hub
        assert hub.hidden(game["id"], moved["photo_id"]) == message["hidden"]
        assert hub.hidden(game["id"], "another-photo") is None  # not this camera's
        # A tap on a tile as drawn now corrects that tile, in the tracker too.
        tile = moved["tiles"][2]
        code = "B4" if (tile["color"], tile["number"]) != ("B", 4) else "B5"
        response = client.post(f"/api/games/{game['id']}/corrections",
                               json={"tile_id": tile["id"], "code": code},
                               headers={"X-Token": game["token"]})
        assert response.status_code == 200, response.text
        tracker = app.state.hub.games[game["id"]].tracker
        stable = tracker.stable
        at = int(np.argmin(np.linalg.norm(stable.centers - np.mean(tile["corners"], axis=0),
                                          axis=1)))
        assert stable.codes[at] == code
    finally:
        ws.__exit__(None, None, None)
