"""The tournament hall's API: a tournament seats rounds of tables (each a game), results
come from the tables' score sheets and the director's overrides (an append-only audit
log), the standings recompute from both; bad input changes nothing."""

from __future__ import annotations

import ast
import inspect

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.server import hallstore
from tests.server_helpers import (
    PAIR_O11_O12,
    RUN_O7_O10,
    RUN_R2_R5,
    table_photo,
    turn_body,
    upload,
)

PLAYERS = [f"P{n:02d}" for n in range(1, 13)]
RACKS = ("R5 J K13", "B2", "O10 O11", "K1")  # 43, 2, 21 and 1 points left on the racks


def h(token: str) -> dict:
    return {"X-Token": token}


def new_tournament(client, app, *, rounds=2, games=1, timer="1min", fmt="club") -> dict:
    response = client.post("/api/tournaments", headers=h(app.state.table_token), json={
        "name": "Club night", "format": fmt, "timer": timer,
        "switches": {"rounds": rounds, "games_per_round": games}})
    assert response.status_code == 201, response.text
    tournament = response.json()
    response = client.post(f"/api/tournaments/{tournament['tournament']}/players",
                           headers=h(tournament["director_token"]), json={"players": PLAYERS})
    assert response.status_code == 200, response.text
    return tournament


def url(tournament: dict, tail: str) -> str:
    return f"/api/tournaments/{tournament['tournament']}{tail}"


def seat(client, tournament, number, **body):
    return client.post(url(tournament, "/rounds"), headers=h(tournament["director_token"]),
                       json={"round": number, **body})


def console(client, tournament) -> dict:
    response = client.get(url(tournament, "/console"), headers=h(tournament["director_token"]))
    assert response.status_code == 200, response.text
    return response.json()


def play_game(client, table: dict) -> dict:
    """One game at a table: its first player goes out, the others count their racks."""
    game_url = f"/api/games/{table['game_id']}"
    assert client.post(f"{game_url}/rounds", headers=h(table["token"])).status_code == 200
    winner, *others = table["players"]
    response = client.post(f"{game_url}/round/end", headers=h(table["token"]), json={
        "winner": winner, "racks": dict(zip(others, RACKS, strict=False))})
    assert response.status_code == 200, response.text
    return response.json()["sheet"]["rounds"][-1]["scores"]


def standings(client, tournament, token=None) -> dict:
    response = client.get(url(tournament, "/standings"),
                          headers=h(token or tournament["watch_token"]))
    assert response.status_code == 200, response.text
    return response.json()


def log(client, tournament) -> list[dict]:
    return client.get(url(tournament, "/log"),
                      headers=h(tournament["director_token"])).json()["log"]


def test_a_round_seats_every_player_once_at_numbered_tables_each_a_game(client, app):
    tournament = new_tournament(client, app, timer="40s")
    response = seat(client, tournament, 1)
    assert response.status_code == 200, response.text
    tables = response.json()["tables"]
    assert [t["number"] for t in tables] == [1, 2, 3]
    seated = [p for t in tables for p in t["players"]]
    assert sorted(seated) == PLAYERS
    for t in tables:
        game = client.get(f"/api/games/{t['game_id']}", headers=h(t["token"])).json()
        assert game["hall"] == {"tournament": tournament["tournament"], "round": 1,
                                "table": t["number"]}
        assert game["timer"]["seconds"] == 40.0 and game["edition"] == "tournament"
    assert standings(client, tournament)["seating"]["tables"] == [t["players"] for t in tables]


