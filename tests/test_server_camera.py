"""One camera per game, through the real live socket (TestClient): two phones with the
game's link must not both feed the tracker, or it sees two alternating views of the table.
The camera that starts last takes the game over; the phone that had it is told in words
and its frames are refused while the new one streams.

Every wait here ends with a ping: the socket answers `pong` after everything the server
queued for it before, so a message that never comes fails the test instead of hanging it.
"""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from app.server import frames
from tests.server_helpers import GROUP_9S, RUN_R2_R5, make_app, new_game, table_photo

FIRST_MELD = table_photo(RUN_R2_R5, GROUP_9S)


@pytest.fixture
def app(tmp_path):
    return make_app(tmp_path)


@pytest.fixture
def client(app):
    with TestClient(app) as c:
        yield c


@pytest.fixture
def game(client, app):
    game = new_game(client, app)
    client.post(f"/api/games/{game['id']}/rounds", headers={"X-Token": game["token"]})
    return game


def phone(client, game, camera: str | None):
    named = f"&camera={camera}" if camera else ""
    ws = client.websocket_connect(f"/api/games/{game['id']}/live?token={game['token']}{named}")
    ws.__enter__()
    assert ws.receive_json()["type"] == "game"
    return ws


def until_pong(ws) -> list[dict]:
    """Every message the socket had before the answer to a ping sent now."""
    ws.send_text('{"type": "ping"}')
    messages = []
    while (message := ws.receive_json()) != {"type": "pong"}:
        messages.append(message)
    return messages


def read_frame(ws) -> dict:
    """Send the table photo as a frame; its reading."""
    ws.send_bytes(FIRST_MELD)
    while (message := ws.receive_json())["type"] != "reading":
        assert message["type"] not in ("error", "camera-taken"), message
    return message


def stats(client, game) -> dict:
    return client.get(f"/api/games/{game['id']}/frames/stats",
                      headers={"X-Token": game["token"]}).json()


def wait_read(client, game, n: int, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while (s := stats(client, game))["read"] + s["dropped"] < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return s


def taken(messages) -> list[dict]:
    return [m for m in messages if m["type"] == "camera-taken"]


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
