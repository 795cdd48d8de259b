"""Every refusal the server sends carries a message id the page words in its player's
language, and the id's English words are exactly the `detail` the API and the CLI give:
a scan of app/server for refusals left with bare English, and representative routes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.server.messages import ENGLISH, say
from tests.server_helpers import make_app, new_game, upload

SERVER = Path(__file__).resolve().parent.parent / "app" / "server"
# A websocket is refused by closing it with a reason, not with a JSON body to word.
BARE_ALLOWED = {'raise HTTPException(404, "no such game")'}


def sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(SERVER.rglob("*.py"))}


def test_no_refusal_in_the_server_is_bare_english():
    bare = []
    for path, text in sources().items():
        for match in re.finditer(r'raise (Conflict|BadInput|NotFound|GameError|HTTPException)'
                                 r'\(\s*(\d+,\s*)?f?["\'][^\n]*', text):
            if match.group(0).strip() not in BARE_ALLOWED:
                bare.append(f"{path.name}: {match.group(0)}")
    assert bare == [], "refusals without a message id"
    # another module's English words are a parameter of an id, not the whole refusal
    passed_on = [f"{path.name}: {m.group(0)}" for path, text in sources().items()
                 for m in re.finditer(r"raise (Conflict|BadInput|NotFound|GameError)\(str\(",
                                      text)]
    assert passed_on == []


def test_every_id_the_server_says_has_english_words():
    said = {m for text in sources().values()
            for m in re.findall(r'say\(\s*"([\w.]+)"\s*[,)]', text)}
    assert len(said) > 60
    assert sorted(said - set(ENGLISH)) == []


def worded(response, status: int, message_id: str) -> dict:
    """The refusal's status and id, and its id's English equal to its detail."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["message_id"]["id"] == message_id, body
    assert say(message_id, **body["message_id"]["params"]).english == body["detail"]
    return body


@pytest.fixture
def server(tmp_path):
    from fastapi.testclient import TestClient

    app = make_app(tmp_path)
    with TestClient(app) as client:
        yield client, app


def test_tokens_and_unknown_games(server):
    client, app = server
    worded(client.post("/api/games", json={"players": ["Ann", "Ben"]}), 401,
           "token.table_missing")
    worded(client.post("/api/games", json={"players": ["Ann", "Ben"]},
                       headers={"X-Token": "nope"}), 403, "token.table_wrong")
    body = worded(client.get("/api/games/g-none", headers={"X-Token": "x"}), 404,
                  "game.not_found")
    assert body["detail"] == "no game with id 'g-none'"
    game = new_game(client, app)
    worded(client.post(f"/api/games/{game['id']}/rounds",
                       headers={"X-Token": game["watch_token"]}), 403, "token.read_only")
    # FastAPI's own refusals (no such route) keep their plain body
    response = client.get("/api/no-such-route")
    assert response.status_code == 404 and response.json() == {"detail": "Not Found"}


def test_game_setup_and_request_bodies(server):
    client, app = server
    table = {"X-Token": app.state.table_token}
    body = worded(client.post("/api/games", json={"players": ["Ann"]}, headers=table), 422,
                  "request.invalid")
    assert body["detail"].startswith("players: ")
    worded(client.post("/api/games", json={"players": ["Ann", "Ann"]}, headers=table), 422,
           "players.same_name")
    body = worded(client.post("/api/games", json={"players": "Ann"}, headers=table), 422,
                  "request.invalid")
    assert body["message_id"]["params"]["field"] == "players"
    body = worded(client.post("/api/games", content=b"{not json", headers={
        **table, "content-type": "application/json"}), 400, "request.not_json_because")
    assert body["detail"].startswith("the body is not valid JSON")


def test_photos_refused(server):
    client, app = server
    game = new_game(client, app)
    body = worded(upload(client, game, "photo", b"hello", content_type="text/plain"), 415,
                  "upload.not_image")
    assert body["detail"].endswith("not text/plain")
    response = upload(client, game, "photo", b"\xff\xd8\xff" + b"\0" * 64)
    assert response.status_code in (400, 415)
    assert response.json()["message_id"]["id"] in ("photo.corrupt", "photo.not_image")
    worded(response, response.status_code, response.json()["message_id"]["id"])


def test_tournament_refusals(server):
    client, app = server
    table = {"X-Token": app.state.table_token}
    body = worded(client.post("/api/tournaments", headers=table, json={
        "name": "Club night", "format": "club", "timer": "forever"}), 422, "request.invalid")
    assert body["message_id"]["params"]["field"] == "timer"
    response = client.post("/api/tournaments", headers=table, json={
        "name": "Club night", "format": "club", "timer": "1min"})
    assert response.status_code == 201, response.text
    tournament = response.json()
    base = f"/api/tournaments/{tournament['tournament']}"
    director = {"X-Token": tournament["director_token"]}
    worded(client.post(base + "/players", headers={"X-Token": tournament["watch_token"]},
                       json={"players": ["A", "B"]}), 403, "token.screen_read_only")
    worded(client.post(base + "/players", headers=director, json={"players": ["A", "A"]}),
           422, "tournament.players")
    worded(client.post(base + "/rounds", headers=director, json={"round": 2}), 409,
           "tournament.round_not_next")
    worded(client.get("/api/tournaments/t-none", headers=director), 404,
           "tournament.not_found")
    worded(client.post("/api/tournaments/import", headers=table,
                       files={"archive": ("a.json", b"not json", "application/json")}), 400,
           "archive.not_json")
    worded(client.post("/api/tournaments/import", headers=table,
                       files={"archive": ("a.json", b'{"schema": "x"}', "application/json")}),
           422, "archive.schema")


@pytest.mark.parametrize("words, message_id", [
    ("corrupt photo: the PNG header is cut short", "photo.corrupt"),
    ("photo too large: 9000x9000 pixels", "upload.too_many_pixels"),
    ("not an image: the bytes are not a JPEG photo", "photo.not_image"),
    ("empty photo: no bytes were given", "photo.empty"),
    ("GIF is not read: send the photo as JPEG", "photo.not_read"),
])
def test_a_decode_error_keeps_its_words_under_an_id(words, message_id):
    from app.server.messages import photo_message

    message = photo_message(words)
    assert message.id == message_id and message.english == words
