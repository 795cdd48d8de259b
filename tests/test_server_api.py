"""The game server's API through FastAPI's TestClient: a game as the rules play it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine

from tests.server_helpers import (
    GROUP_9S,
    PAIR_O11_O12,
    RUN_B1_B4,
    RUN_O7_O10,
    RUN_R2_R5,
    game_in_round,
    h,
    make_app,
    new_game,
    reader,
    sample_bytes,
    table_photo,
    turn_body,
    upload,
)

STATIC = Path(__file__).resolve().parent.parent / "app" / "static"

FIRST_MELD = table_photo(RUN_R2_R5, GROUP_9S)  # 14 + 27 = 41 points
SHORT_MELD = table_photo(RUN_R2_R5, GROUP_9S, RUN_B1_B4)  # adds 10 points
MORE = table_photo(RUN_R2_R5, GROUP_9S, RUN_O7_O10)  # adds O7 O8 O9 O10
BROKEN = table_photo(RUN_R2_R5, GROUP_9S, PAIR_O11_O12)  # adds an invalid pair


@pytest.fixture
def app(tmp_path, clock):
    return make_app(tmp_path, clock=clock, tick_s=0.05)


def play_photo(client, game, data):
    response = upload(client, game, "photo", data)
    assert response.status_code == 200, response.text
    return response.json()


def end_turn(client, game, **body):
    response = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                           json=turn_body(client, game, **body))
    assert response.status_code == 200, response.text
    return response.json()


def test_health_says_the_models_are_loaded(client):
    assert client.get("/api/health").json()["models"] is True


def test_editions_list_every_preset_with_its_settings(client):
    editions = {e["name"]: e["settings"] for e in client.get("/api/editions").json()}
    assert editions["travel-tin"]["timeout_penalty"] == "restore-table"
    assert editions["rummy"]["colors"] == ["K", "R", "B", "G"]


def test_a_new_game_has_players_in_seating_order_and_its_settings(client, app):
    game = new_game(client, app, ("Cas", "Ann", "Ben"), edition="travel-tin",
                    settings={"jokers": 4}, timer={"enabled": True, "seconds": 60})
    assert [p["name"] for p in game["players"]] == ["Cas", "Ann", "Ben"]
    assert game["settings"]["jokers"] == 4
    assert game["settings"]["turn_seconds"] == 60
    assert game["settings"]["rack_joker_penalty"] == 30  # the edition's own value stays
    assert game["state"] == "setup" and game["round"] is None


def test_a_bad_setting_is_refused_with_its_name(client, app):
    response = client.post("/api/games", json={"players": ["A", "B"], "settings":
                                               {"copies": 0}},
                           headers={"X-Token": app.state.table_token})
    assert response.status_code == 422
    assert "copies" in response.json()["detail"]


def test_turns_are_judged_from_table_photos_and_the_table_is_restored_after_a_foul(client, app):
    game = new_game(client, app)
    client.post(f"/api/games/{game['id']}/rounds", headers=h(game), json={"starter": "Ann"})

    reading = play_photo(client, game, FIRST_MELD)
    assert reading["table_valid"] and len(reading["tiles"]) == 7
    first = end_turn(client, game)
    assert first["player"] == "Ann" and first["legal"] and first["first_meld_ok"]
    assert first["meld_total"] == 41
    assert sorted(first["played"]) == sorted("R2 R3 R4 R5 B9 K9 O9".split())

    play_photo(client, game, SHORT_MELD)
    foul = end_turn(client, game)
    assert foul["player"] == "Ben" and not foul["legal"]
    # B1-B4 (10 points; B1 lies at the photo's edge, where a detector may miss it).
    assert any(re.search(r"initial meld worth (9|10) points", p) for p in foul["problems"])
    assert foul["draws"] == 3
    back = sorted(t["code"] for t in foul["penalty"]["tiles_back"])
    assert back == sorted(foul["played"]) and {"B2", "B3", "B4"} <= set(back) <= \
        {"B1", "B2", "B3", "B4"}
    assert "Ben" in foul["message"] and "draw 3" in foul["message"]

    # Ben's tiles went back: Ann's next turn is judged against the table of her first meld.
    play_photo(client, game, MORE)
    third = end_turn(client, game)
    assert third["player"] == "Ann" and third["legal"]
    assert sorted(third["played"]) == ["O10", "O7", "O8", "O9"]

    view = client.get(f"/api/games/{game['id']}", headers=h(game)).json()
    assert [p["melded"] for p in view["players"]] == [True, False]
    assert view["round"]["turn"]["player"] == "Ben"
    assert view["round"]["pool"] == 106 - 28 - 3
    history = client.get(f"/api/games/{game['id']}/history", headers=h(game)).json()["turns"]
    assert [t["turn"] for t in history] == [1, 2, 3]
    assert history[1]["before_photo_id"] == history[0]["after_photo_id"]


def test_a_turn_without_new_tiles_is_a_pass_and_draws_one(client, app):
    game = game_in_round(client, app)
    verdict = end_turn(client, game)
    assert verdict["passed"] and verdict["draws"] == 1 and verdict["penalty"] is None


def test_the_timer_pauses_resumes_and_extends_the_same_for_every_phone(client, app, clock):
    game = new_game(client, app, timer={"seconds": 120, "extensions": 1,
                                        "extension_seconds": 30})
    gid = game["id"]
    client.post(f"/api/games/{gid}/rounds", headers=h(game))
    clock.advance(50)
    turn = client.get(f"/api/games/{gid}", headers=h(game)).json()["round"]["turn"]
    assert turn["remaining_s"] == pytest.approx(70)
    assert turn["deadline"] == pytest.approx(clock.now + 70)

    paused = client.post(f"/api/games/{gid}/turn/pause", headers=h(game),
                         json=turn_body(client, game)).json()
    clock.advance(100)
    watcher = client.get(f"/api/games/{gid}", headers={"X-Token": game["watch_token"]}).json()
    assert watcher["round"]["turn"]["paused"] and watcher["round"]["turn"]["deadline"] is None
    assert watcher["round"]["turn"]["remaining_s"] == pytest.approx(70)
    assert paused["round"]["turn"]["remaining_s"] == pytest.approx(70)
    assert client.post(f"/api/games/{gid}/turn/pause", headers=h(game),
                         json=turn_body(client, game)).status_code == 409

    client.post(f"/api/games/{gid}/turn/resume", headers=h(game),
                         json=turn_body(client, game))
    clock.advance(10)
    extended = client.post(f"/api/games/{gid}/turn/extend", headers=h(game),
                         json=turn_body(client, game)).json()
    assert extended["round"]["turn"]["remaining_s"] == pytest.approx(90)
    again = client.post(f"/api/games/{gid}/turn/extend", headers=h(game),
                         json=turn_body(client, game))
    assert again.status_code == 409 and "extensions" in again.json()["detail"]


def test_when_time_runs_out_the_server_spells_out_the_penalty(client, app, clock):
    game = game_in_round(client, app, timer={"seconds": 60})
    gid = game["id"]
    play_photo(client, game, FIRST_MELD)
    end_turn(client, game)
    play_photo(client, game, BROKEN)  # Ben lays O11 O12: not a set
    clock.advance(61)
    view = client.get(f"/api/games/{gid}", headers=h(game)).json()
    verdict = view["last_verdict"]
    assert verdict["player"] == "Ben" and verdict["timed_out"]
    assert sorted(t["code"] for t in verdict["penalty"]["tiles_back"]) == ["O11", "O12"]
    assert all(len(t["corners"]) == 4 for t in verdict["penalty"]["tiles_back"])
    assert verdict["penalty"]["draw"] == 3 and verdict["time_used_s"] == pytest.approx(60)
    assert "Time is up" in verdict["message"]
    # The valid sets stay (original edition): the next turn starts from them.
    assert view["round"]["turn"]["player"] == "Ann"
    assert view["table"]["table_valid"] and len(view["table"]["tiles"]) == 7


def test_the_server_judges_a_timeout_by_itself_without_any_request(client, app, clock):
    game = game_in_round(client, app, timer={"seconds": 30})
    clock.advance(31)
    storage = app.state.storage
    deadline = time.monotonic() + 5
    while not storage.turns(game["id"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    (verdict,) = storage.turns(game["id"])
    assert verdict["timed_out"] and verdict["passed"] and verdict["draws"] == 1


def test_a_round_end_scores_the_racks_and_fills_the_sheet(client, app):
    game = game_in_round(client, app, ("Ann", "Ben", "Cas"))
    gid = game["id"]
    response = client.post(f"/api/games/{gid}/round/end", headers=h(game),
                           json={"winner": "Ann", "racks": {"Ben": "R5 J K13", "Cas": "B2"}})
    assert response.status_code == 200, response.text
    sheet = response.json()["sheet"]
    assert sheet["totals"] == {"Ann": 45, "Ben": -43, "Cas": -2} and sheet["leader"] == "Ann"
    assert response.json()["state"] == "round-over"
    csv = client.get(f"/api/games/{gid}/sheet.csv", headers=h(game)).text
    assert csv.splitlines() == ["player,round 1,total", "Ann,45,45", "Ben,-43,-43",
                                "Cas,-2,-2"]
    # The next round: the deal moves on to Ben.
    second = client.post(f"/api/games/{gid}/rounds", headers=h(game)).json()
    assert second["round"]["number"] == 2 and second["round"]["starter"] == "Ben"


def test_pool_empty_scoring_needs_no_winner(client, app):
    game = game_in_round(client, app)
    response = client.post(f"/api/games/{game['id']}/round/end", headers=h(game),
                           json={"racks": {"Ann": "R3", "Ben": "K10"}, "pool_empty": True})
    assert response.json()["sheet"]["totals"] == {"Ann": 7, "Ben": -7}


def test_a_round_end_without_winner_or_empty_pool_is_refused(client, app):
    game = game_in_round(client, app)
    response = client.post(f"/api/games/{game['id']}/round/end", headers=h(game),
                           json={"racks": {"Ann": "R3", "Ben": "K10"}})
    assert response.status_code == 422 and "winner" in response.json()["detail"]


def test_the_start_draw_photo_names_who_starts_the_round(client, app):
    game = new_game(client, app)
    photo = table_photo(({"O7"}, RUN_O7_O10[1]), ({"B4"}, RUN_B1_B4[1]))
    draw = upload(client, game, "start-draw", photo).json()
    assert draw["tiles"] == ["O7", "B4"] and draw["starter"] == "Ann"
    started = client.post(f"/api/games/{game['id']}/rounds", headers=h(game)).json()
    assert started["round"]["starter"] == "Ann"


def test_a_rack_is_scored_from_a_photo_or_from_typed_codes(client, app):
    game = new_game(client, app)
    from_photo = upload(client, game, "racks", sample_bytes("rack_marble.jpg"),
                        data={"player": "Ben"}).json()
    assert len(from_photo["tiles"]) == 14 and from_photo["photo_id"]
    # the whole rack is in the photo: nothing at its edge, and the reading's doubts are said
    assert from_photo["edge_tiles"] == [] and isinstance(from_photo["warnings"], list)
    from referee import parse_tiles, rack_penalty

    assert from_photo["total"] == rack_penalty(parse_tiles(from_photo["tiles"]))
    typed = client.post(f"/api/games/{game['id']}/racks", headers=h(game),
                        json={"player": "Ben", "codes": "R5 J K13"}).json()
    assert typed["total"] == 43
    bad = client.post(f"/api/games/{game['id']}/racks", headers=h(game),
                      json={"player": "Ben", "codes": "R5 X9"})
    assert bad.status_code == 422 and "X9" in bad.json()["detail"]


def test_a_correction_rejudges_the_table_and_holds_for_that_place(client, app):
    game = game_in_round(client, app)
    reading = play_photo(client, game, FIRST_MELD)
    r5 = next(t["id"] for t in reading["tiles"] if t["color"] == "red" and t["number"] == 5)
    corrected = client.post(f"/api/games/{game['id']}/corrections", headers=h(game),
                            json={"tile_id": r5, "code": "R7"}).json()
    assert corrected["tiles"][r5]["number"] == 7 and not corrected["table_valid"]
    assert corrected["photo_id"] == reading["photo_id"]
    # The same table photographed again: the tile at that place still reads R7.
    again = play_photo(client, game, FIRST_MELD)
    assert [t["number"] for t in again["tiles"] if t["color"] == "red"].count(7) == 1
    assert not again["table_valid"]


def test_a_corrected_table_keeps_its_photo_in_the_game_and_in_the_turn_it_decides(client, app):
    game = game_in_round(client, app)
    reading = play_photo(client, game, FIRST_MELD)
    r5 = next(t["id"] for t in reading["tiles"] if t["color"] == "red" and t["number"] == 5)
    client.post(f"/api/games/{game['id']}/corrections", headers=h(game),
                json={"tile_id": r5, "code": "R7"})
    view = client.get(f"/api/games/{game['id']}", headers=h(game)).json()
    assert view["table"]["photo_id"] == reading["photo_id"]
    verdict = end_turn(client, game)
    assert verdict["after_photo_id"] == reading["photo_id"]
    history = client.get(f"/api/games/{game['id']}/history", headers=h(game)).json()["turns"]
    assert history[0]["after_photo_id"] == reading["photo_id"]
    # The photo the page draws the tiles going back on is there.
    assert client.get(f"/api/games/{game['id']}/photos/{reading['photo_id']}",
                      headers=h(game)).content == FIRST_MELD


def _turn_between(app, game_id, before_sets, after_sets):
    """The running turn between two tables, synthetic tiles without photos: `before` as
    the game accepted it (as after a judged or restored turn), `after` the latest reading."""
    from tests.table_helpers import detections_from, row

    service = app.state.service

    def table(sets):
        codes, quads = [], []
        for set_codes, (x, y) in sets:
            codes += set_codes
            quads += row(set_codes, x=x, y=y)
        return detections_from(codes, quads)

    before = service.store_reading(game_id, table(before_sets), 1000, 800, None, "table")
    state = service.storage.game(game_id).state
    state["round"]["table_reading"] = before["reading_id"]
    state["round"]["turn"]["before_reading"] = before["reading_id"]
    service.storage.save_state(game_id, state)
    service.store_reading(game_id, table(after_sets), 1000, 800, None, "table")


def test_sets_invalid_before_the_turn_are_the_referees_words_not_the_players_fault(client, app):
    game = new_game(client, app)
    client.post(f"/api/games/{game['id']}/rounds", headers=h(game), json={"starter": "Ann"})
    run, group = (["R3", "R4", "R5"], (100, 100)), (["K9", "R9", "K9"], (100, 300))
    _turn_between(app, game["id"], [run, group], [run, group, (["K11", "K12", "K13"], (100, 500))])
    verdict = end_turn(client, game)
    assert verdict["legal"], verdict["problems"]
    assert len(verdict["preexisting_invalid"]) == 1
    assert "K9 R9 K9" in verdict["preexisting_invalid"][0]
    assert "already invalid before this turn" in verdict["preexisting_invalid"][0]
    # Nor is it among the invalid sets the page marks as this player's problems: the
    # page names it apart.
    assert verdict["invalid_sets"] == []
    html = verdict_html(verdict)
    if html is not None:
        assert "invalid-sets" not in html and "Invalid before the turn" in html
        assert "black 9, red 9, black 9" in html.split("Invalid before the turn")[1]
    # Ben adds a tile to that group: it is his set now, a problem, no longer "preexisting".
    _turn_between(app, game["id"], [run, group], [run, (["K9", "R9", "K9", "B9"], (100, 300))])
    verdict = end_turn(client, game)
    assert verdict["player"] == "Ben" and not verdict["legal"]
    assert verdict["preexisting_invalid"] == []
    assert any("K9 R9 K9 B9" in p for p in verdict["problems"])
    assert [sorted(s["tiles"]) for s in verdict["invalid_sets"]] == [["B9", "K9", "K9", "R9"]]
    html = verdict_html(verdict)
    if html is not None:
        assert "invalid-sets" in html and "Invalid before the turn" not in html


def verdict_html(verdict: dict) -> str | None:
    """The verdict as the page words it (`verdictHtml` of app/static/js/format.js, run by
    Node); None where Node is not installed."""
    node = shutil.which("node")
    if node is None:
        return None
    english = (STATIC / "i18n" / "en.json").read_text()
    script = ("import {verdictHtml} from '" + (STATIC / "js" / "format.js").as_uri() + "';"
              "import {useCatalogue} from '" + (STATIC / "js" / "i18n.js").as_uri() + "';"
              f"useCatalogue('en', {english});"
              "process.stdout.write(verdictHtml(JSON.parse(process.argv[1])));")
    done = subprocess.run([node, "--input-type=module", "-e", script, json.dumps(verdict)],
                          capture_output=True, text=True, timeout=30, check=True)
    return done.stdout


def test_a_stored_photo_comes_back_as_sent(client, app):
    game = new_game(client, app)
    reading = play_photo(client, game, FIRST_MELD)
    response = client.get(f"/api/games/{game['id']}/photos/{reading['photo_id']}",
                          headers=h(game))
    assert response.content == FIRST_MELD and response.headers["content-type"] == "image/jpeg"


def test_live_frames_become_the_table_reading_only_once_they_hold(client, app):
    game = game_in_round(client, app)
    gid = game["id"]
    readings = []
    with client.websocket_connect(f"/api/games/{gid}/live?token={game['token']}") as ws:
        assert ws.receive_json()["type"] == "game"
        for _ in range(4):
            ws.send_bytes(FIRST_MELD)
            while (message := ws.receive_json())["type"] != "reading":
                pass
            readings.append(message)
    assert [m["frame"]["seq"] for m in readings] == [1, 2, 3, 4]
    assert readings[0]["reading"] is None and not readings[0]["changed"]
    assert sum(m["changed"] for m in readings) == 1 and readings[-1]["stable"]
    assert len(readings[-1]["reading"]["tiles"]) == 7
    verdict = end_turn(client, game)
    assert verdict["legal"] and verdict["after_photo_id"] == readings[-1]["reading"]["photo_id"]


def test_posted_frames_are_accepted_and_read(client, app):
    game = new_game(client, app)
    for _ in range(3):
        response = client.post(f"/api/games/{game['id']}/frames", content=FIRST_MELD,
                               headers={**h(game), "content-type": "image/jpeg"})
        assert response.status_code == 202 and response.json()["accepted"]
        time.sleep(0.3)  # one frame at a time, so none is dropped
    stats = _wait_stats(client, game, lambda s: s["read"] + s["dropped"] >= 3)
    assert stats["read"] == 3
    assert len(client.get(f"/api/games/{game['id']}/reading", headers=h(game))
               .json()["tiles"]) == 7


class SlowReader:
    """The real reader, slowed down like a busy machine."""

    def __init__(self, delay: float):
        self.delay = delay
        self.inner = reader()

    def read(self, image):
        time.sleep(self.delay)
        return self.inner.read(image)


def _wait_stats(client, game, done, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        stats = client.get(f"/api/games/{game['id']}/frames/stats", headers=h(game)).json()
        if done(stats) or time.monotonic() > deadline:
            return stats
        time.sleep(0.05)


def test_a_busy_table_drops_old_frames_and_reads_the_latest(tmp_path):
    app = make_app(tmp_path, reader=SlowReader(0.3))
    with TestClient(app) as client:
        game = new_game(client, app)
        # Frames that all differ (a still table's frames are not read by the models).
        rng = np.random.default_rng(12)
        frames = [cv2.imencode(".jpg", rng.integers(0, 255, (150, 200, 3), np.uint8))[1]
                  .tobytes() for _ in range(12)]
        for frame in frames:
            client.post(f"/api/games/{game['id']}/frames", content=frame,
                        headers={**h(game), "content-type": "image/jpeg"})
        stats = _wait_stats(client, game, lambda s: s["read"] + s["dropped"] >= 12)
    assert stats["received"] == 12
    assert stats["dropped"] >= 6  # a frame takes 0.3 s: most waited behind a newer one
    assert stats["read"] + stats["dropped"] == 12  # the last frame is always read


def test_an_acknowledged_turn_is_already_committed_to_the_database(client, app, tmp_path):
    game = game_in_round(client, app)
    play_photo(client, game, FIRST_MELD)
    verdict = end_turn(client, game)
    # Another connection (another process could do the same) sees the turn at once.
    other = create_engine(app.state.storage.target.url)
    with other.connect() as db:
        rows = db.exec_driver_sql("SELECT number, player FROM turns WHERE game_id="
                                  f"'{game['id']}'").fetchall()
        if app.state.storage.target.is_sqlite:
            assert db.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    other.dispose()
    assert [tuple(r) for r in rows] == [(verdict["turn"], "Ann")]


def test_the_sample_photos_are_served_by_name_only(client):
    names = client.get("/api/samples").json()
    assert "table_runs_groups.jpg" in names
    assert client.get("/api/samples/table_runs_groups.jpg").content == sample_bytes(
        "table_runs_groups.jpg")
    for bad in ("..%2Fpyproject.toml", "nope.jpg", "table_runs_groups.json"):
        assert client.get(f"/api/samples/{bad}").status_code == 404


def test_travel_tin_timeout_restores_the_whole_table(client, app, clock):
    game = game_in_round(client, app, edition="travel-tin", timer={"seconds": 60})
    gid = game["id"]
    play_photo(client, game, FIRST_MELD)
    end_turn(client, game)
    play_photo(client, game, BROKEN)
    clock.advance(61)
    view = client.get(f"/api/games/{gid}", headers=h(game)).json()
    verdict = view["last_verdict"]
    assert verdict["timed_out"] and verdict["penalty"]["draw"] == 3
    assert sorted(t["code"] for t in verdict["penalty"]["tiles_back"]) == ["O11", "O12"]
    # The table as it was before Ben's turn: the reading of the first meld.
    assert view["table"]["photo_id"] == verdict["before_photo_id"]


def test_a_valid_table_when_time_runs_out_stands_and_may_cost_a_tile(client, app, clock):
    game = new_game(client, app, settings={"timeout_draw_when_valid": 1},
                    timer={"seconds": 60})
    client.post(f"/api/games/{game['id']}/rounds", headers=h(game))
    play_photo(client, game, FIRST_MELD)
    clock.advance(75)
    verdict = client.get(f"/api/games/{game['id']}", headers=h(game)).json()["last_verdict"]
    assert verdict["timed_out"] and verdict["legal"] and verdict["first_meld_ok"]
    assert verdict["draws"] == 1 and verdict["penalty"] is None
    assert verdict["time_used_s"] == pytest.approx(60)


def test_trackers_of_finished_and_idle_games_are_let_go_and_made_again(tmp_path):
    app = make_app(tmp_path, tick_s=0.05, frames_idle_s=3600)
    hub_games = lambda: set(app.state.hub.games)  # noqa: E731
    with TestClient(app) as client:
        done, idle = new_game(client, app), new_game(client, app)
        for game in (done, idle):
            client.post(f"/api/games/{game['id']}/frames", content=FIRST_MELD,
                        headers={**h(game), "content-type": "image/jpeg"})
            _wait_stats(client, game, lambda s: s["read"] >= 1)
        assert hub_games() == {done["id"], idle["id"]}
        # A finished game's tracker goes with the next tick.
        assert client.post(f"/api/games/{done['id']}/finish", headers=h(done)).status_code == 200
        deadline = time.monotonic() + 5
        while done["id"] in hub_games() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hub_games() == {idle["id"]}
        # Its frame counts outlive its tracker.
        stats = lambda game: client.get(f"/api/games/{game['id']}/frames/stats",  # noqa: E731
                                        headers=h(game)).json()
        assert (stats(done)["received"], stats(done)["read"]) == (1, 1)
        # An idle one goes once it has had no frame and no socket for the idle time.
        hub = app.state.hub
        assert hub.sweep(now=time.monotonic() + 60) == []
        assert hub.sweep(now=time.monotonic() + 3601) == [idle["id"]] and hub_games() == set()
        assert (stats(idle)["received"], stats(idle)["read"]) == (1, 1)
        # Its next frame makes a new tracker, which reads as before; the counts go on.
        client.post(f"/api/games/{idle['id']}/frames", content=FIRST_MELD,
                    headers={**h(idle), "content-type": "image/jpeg"})
        counted = _wait_stats(client, idle, lambda s: s["read"] >= 2)
        assert (counted["received"], counted["read"]) == (2, 2)
        assert hub_games() == {idle["id"]}
