"""One camera per game, through the real live socket (TestClient): two phones with the
game's link must not both feed the tracker, or it sees two alternating views of the table.
The camera that starts last takes the game over; the phone that had it is told in words
and its frames are refused while the new one streams.

Every wait here ends with a ping: the socket answers `pong` after everything the server
queued for it before, so a message that never comes fails the test instead of hanging it.
"""

from __future__ import annotations

import time

from app.server import frames
from tests.live_helpers import FIRST_MELD, phone, read_frame, stats, taken, until_pong
from tests.server_helpers import (
    GROUP_9S,
    RUN_B1_B4,
    RUN_R2_R5,
)


def wait_read(client, game, n: int, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while (s := stats(client, game))["read"] + s["dropped"] < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return s


def test_the_camera_started_last_takes_the_game_and_the_other_phone_is_told(client, game):
    first, second = phone(client, game, "ann-phone"), phone(client, game, "ben-phone")
    try:
        for _ in range(4):
            last = read_frame(first)
        assert last["stable"] and len(last["reading"]["tiles"]) == 7
        assert taken(until_pong(second)) == []  # a phone that only watches takes nothing

        # Ben's phone starts its camera: it has the game now, Ann's phone is told.
        second.send_bytes(FIRST_MELD)
        [told] = taken(until_pong(first))
        assert told["detail"].startswith("Another phone took over the camera")
        # Ann's phone is refused with the same words; nothing it sends is read.
        before = wait_read(client, game, 5)
        first.send_bytes(FIRST_MELD)
        assert [m["detail"] for m in taken(until_pong(first))] == [told["detail"]]
        response = client.post(f"/api/games/{game['id']}/frames?camera=ann-phone",
                               content=FIRST_MELD, headers={"X-Token": game["token"],
                                                            "content-type": "image/jpeg"})
        assert response.status_code == 409 and response.json()["detail"] == told["detail"]
        after = stats(client, game)
        assert after["received"] == before["received"] == 5 and after["takeovers"] == 1

        # The tracker starts again from Ben's camera's view: its first frame is no stable
        # table yet (the old camera's tracks are gone), then the same table holds again.
        readings = [read_frame(second) for _ in range(4)]
        assert not readings[0]["stable"] and readings[-1]["stable"]
        assert len(readings[-1]["reading"]["tiles"]) == 7
        assert taken(until_pong(second)) == []
    finally:
        first.__exit__(None, None, None)
        second.__exit__(None, None, None)


def test_a_socket_with_no_camera_name_is_its_own_camera(client, game):
    first, second = phone(client, game, None), phone(client, game, None)
    try:
        first.send_bytes(FIRST_MELD)
        second.send_bytes(FIRST_MELD)
        assert len(taken(until_pong(first))) == 1
        assert taken(until_pong(second)) == []
    finally:
        first.__exit__(None, None, None)
        second.__exit__(None, None, None)


def test_a_camera_that_went_quiet_holds_nothing(client, game, monkeypatch):
    monkeypatch.setattr(frames, "CAMERA_QUIET_S", 2.0)
    first, second = phone(client, game, "ann-phone"), phone(client, game, "ben-phone")
    try:
        first.send_bytes(FIRST_MELD)
        wait_read(client, game, 1)
        time.sleep(2.1)  # Ann's phone sends nothing (its page in the background)
        second.send_bytes(FIRST_MELD)
        # Ann's phone is told all the same, and may not take the camera back unasked.
        assert len(taken(until_pong(first))) == 1
        first.send_bytes(FIRST_MELD)
        assert len(taken(until_pong(first))) == 1
        wait_read(client, game, 2)
        time.sleep(2.1)
        # Ben's phone is quiet now: Ann's may start again, and Ben's is told.
        first.send_bytes(FIRST_MELD)
        assert taken(until_pong(first)) == [] and len(taken(until_pong(second))) == 1
        assert wait_read(client, game, 3)["takeovers"] == 2
    finally:
        first.__exit__(None, None, None)
        second.__exit__(None, None, None)


# ----------------------------------------------------------------------- corrections per view
def moved_photo(dx: float, dy: float, *sets) -> bytes:
    """The sample table with only the given sets, seen from a camera moved by (dx, dy)
    pixels: the tiles lie elsewhere in its picture, on the same bare table."""
    import cv2
    import numpy as np

    from tests.server_helpers import _centre_in, _mask, _sample

    image, tiles, bare = _sample()
    keep = [t for t in tiles for codes, box in sets if t["code"] in codes and _centre_in(t, box)]
    shift = np.float32([[1, 0, dx], [0, 1, dy]])
    size = (image.shape[1], image.shape[0])
    moved = cv2.warpAffine(image, shift, size)
    mask = cv2.warpAffine(_mask(image.shape, keep, 3), shift, size)
    out = bare.copy()
    out[mask > 0] = moved[mask > 0]
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok
    return data.tobytes()


# K9 lies at (916, 266) in the sample; moved by one tile along its group, O9 lies there.
ONE_TILE_ON = (-65, 34)
# Ben's camera shaken by most of a tile height across the 9s' group (none of its tiles
# comes to lie where another lay), and a run it sees laid meanwhile.
SHAKE = (20, 75)
RUN_J_O4_O5 = ({"J", "O4", "O5"}, (600, 400, 850, 520))
# Moved so that B4 of the bottom run lies where K9 lay, with none of the first meld's tiles.
OTHER_TABLE = moved_photo(121, -399, RUN_B1_B4)


def codes(reading) -> list[str]:
    letter = {"black": "K", "red": "R", "blue": "B", "orange": "O"}
    return sorted("J" if t["joker"] else f"{letter[t['color']]}{t['number']}"
                  for t in reading["tiles"])


def correct_k9(client, game, reading) -> dict:
    k9 = next(t["id"] for t in reading["tiles"] if t["color"] == "black" and t["number"] == 9)
    response = client.post(f"/api/games/{game['id']}/corrections",
                           headers={"X-Token": game["token"]}, json={"tile_id": k9, "code": "R9"})
    assert response.status_code == 200, response.text
    assert "R9" in codes(response.json()) and "K9" not in codes(response.json())
    return response.json()


def stable_reading(ws, photo: bytes) -> dict:
    """The table this phone's camera stores once `photo` held still in its frames."""
    until_pong(ws)  # what the other phone's camera read, sent to this one too
    for _ in range(6):
        ws.send_bytes(photo)
        while (message := ws.receive_json())["type"] != "reading" or message["frame"]["seq"] is None:
            assert message["type"] not in ("error", "camera-taken"), message
        if message["stable"] and message["changed"]:
            return message["reading"]
    raise AssertionError("the table never held still")


MELD = ["B9", "O9", "R2", "R3", "R4", "R5"]


def test_a_correction_with_one_camera_renames_the_same_tile_in_the_next_cameras_view(client,
                                                                                     game):
    first, second = phone(client, game, "ann-phone"), phone(client, game, "ben-phone")
    try:
        correct_k9(client, game, stable_reading(first, FIRST_MELD))
        # Ben's phone sees the table from a place one tile along: O9 lies in its picture
        # where K9 lay in Ann's. The tile corrected is K9, found by the tiles around it.
        reading = stable_reading(second, moved_photo(*ONE_TILE_ON, RUN_R2_R5, GROUP_9S))
        assert codes(reading) == sorted([*MELD, "R9"])
        assert reading["warnings"] == [] and reading["table_valid"]
    finally:
        first.__exit__(None, None, None)
        second.__exit__(None, None, None)


def test_a_correction_that_cannot_be_carried_to_the_next_camera_is_dropped_and_said(client,
                                                                                    game):
    first, second = phone(client, game, "ann-phone"), phone(client, game, "ben-phone")
    try:
        correct_k9(client, game, stable_reading(first, FIRST_MELD))
        # Ben's camera shows none of the tiles around the corrected one: B4 lies at K9's
        # pixel in its picture, and stays B4.
        reading = stable_reading(second, OTHER_TABLE)
        assert codes(reading) == ["B1", "B2", "B3", "B4"]
        assert reading["corrections_dropped"] == 1
        assert any("no longer apply" in w for w in reading["warnings"])
        # Dropped for good: the next reading in any view does not bring it back.
        again = stable_reading(second, FIRST_MELD)
        assert "R9" not in codes(again) and again["corrections_dropped"] == 0
    finally:
        first.__exit__(None, None, None)
        second.__exit__(None, None, None)


def test_a_correction_follows_its_tile_between_hand_held_photos(client, game):
    from tests.server_helpers import upload

    reading = upload(client, game, "photo", FIRST_MELD).json()
    correct_k9(client, game, reading)
    again = upload(client, game, "photo", FIRST_MELD).json()  # the same view: it holds
    assert codes(again) == sorted([*MELD, "R9"])
    moved = upload(client, game, "photo", moved_photo(*ONE_TILE_ON, RUN_R2_R5, GROUP_9S))
    assert codes(moved.json()) == sorted([*MELD, "R9"])
    other = upload(client, game, "photo", OTHER_TABLE).json()
    assert codes(other) == ["B1", "B2", "B3", "B4"] and other["corrections_dropped"] == 1


def test_a_correction_carried_to_the_next_camera_follows_its_tile_as_that_camera_shakes(
        client, game):
    first, second = phone(client, game, "ann-phone"), phone(client, game, "ben-phone")
    try:
        correct_k9(client, game, stable_reading(first, FIRST_MELD))
        reading = stable_reading(second, moved_photo(*ONE_TILE_ON, RUN_R2_R5, GROUP_9S))
        assert codes(reading) == sorted([*MELD, "R9"])
        # Ben's camera shakes by most of a tile while a run is laid: the live tracker of
        # his camera holds the correction carried over, as it would one made on its own
        # reading, so the corrected tile is still R9 where it lies in his picture now
        # (the place the correction was carried to holds no tile any more).
        dx, dy = ONE_TILE_ON[0] + SHAKE[0], ONE_TILE_ON[1] + SHAKE[1]
        reading = stable_reading(second, moved_photo(dx, dy, RUN_R2_R5, GROUP_9S, RUN_J_O4_O5))
        assert "K9" not in codes(reading)
        # (A subset: the reader also finds an O6 in this pasted picture, both ways.)
        assert {*MELD, "R9", "J", "O4", "O5"} <= set(codes(reading))
    finally:
        first.__exit__(None, None, None)
        second.__exit__(None, None, None)
