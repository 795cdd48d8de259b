"""The hall's live socket (`/api/tournaments/{id}/live`): the token is checked before the
socket is accepted; the director's console hears every change of the tournament (a table's
game, a timeout, a camera gone quiet, seating, overrides, calls) with the tables it
concerns, the big screen only the standings; a change that rolls back is never told; a
flood is closed as on the table socket.

Each test runs on SQLite and on PostgreSQL (tests/conftest.py). Two processes on one
PostgreSQL are in tests/test_server_hall_live_processes.py.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial

import pytest
from starlette.testclient import WebSocketDenialResponse

from app.server import hallfeed
from tests.server_helpers import RUN_R2_R5, table_photo, turn_body, upload
from tests.test_server_tournaments import console, h, new_tournament, play_game, seat, url


def live(client, tournament: dict, token: str):
    ws = client.websocket_connect(url(tournament, f"/live?token={token}"))
    ws.__enter__()
    return ws


def until_pong(ws) -> list[dict]:
    """Every message the socket had before the answer to a ping sent now: the changes
    told before it (the feed sends a change before the pong that follows it)."""
    ws.send_text('{"type": "ping"}')
    messages = []
    while (message := ws.receive_json()) != {"type": "pong"}:
        messages.append(message)
    return messages


def changed(ws) -> list[tuple[list[str], list[int] | None]]:
    return [(m["parts"], m.get("tables")) for m in until_pong(ws) if m["type"] == "changed"]


@pytest.fixture
def app(tmp_path, clock):
    """A server whose wall clock the test moves (the turn timers'); on both databases."""
    from tests.server_helpers import make_app

    return make_app(tmp_path, clock=clock)


@pytest.fixture
def hall(client, app):
    tournament = new_tournament(client, app)
    assert seat(client, tournament, 1).status_code == 200
    director = live(client, tournament, tournament["director_token"])
    screen = live(client, tournament, tournament["watch_token"])
    assert director.receive_json() == {"type": "hello", "role": "director",
                                       "parts": list(hallfeed.PARTS)}
    assert screen.receive_json() == {"type": "hello", "role": "screen",
                                     "parts": ["standings"]}
    yield tournament, director, screen
    director.__exit__(None, None, None)
    screen.__exit__(None, None, None)


def test_the_token_is_checked_before_the_socket_is_accepted(client, app):
    tournament = new_tournament(client, app)
    for path, status, words in (
            ("/live", 401, "tournament's token"),
            ("/live?token=wrong", 403, "token"),
            (f"/live?token={app.state.table_token}", 403, "token")):
        with pytest.raises(WebSocketDenialResponse) as refused:
            client.websocket_connect(url(tournament, path)).__enter__()
        assert refused.value.status_code == status
        assert words in refused.value.json()["detail"], refused.value.json()
    with pytest.raises(WebSocketDenialResponse) as refused:
        client.websocket_connect(f"/api/tournaments/nope/live?token={tournament['watch_token']}"
                                 ).__enter__()
    assert refused.value.status_code == 404 and "nope" in refused.value.json()["detail"]


def test_a_table_s_game_reaches_the_console_with_its_number_and_scores_the_screen(hall, client):
    tournament, director, screen = hall
    table = console(client, tournament)["tables"][1]
    game = {"id": table["game_id"], "token": table["token"]}
    assert client.post(f"/api/games/{game['id']}/rounds", headers=h(game["token"])).is_success
    assert changed(director) == [(["tables"], [2])]
    photo = upload(client, game, "photo", table_photo(RUN_R2_R5))
    assert photo.status_code == 200, photo.text
    assert changed(director) == [(["tables"], [2])]  # the table's stable reading
    ended = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game["token"]),
                        json=turn_body(client, game))
    assert ended.status_code == 200, ended.text
    assert changed(director) == [(["tables"], [2])]
    assert changed(screen) == []  # turns change no standings
    client.post(f"/api/games/{game['id']}/round/end", headers=h(game["token"]), json={
        "winner": table["players"][0], "racks": {p: "K1" for p in table["players"][1:]}})
    assert changed(director) == [(["tables", "standings"], [2])]
    assert changed(screen) == [(["standings"], None)]


def test_overrides_calls_and_settings_reach_the_console_and_standings_the_screen(hall, client):
    tournament, director, screen = hall
    tables = console(client, tournament)["tables"]
    for table in tables:
        play_game(client, table)
    until_pong(director), until_pong(screen)
    body = {"round": 1, "table": 1, "game": 1, "player": tables[0]["players"][1], "score": 9}
    answer = client.post(url(tournament, "/overrides"), headers=h(tournament["director_token"]),
                         json={"kind": "score", "body": body, "reason": "recounted"})
    assert answer.status_code == 201, answer.text
    assert changed(director) == [(["standings", "log"], [])]
    assert changed(screen) == [(["standings"], None)]
    # Refused (no reason): nothing stored, nothing told.
    refused = client.post(url(tournament, "/overrides"), headers=h(tournament["director_token"]),
                          json={"kind": "score", "body": body, "reason": ""})
    assert refused.status_code == 422
    assert changed(director) == []
    called = client.post(f"/api/games/{tables[2]['game_id']}/call", headers=h(tables[2]["token"]))
    assert called.status_code == 201, called.text
    assert changed(director) == [(["tables", "calls"], [])]
    assert changed(screen) == []
    timer = client.post(url(tournament, "/settings"), headers=h(tournament["director_token"]),
                        json={"timer": "2min"})
    assert timer.status_code == 200, timer.text
    assert changed(director) == [(["settings", "log"], [])]
    assert changed(screen) == []
    assert seat(client, tournament, 2).status_code == 200
    assert changed(director) == [(["tables", "calls", "standings", "log"], [])]
    assert changed(screen) == [(["standings"], None)]


