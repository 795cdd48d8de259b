"""One test per security rule of the game server: tokens, the spectator link, upload size."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tests.server_helpers import (
    GROUP_9S,
    RUN_R2_R5,
    make_app,
    new_game,
    start_round,
    table_photo,
    upload,
)

PHOTO = table_photo(RUN_R2_R5, GROUP_9S)


@pytest.fixture
def app(tmp_path):
    return make_app(tmp_path, upload_limit=300_000)


@pytest.fixture
def game(client, app):
    """A game in its first round with one table reading, for requests to try to change."""
    game = new_game(client, app, timer={"seconds": 120, "extensions": 2})
    start_round(client, game)
    assert upload(client, game, "photo", PHOTO).status_code == 200
    return game


def snapshot(app, game_id):
    """Everything stored about a game."""
    storage = app.state.storage
    row = storage.game(game_id)
    return (row.state, storage.turns(game_id), storage.rounds(game_id),
            storage.photo_count(game_id))


TURN = {"json": {"turn_id": "r1t1"}}  # the running turn of the `game` fixture


def changing_requests(gid):
    """Every request that changes a game: (method, path, keyword arguments)."""
    photo = {"files": {"photo": ("t.jpg", PHOTO, "image/jpeg")}}
    return [
        ("post", f"/api/games/{gid}/rounds", {"json": {"starter": "Ben"}}),
        ("post", f"/api/games/{gid}/turn/pause", TURN),
        ("post", f"/api/games/{gid}/turn/resume", TURN),
        ("post", f"/api/games/{gid}/turn/extend", TURN),
        ("post", f"/api/games/{gid}/turn/end", TURN),
        ("post", f"/api/games/{gid}/round/end", {"json": {"winner": "Ann",
                                                           "racks": {"Ben": "R5"}}}),
        ("post", f"/api/games/{gid}/finish", {}),
        ("post", f"/api/games/{gid}/photo", photo),
        ("post", f"/api/games/{gid}/start-draw", photo),
        ("post", f"/api/games/{gid}/racks", {**photo, "data": {"player": "Ben"}}),
        ("post", f"/api/games/{gid}/corrections", {"json": {"tile_id": 0, "code": "R1"}}),
        ("post", f"/api/games/{gid}/frames", {"content": PHOTO,
                                              "headers": {"content-type": "image/jpeg"}}),
    ]


def _send(client, method, path, kwargs, token):
    kwargs = dict(kwargs)
    headers = dict(kwargs.pop("headers", {}))
    if token is not None:
        headers["X-Token"] = token
    return getattr(client, method)(path, headers=headers, **kwargs)


def test_a_change_without_a_token_is_401_and_changes_nothing(client, app, game):
    before = snapshot(app, game["id"])
    for method, path, kwargs in changing_requests(game["id"]):
        response = _send(client, method, path, kwargs, None)
        assert response.status_code == 401, path
        assert response.json()["detail"]
    assert snapshot(app, game["id"]) == before
    assert app.state.hub.stats(game["id"])["received"] == 0


def test_a_change_with_a_wrong_token_is_403_and_changes_nothing(client, app, game):
    other = new_game(client, app)
    before = snapshot(app, game["id"])
    for token in ("x" * 22, other["token"], app.state.table_token, game["token"][:-1]):
        for method, path, kwargs in changing_requests(game["id"]):
            response = _send(client, method, path, kwargs, token)
            assert response.status_code == 403, (path, token)
    assert snapshot(app, game["id"]) == before


def test_the_token_may_come_as_a_query_parameter(client, game):
    response = client.post(f"/api/games/{game['id']}/turn/pause?token={game['token']}",
                           json=TURN["json"])
    assert response.status_code == 200 and response.json()["round"]["turn"]["paused"]


def test_the_spectator_link_watches_but_never_changes(client, app, game):
    watch = game["watch_token"]
    view = client.get(f"/api/games/{game['id']}", headers={"X-Token": watch})
    assert view.status_code == 200
    assert view.json()["token"] is None and view.json()["watch_token"] is None
    for path in ("reading", "history", "sheet.csv", "frames/stats"):
        assert client.get(f"/api/games/{game['id']}/{path}",
                          headers={"X-Token": watch}).status_code == 200, path
    before = snapshot(app, game["id"])
    for method, path, kwargs in changing_requests(game["id"]):
        response = _send(client, method, path, kwargs, watch)
        assert response.status_code == 403 and "read-only" in response.json()["detail"], path
    with client.websocket_connect(f"/api/games/{game['id']}/live?token={watch}") as ws:
        assert ws.receive_json()["type"] == "game"
        ws.send_bytes(PHOTO)
        assert "read-only" in ws.receive_json()["detail"]
    assert snapshot(app, game["id"]) == before


def test_only_the_table_token_creates_games(client, app):
    body = {"players": ["Ann", "Ben"]}
    assert client.post("/api/games", json=body).status_code == 401
    assert client.post("/api/games", json=body, headers={"X-Token": "nope"}).status_code == 403
    assert client.get("/api/games").status_code == 401
    assert app.state.storage.games() == []


def test_the_live_socket_needs_the_games_token(client, game):
    for query, code in (("", 4401), ("?token=wrong", 4403)):
        with pytest.raises(WebSocketDisconnect) as refused:
            with client.websocket_connect(f"/api/games/{game['id']}/live{query}") as ws:
                ws.receive_json()
        assert refused.value.code == code


def test_an_oversize_upload_is_413_and_changes_nothing(client, app, game):
    before = snapshot(app, game["id"])
    big = PHOTO + b"\0" * 400_000  # over the 300 kB limit of this app
    assert upload(client, game, "photo", big).status_code == 413
    response = client.post(f"/api/games/{game['id']}/frames", content=big,
                           headers={"X-Token": game["token"], "content-type": "image/jpeg"})
    assert response.status_code == 413

    # Without a Content-Length (chunked), the body is counted as it arrives.
    def chunks():
        for _ in range(10):
            yield b"\xff" * 100_000

    response = client.post(f"/api/games/{game['id']}/frames", content=chunks(),
                           headers={"X-Token": game["token"], "content-type": "image/jpeg"})
    assert response.status_code == 413
    assert snapshot(app, game["id"]) == before
    assert app.state.hub.stats(game["id"])["received"] == 0


def test_tokens_are_128_bit_random_and_all_different(client, app):
    games = [new_game(client, app) for _ in range(5)]
    tokens = [app.state.table_token] + [g[k] for g in games for k in ("token", "watch_token")]
    assert len(set(tokens)) == len(tokens)
    for token in tokens:
        assert len(bytes.fromhex(token)) == 16
    assert all(not g["id"].startswith("-") for g in games)


def test_tokens_are_compared_in_constant_time(client, game, monkeypatch):
    import hmac

    calls = []
    real = hmac.compare_digest

    def recording(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    client.get(f"/api/games/{game['id']}", headers={"X-Token": "guess"})
    assert (b"guess", game["token"].encode()) in calls


def test_ids_and_tokens_never_begin_with_a_dash_for_the_command_line():
    # `rummikub watch --game ID --token T`: argparse takes "-x..." for an option. A
    # base64 text begins with "-" once in 64; these must never.
    from app.server.storage import new_id, new_token

    made = [new_token() for _ in range(3000)] + [new_id() for _ in range(3000)]
    assert not [t for t in made if t.startswith("-")]
    assert all(len(bytes.fromhex(new_token())) == 16 for _ in range(100))  # still 128 bits


def test_a_body_that_is_not_a_photo_may_not_take_a_photos_size(tmp_path):
    """Photos may be 64 MB; a JSON body of that size would take hundreds of MB once parsed,
    so anything that is not a photo is refused over 1 MB, by its length or as it arrives."""
    app = make_app(tmp_path)
    players = json.dumps({"players": ["Ann"] * 300_000}).encode()  # 2.1 MB
    with TestClient(app) as client:
        headers = {"X-Token": app.state.table_token, "content-type": "application/json"}
        response = client.post("/api/games", content=players, headers=headers)
        assert response.status_code == 413
        assert "a request that is not a photo may be at most 1 MB" in response.json()["detail"]
        response = client.post("/api/games", content=iter([players]), headers=headers)
        assert response.status_code == 413
        assert client.get("/api/games", headers=headers).json() == []
