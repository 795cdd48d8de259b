"""Bad input gets a clear 4xx with words, the server keeps running, the game is unchanged."""

from __future__ import annotations

import struct
import zlib

import pytest

from tests.server_helpers import (
    GROUP_9S,
    RUN_R2_R5,
    new_game,
    start_round,
    table_photo,
    upload,
)

PHOTO = table_photo(RUN_R2_R5, GROUP_9S)


def png_header(width: int, height: int) -> bytes:
    """A PNG that claims absurd dimensions (its data is a few bytes)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
            + struct.pack(">I", zlib.crc32(chunk)) + b"\0" * 64)


@pytest.fixture
def game(client, app):
    game = new_game(client, app)
    start_round(client, game)
    assert upload(client, game, "photo", PHOTO).status_code == 200
    return game


@pytest.fixture
def unchanged(app, game):
    storage = app.state.storage
    before = (storage.game(game["id"]).state, storage.turns(game["id"]),
              storage.photo_count(game["id"]))
    yield
    assert (storage.game(game["id"]).state, storage.turns(game["id"]),
            storage.photo_count(game["id"])) == before


BAD_PHOTOS = [
    ("absurd dimensions", png_header(100_000, 100_000), "image/png", 413),
    ("a truncated JPEG", PHOTO[: len(PHOTO) // 2], "image/jpeg", 400),
    ("a corrupt JPEG", PHOTO[:200] + bytes(range(256)) * 20, "image/jpeg", 400),
    ("text, not an image", b"hello, this is not a photo", "image/jpeg", 415),
    ("nothing at all", b"", "image/jpeg", 400),
    ("a photo sent as text", PHOTO, "text/plain", 415),
]


@pytest.mark.parametrize("route", ["photo", "start-draw", "racks"])
@pytest.mark.parametrize("what,data,content_type,status", BAD_PHOTOS,
                         ids=[b[0] for b in BAD_PHOTOS])
def test_a_bad_photo_gets_a_clear_4xx(client, game, unchanged, route, what, data, content_type,
                                      status):
    response = upload(client, game, route, data, content_type=content_type,
                      data={"player": "Ben"} if route == "racks" else None)
    assert response.status_code == status, response.text
    assert isinstance(response.json()["detail"], str) and response.json()["detail"]


def test_a_frame_of_the_wrong_content_type_is_415(client, game, unchanged):
    response = client.post(f"/api/games/{game['id']}/frames", content=PHOTO,
                           headers={"X-Token": game["token"], "content-type": "text/plain"})
    assert response.status_code == 415


def test_a_bad_frame_is_counted_and_the_worker_keeps_reading(client, app, game, unchanged):
    headers = {"X-Token": game["token"], "content-type": "image/jpeg"}
    assert client.post(f"/api/games/{game['id']}/frames", content=b"garbage",
                       headers=headers).status_code == 202
    import time

    deadline = time.monotonic() + 5
    while app.state.hub.stats(game["id"])["bad"] < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert app.state.hub.stats(game["id"])["bad"] == 1
    with client.websocket_connect(f"/api/games/{game['id']}/live?token={game['token']}") as ws:
        ws.receive_json()
        ws.send_bytes(b"\xff\xd8 not really a jpeg")
        error = ws.receive_json()
        assert error["type"] == "error" and "bad frame" in error["detail"]


def test_malformed_json_is_400_with_words(client, game, unchanged):
    response = client.post(f"/api/games/{game['id']}/round/end", content=b'{"winner": ',
                           headers={"X-Token": game["token"], "content-type": "application/json"})
    assert response.status_code == 400 and "JSON" in response.json()["detail"]


@pytest.mark.parametrize("path,body,words", [
    ("corrections", {"tile_id": "first", "code": "R1"}, "tile_id"),
    ("corrections", {"tile_id": 999, "code": "R1"}, "tile_id"),
    ("corrections", {"tile_id": 0, "code": "R14"}, "R14"),
    ("round/end", {"winner": "Zed", "racks": {}}, "Zed"),
    ("round/end", {"winner": "Ann", "racks": {"Ben": "Q5"}}, "Q5"),
    ("round/end", {"winner": "Ann", "racks": {"Ben": "R5"}, "extra": 1}, "extra"),
    ("rounds", {"starter": 7}, "starter"),
    ("turn/end", {"turn_id": "r1t1", "photo_id": ["x"]}, "photo_id"),
    ("turn/end", {"photo_id": "x"}, "turn_id"),
])
def test_wrong_fields_are_422_naming_them(client, game, unchanged, path, body, words):
    response = client.post(f"/api/games/{game['id']}/{path}", json=body,
                           headers={"X-Token": game["token"]})
    assert response.status_code in (409, 422), response.text
    assert words in response.json()["detail"]


def test_an_unknown_game_is_404(client, game):
    for path in ("", "/reading", "/history"):
        response = client.get(f"/api/games/no-such-game{path}", headers={"X-Token": "x"})
        assert response.status_code == 404 and "no-such-game" in response.json()["detail"]
    response = client.get(f"/api/games/{game['id']}/photos/nope",
                          headers={"X-Token": game["token"]})
    assert response.status_code == 404


def test_a_malformed_socket_message_gets_an_error_and_the_socket_stays(client, game, unchanged):
    with client.websocket_connect(f"/api/games/{game['id']}/live?token={game['token']}") as ws:
        ws.receive_json()
        for text in ("{not json", '["a", "list"]', '{"type": "launch"}', ""):
            ws.send_text(text)
            assert ws.receive_json()["type"] == "error"
        ws.send_text('{"type": "ping"}')
        assert ws.receive_json() == {"type": "pong"}


def test_a_socket_to_an_unknown_game_is_refused(client):
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect("/api/games/nothing/live?token=x") as ws:
            ws.receive_json()
    assert refused.value.code == 4404


def test_the_wrong_moment_is_409(client, app):
    game = new_game(client, app)
    response = client.post(f"/api/games/{game['id']}/turn/end",
                           headers={"X-Token": game["token"]}, json={"turn_id": "r1t1"})
    assert response.status_code == 409 and "round" in response.json()["detail"]