def _told_within(ws, seconds: float) -> list:
    """The changes the socket hears within `seconds` (the server's tick tells some)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := changed(ws):
            return found
        time.sleep(0.1)
    return []


def test_a_camera_that_starts_or_goes_quiet_changes_its_table_on_the_console(hall, client,
                                                                            app):
    from app.server.frames import CAMERA_QUIET_S

    tournament, director, screen = hall
    table = console(client, tournament)["tables"][0]
    client.post(f"/api/games/{table['game_id']}/rounds", headers=h(table["token"]))
    until_pong(director)
    sent = client.post(f"/api/games/{table['game_id']}/frames?camera=phone-1",
                       headers={**h(table["token"]), "Content-Type": "image/jpeg"},
                       content=table_photo(RUN_R2_R5))
    assert sent.status_code == 202, sent.text
    assert _told_within(director, 5) == [(["tables"], [1])]  # streaming now
    frames = app.state.hub.games[table["game_id"]]  # the camera went quiet 11 s ago:
    frames.camera_seen = time.monotonic() - CAMERA_QUIET_S - 1
    assert _told_within(director, 5) == [(["tables"], [1])]
    assert console(client, tournament)["tables"][0]["flags"]["camera_lost"]
    assert changed(screen) == []


def test_a_turn_the_timer_ends_reaches_the_console(hall, client, clock):
    tournament, director, screen = hall
    table = console(client, tournament)["tables"][2]
    client.post(f"/api/games/{table['game_id']}/rounds", headers=h(table["token"]))
    assert changed(director) == [(["tables"], [3])]
    clock.advance(61)  # the 1-minute timer ran out: the server's tick judges the turn
    assert _told_within(director, 5) == [(["tables"], [3])]
    assert console(client, tournament)["tables"][2]["flags"]["timeout"]
    assert changed(screen) == []


def test_a_change_that_rolls_back_is_never_told(hall, app):
    tournament, director, screen = hall
    storage, store = app.state.storage, app.state.hall.store
    with pytest.raises(RuntimeError), storage.transaction() as db:
        store.log(db, tournament["tournament"], "score", {}, "a write that fails", "director")
        raise RuntimeError("the write failed")
    assert changed(director) == [] and changed(screen) == []
    with storage.transaction() as db:
        store.log(db, tournament["tournament"], "score", {}, "this one commits", "director")
    assert changed(director) == [(["standings", "log"], [])]


def test_a_flood_is_closed_and_the_sockets_per_tournament_are_bounded(hall, client,
                                                                     monkeypatch):
    from starlette.websockets import WebSocketDisconnect

    from app.server.limits import MessageRate
    from app.server.routers import hall_live

    # The table socket's bucket (a burst of 20), refilled too slowly to matter here: on a
    # busy machine 30 pings may take long enough for the usual 10 a second to refill it.
    monkeypatch.setattr(hall_live, "MessageRate", partial(MessageRate, rate=0.001))
    tournament, director, screen = hall
    flooder = live(client, tournament, tournament["watch_token"])
    assert flooder.receive_json()["type"] == "hello"
    for _ in range(30):  # past the burst of 20
        flooder.send_text('{"type": "ping"}')
    messages = [flooder.receive_json()]
    while messages[-1]["type"] == "pong":
        messages.append(flooder.receive_json())
    assert messages[-1]["type"] == "error" and "too many messages" in messages[-1]["detail"]
    assert 8 <= len(messages) - 1 <= 20  # pongs: the last 8 wait for a slow reader
    with pytest.raises(WebSocketDisconnect) as closed:
        for _ in range(100):  # 100 refused in a row
            flooder.send_text('{"type": "ping"}')
        while True:
            flooder.receive_json()
    assert closed.value.code == 1008 and "too many messages" in closed.value.reason
    flooder.__exit__(None, None, None)
    monkeypatch.setattr(hallfeed, "MAX_SOCKETS", 2)  # the console and the screen are on
    with pytest.raises(WebSocketDenialResponse) as refused:
        live(client, tournament, tournament["watch_token"])
    assert refused.value.status_code == 429 and "try again" in refused.value.json()["detail"]


def test_a_burst_of_changes_is_one_message_and_the_screen_hears_no_table():
    async def run():
        console_side, screen_side = hallfeed.Watcher(True), hallfeed.Watcher(False)
        for watcher in (console_side, screen_side):
            watcher.tell({"tables"}, {3})
            watcher.tell({"tables", "standings"}, {1})
            watcher.tell({"log"}, set())
        return await console_side.next(), await screen_side.next()

    seen_by_console, seen_by_screen = asyncio.run(run())
    assert seen_by_console == [{"type": "changed", "parts": ["tables", "standings", "log"],
                                "tables": [1, 3]}]
    assert seen_by_screen == [{"type": "changed", "parts": ["standings"]}]