def test_standings_come_from_the_tables_score_sheets(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    scores = {}
    for table in console(client, tournament)["tables"]:
        scores.update(play_game(client, table))
    lines = standings(client, tournament)["standings"]
    assert {s["player"]: s["tournament_points"] for s in lines} == scores
    assert [s["tournament_points"] for s in lines] == sorted(scores.values(), reverse=True)
    assert set(lines[0]["tie_breaks"]) >= {"wins", "head-to-head", "buchholz"}


def test_seating_a_round_twice_is_refused_and_changes_nothing(client, app):
    tournament = new_tournament(client, app)
    first = seat(client, tournament, 1).json()
    entries = log(client, tournament)
    again = seat(client, tournament, 1)
    assert again.status_code == 409 and "already seated" in again.json()["detail"]
    assert console(client, tournament)["tables"] == first["tables"]
    assert log(client, tournament) == entries


def test_the_next_round_waits_for_every_table_then_seats_by_standings(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    tables = console(client, tournament)["tables"]
    play_game(client, tables[0])
    early = seat(client, tournament, 2)
    assert early.status_code == 409
    assert "table 2 has 0 of 1 games" in early.json()["detail"]
    for table in tables[1:]:
        play_game(client, table)
    response = seat(client, tournament, 2)
    assert response.status_code == 200, response.text
    leader = standings(client, tournament)["standings"][0]["player"]
    assert leader in response.json()["seating"]["tables"][0]  # the leaders sit at table 1
    games = {t["game_id"] for t in tables}
    assert not games & {t["game_id"] for t in console(client, tournament)["tables"]}


def test_a_player_in_two_tables_is_refused_with_every_problem(client, app):
    tournament = new_tournament(client, app)
    tables = [PLAYERS[0:4], PLAYERS[4:8], PLAYERS[7:11]]  # P08 twice, P12 nowhere
    response = seat(client, tournament, 1, seating={"tables": tables})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "P08 is seated 2 times" in detail and "P12 has no seat" in detail
    assert console(client, tournament)["tables"] == [] and log(client, tournament) == []


def test_an_override_needs_a_reason_and_goes_to_the_log_and_the_standings(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    tables = console(client, tournament)["tables"]
    for table in tables:
        play_game(client, table)
    player = tables[0]["players"][1]
    body = {"round": 1, "table": 1, "game": 1, "player": player, "score": 100}
    director = h(tournament["director_token"])
    refused = client.post(url(tournament, "/overrides"), headers=director,
                          json={"kind": "score", "body": body, "reason": "  "})
    assert refused.status_code == 422 and "reason" in refused.json()["detail"]
    before = log(client, tournament)
    response = client.post(url(tournament, "/overrides"), headers=director, json={
        "kind": "score", "body": body, "reason": "rack counted twice"})
    assert response.status_code == 201, response.text
    entry = log(client, tournament)[-1]
    assert len(log(client, tournament)) == len(before) + 1
    assert (entry["kind"], entry["reason"], entry["body"]) == ("score", "rack counted twice",
                                                                body)
    line = next(s for s in standings(client, tournament)["standings"] if s["player"] == player)
    assert line["tournament_points"] == 100 and line["place"] == 1


def test_results_for_a_table_of_another_round_are_refused(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    for table in console(client, tournament)["tables"]:
        play_game(client, table)
    seat(client, tournament, 2)
    old = standings(client, tournament)
    director = h(tournament["director_token"])
    players = old["seating"]["tables"][0]
    late = client.post(url(tournament, "/overrides"), headers=director, json={
        "kind": "result", "reason": "camera failed",
        "body": {"round": 1, "table": 1, "game": 1, "scores": dict.fromkeys(players, 0)}})
    assert late.status_code == 409 and "round 1 is over" in late.json()["detail"]
    by_hand = client.post(url(tournament, "/overrides"), headers=director, json={
        "kind": "result", "reason": "camera failed",
        "body": {"round": 2, "table": 1, "game": 1,
                 "scores": {p: 10 - i for i, p in enumerate(players)}}})
    assert by_hand.status_code == 201, by_hand.text
    assert standings(client, tournament)["standings"] != old["standings"]


def test_the_audit_log_cannot_be_changed_by_any_path(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    storage = app.state.storage
    for statement in ("UPDATE hall_log SET reason = 'nothing happened'", "DELETE FROM hall_log"):
        with pytest.raises(DBAPIError, match="append-only"):
            with storage.transaction() as db:
                db.execute(text(statement))
    assert [e["kind"] for e in log(client, tournament)] == ["seat"]
    # No route writes to the log but the override's POST; none changes or deletes.
    for route in app.routes:
        if "/api/tournaments" in getattr(route, "path", ""):
            assert not set(route.methods) & {"PUT", "PATCH", "DELETE"}, route.path
    # The store's code has no update or delete of the log table.
    tree = ast.parse(inspect.getsource(hallstore))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("update", "delete"):
            assert not (node.args and getattr(node.args[0], "id", "") == "hall_log")


def test_a_referee_call_carries_the_picture_and_is_answered_once(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    table = console(client, tournament)["tables"][1]
    game = {"id": table["game_id"], "token": table["token"]}
    client.post(f"/api/games/{game['id']}/rounds", headers=h(table["token"]))
    photo = upload(client, game, "photo", table_photo(RUN_R2_R5)).json()
    called = client.post(f"/api/games/{game['id']}/call", headers=h(table["token"]))
    assert called.status_code == 201, called.text
    assert called.json()["photo_id"] == photo["photo_id"] and called.json()["table"] == 2
    twice = client.post(f"/api/games/{game['id']}/call", headers=h(table["token"]))
    assert twice.status_code == 409
    seen = console(client, tournament)
    assert seen["tables"][1]["flags"]["referee_called"]
    assert [c["id"] for c in seen["calls"]] == [called.json()["id"]]
    picture = client.get(f"/api/games/{game['id']}/photos/{photo['photo_id']}",
                         headers=h(table["watch_token"]))
    assert picture.status_code == 200 and picture.content
    answer = url(tournament, f"/calls/{called.json()['id']}/answer")
    director = h(tournament["director_token"])
    assert client.post(answer, headers=director, json={"answer": "set stands"}).status_code \
        == 200
    again = client.post(answer, headers=director, json={"answer": "set stands"})
    assert again.status_code == 409 and "answered already" in again.json()["detail"]
    assert console(client, tournament)["calls"] == []
    assert log(client, tournament)[-1]["reason"] == "set stands"


def test_pause_all_stops_every_running_turn_timer(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    tables = console(client, tournament)["tables"]
    for table in tables[:2]:
        client.post(f"/api/games/{table['game_id']}/rounds", headers=h(table["token"]))
    response = client.post(url(tournament, "/pause"), headers=h(tournament["director_token"]),
                           json={"paused": True})
    assert response.json() == {"paused": True, "tables": [1, 2]}
    assert [t["paused"] for t in console(client, tournament)["tables"]] == [True, True, False]


def test_the_big_screen_token_reads_but_changes_nothing(client, app):
    tournament = new_tournament(client, app)
    watch = h(tournament["watch_token"])
    assert client.post(url(tournament, "/rounds"), headers=watch,
                       json={"round": 1}).status_code == 403
    assert client.get(url(tournament, "/console"), headers=watch).status_code == 403
    assert client.get(url(tournament, "/standings"), headers={}).status_code == 401
    assert standings(client, tournament)["round"] == 0


def test_exports_hold_the_standings_and_every_game(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    for table in console(client, tournament)["tables"]:
        play_game(client, table)
    director = h(tournament["director_token"])
    lines = client.get(url(tournament, "/standings.csv"), headers=director).text.splitlines()
    assert lines[0] == "place,player,tournament_points,games,wins,head-to-head,buchholz"
    assert len(lines) == 13
    games = client.get(url(tournament, "/games.csv"), headers=director).text.splitlines()
    assert games[0] == "round,table,game,player,score" and len(games) == 13
    data = client.get(url(tournament, "/export.json"), headers=director).json()
    assert data["schema"] == "rummikub-hall/1"
    assert [s["player"] for s in data["standings"]] == [ln.split(",")[1] for ln in lines[1:]]
    assert [(g["round"], g["table"]) for g in data["games"]] == [(1, 1), (1, 2), (1, 3)]
    assert all(len(g["sheet"]["rounds"]) == 1 for g in data["games"])


def test_an_archive_imports_into_an_empty_server_with_nothing_lost(client, app, tmp_path,
                                                                  request):
    from fastapi.testclient import TestClient

    from tests import server_helpers

    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    tables = console(client, tournament)["tables"]
    game = {"id": tables[0]["game_id"], "token": tables[0]["token"]}
    client.post(f"/api/games/{game['id']}/rounds", headers=h(game["token"]))
    photo = upload(client, game, "photo", table_photo(RUN_R2_R5)).json()
    client.post(f"/api/games/{game['id']}/turn/end", headers=h(game["token"]),
                json=turn_body(client, game))
    client.post(f"/api/games/{game['id']}/round/end", headers=h(game["token"]), json={
        "winner": tables[0]["players"][0],
        "racks": dict(zip(tables[0]["players"][1:], RACKS, strict=False))})
    for table in tables[1:]:
        play_game(client, table)
    # A hand was over two of the photo's tiles when the camera last told it.
    storage = app.state.service.storage
    reading_id = storage.reading_by_photo(game["id"], photo["photo_id"]).id
    hidden = [{"id": 0, "code": "R2", "corners": [[1, 2], [3, 2], [3, 6], [1, 6]]},
              {"id": 1, "code": "R3", "corners": [[4, 2], [6, 2], [6, 6], [4, 6]]}]
    storage.set_hidden(game["id"], reading_id, hidden)
    voided = client.post(url(tournament, "/overrides"), headers=h(tournament["director_token"]),
                         json={"kind": "void-turn", "reason": "played out of turn",
                               "body": {"round": 1, "table": 1, "turn": 1, "drawn": []}})
    assert voided.status_code == 201, voided.text
    director = h(tournament["director_token"])
    archive = client.get(url(tournament, "/archive"), headers=director).content
    exported = client.get(url(tournament, "/export.json"), headers=director).json()

    where = {}
    if server_helpers.DATABASE is not None:  # on PostgreSQL: a second, empty database
        pg = request.getfixturevalue("postgres_server")
        where["db_path"] = pg.new_database()
        request.addfinalizer(lambda: pg.drop_database(where["db_path"], missing_ok=True))
    other = server_helpers.make_app(tmp_path / "other", **where)
    with TestClient(other) as empty:
        response = empty.post("/api/tournaments/import", headers=h(other.state.table_token),
                              files={"archive": ("t.json", archive, "application/json")})
        assert response.status_code == 201, response.text
        again = empty.post("/api/tournaments/import", headers=h(other.state.table_token),
                           files={"archive": ("t.json", archive, "application/json")})
        assert again.status_code == 409 and "nothing was stored" in again.json()["detail"]
        imported = empty.get(url(tournament, "/export.json"), headers=director).json()
        assert imported == exported
        assert other.state.service.storage.hidden(game["id"], reading_id) == hidden
        picture = empty.get(f"/api/games/{game['id']}/photos/{photo['photo_id']}",
                            headers=h(game["token"]))
        assert picture.content == client.get(f"/api/games/{game['id']}/photos/"
                                             f"{photo['photo_id']}",
                                             headers=h(game["token"])).content


def test_an_archive_of_the_first_schema_still_imports(client, app, tmp_path, request):
    """Written before the hidden tiles were stored: no `reading_hidden` list; one with a
    list it should not have is refused whole."""
    import json

    from fastapi.testclient import TestClient

    from tests import server_helpers

    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    for table in console(client, tournament)["tables"]:
        play_game(client, table)
    director = h(tournament["director_token"])
    archive = client.get(url(tournament, "/archive"), headers=director).json()
    assert archive["schema"] == "rummikub-hall-archive/2" and archive["tables"]["reading_hidden"] == []
    old = {"schema": "rummikub-hall-archive/1",
           "tables": {k: v for k, v in archive["tables"].items() if k != "reading_hidden"}}
    exported = client.get(url(tournament, "/export.json"), headers=director).json()
    where = {}
    if server_helpers.DATABASE is not None:
        pg = request.getfixturevalue("postgres_server")
        where["db_path"] = pg.new_database()
        request.addfinalizer(lambda: pg.drop_database(where["db_path"], missing_ok=True))
    other = server_helpers.make_app(tmp_path / "other", **where)
    with TestClient(other) as empty:
        token = h(other.state.table_token)
        mixed = dict(old, tables=archive["tables"])  # schema 1 with schema 2's extra list
        refused = empty.post("/api/tournaments/import", headers=token,
                             files={"archive": ("t.json", json.dumps(mixed), "application/json")})
        assert refused.status_code == 422 and "reading_hidden" not in refused.json()["detail"]
        response = empty.post("/api/tournaments/import", headers=token,
                              files={"archive": ("t.json", json.dumps(old), "application/json")})
        assert response.status_code == 201, response.text
        assert empty.get(url(tournament, "/export.json"), headers=director).json() == exported


def test_an_archive_that_is_not_one_is_refused_with_words(client, app):
    response = client.post("/api/tournaments/import", headers=h(app.state.table_token),
                           files={"archive": ("t.json", b'{"schema": "x"}', "application/json")})
    assert response.status_code == 422 and "not a tournament archive" in response.json()["detail"]
    response = client.post("/api/tournaments/import", headers=h(app.state.table_token),
                           files={"archive": ("t.json", b"not json", "application/json")})
    assert response.status_code == 400


def test_a_disputed_turn_shows_its_photos_readings_verdict_and_overrides(client, app):
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    table = console(client, tournament)["tables"][0]
    game = {"id": table["game_id"], "token": table["token"]}
    client.post(f"/api/games/{game['id']}/rounds", headers=h(game["token"]))
    photo = upload(client, game, "photo", table_photo(RUN_O7_O10, PAIR_O11_O12)).json()
    ended = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game["token"]),
                json=turn_body(client, game)).json()
    director = h(tournament["director_token"])
    missing = client.post(url(tournament, "/overrides"), headers=director, json={
        "kind": "set-valid", "body": {"round": 1, "table": 1, "turn": 9}, "reason": "x"})
    assert missing.status_code == 404 and "no judged turn 9" in missing.json()["detail"]
    ruled = client.post(url(tournament, "/overrides"), headers=director, json={
        "kind": "set-valid", "reason": "the pair was a run of three",
        "body": {"round": 1, "table": 1, "turn": ended["turn"], "set": ["O11", "O12"]}})
    assert ruled.status_code == 201, ruled.text
    view = client.get(url(tournament, f"/turns/1/1/{ended['turn']}"), headers=director).json()
    assert view["verdict"]["after_photo_id"] == photo["photo_id"]
    assert view["verdict"]["player"] == table["players"][0]
    assert view["readings"]["after"]["photo_id"] == photo["photo_id"]
    assert len(view["readings"]["after"]["tiles"]) == len(photo["tiles"])
    assert [(o["kind"], o["reason"]) for o in view["overrides"]] == [
        ("set-valid", "the pair was a run of three")]
    assert view["ruled_valid"] == [["O11", "O12"]]
    assert client.get(url(tournament, "/turns/1/1/9"), headers=director).status_code == 404


def test_hall_settings_change_the_timer_and_the_format_until_round_1(client, app):
    tournament = new_tournament(client, app)
    director = h(tournament["director_token"])
    changed = client.post(url(tournament, "/settings"), headers=director, json={
        "timer": "2min", "switches": {"edition": "original", "rounds": 2,
                                      "games_per_round": 1}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["format"]["edition"] == "original"
    bad = client.post(url(tournament, "/settings"), headers=director,
                      json={"switches": {"rounds": 0}})
    assert bad.status_code == 422 and "rounds" in bad.json()["detail"]
    seat(client, tournament, 1)
    table = console(client, tournament)["tables"][0]
    game = client.get(f"/api/games/{table['game_id']}", headers=h(table["token"])).json()
    assert (game["edition"], game["timer"]["seconds"]) == ("original", 120.0)
    late = client.post(url(tournament, "/settings"), headers=director,
                       json={"format": "swiss-2p"})
    assert late.status_code == 409 and "fixed" in late.json()["detail"]
    assert client.get(url(tournament, ""), headers=director).json()["format"] == "club"


def test_a_camera_that_went_quiet_is_flagged_on_the_console(client, app):
    import time

    from app.server.frames import CAMERA_QUIET_S

    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    table = console(client, tournament)["tables"][0]
    client.post(f"/api/games/{table['game_id']}/rounds", headers=h(table["token"]))
    assert not console(client, tournament)["tables"][0]["flags"]["camera_lost"]
    sent = client.post(f"/api/games/{table['game_id']}/frames?camera=phone-1",
                       headers={**h(table["token"]), "Content-Type": "image/jpeg"},
                       content=table_photo(RUN_R2_R5))
    assert sent.status_code == 202, sent.text
    assert not console(client, tournament)["tables"][0]["flags"]["camera_lost"]
    frames = app.state.hub.games[table["game_id"]]  # the camera went quiet 11 s ago:
    frames.camera_seen = time.monotonic() - CAMERA_QUIET_S - 1
    assert console(client, tournament)["tables"][0]["flags"]["camera_lost"]


def test_two_directors_seating_the_same_round_at_once_seat_it_once(client, app):
    from concurrent.futures import ThreadPoolExecutor

    tournament = new_tournament(client, app)
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: seat(client, tournament, 1), range(2)))
    assert sorted(a.status_code for a in answers) == [200, 409]
    assert len(console(client, tournament)["tables"]) == 3
    assert [e["kind"] for e in log(client, tournament)] == ["seat"]
