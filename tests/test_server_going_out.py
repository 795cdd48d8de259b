"""Someone went out: the turn stops while the racks are counted (issue #21, 1).

Through FastAPI's TestClient with a fake clock, as tests/test_server_api.py plays a game.
"""

from __future__ import annotations

import time

import pytest

from tests.server_helpers import game_in_round, h, make_app, new_game, turn_body


@pytest.fixture
def app(tmp_path, clock):
    return make_app(tmp_path, clock=clock, tick_s=0.05)


def view(client, game):
    return client.get(f"/api/games/{game['id']}", headers=h(game)).json()


def test_counting_racks_longer_than_the_time_left_gives_no_timeout(client, app, clock):
    game = game_in_round(client, app, timer={"seconds": 30})
    gid = game["id"]
    clock.advance(20)
    out = client.post(f"/api/games/{gid}/round/out", headers=h(game), json={"turn_id": 1})
    assert out.status_code == 200, out.text
    turn = out.json()["round"]["turn"]
    assert out.json()["round"]["counting"] and turn["paused"]
    assert turn["remaining_s"] == pytest.approx(10)

    clock.advance(300)  # counting the racks takes five minutes
    time.sleep(0.3)  # the server's tick runs meanwhile
    assert app.state.storage.turns(gid) == []
    seen = view(client, game)
    assert seen["state"] == "playing" and seen["last_verdict"] is None
    assert seen["round"]["turn"]["player"] == "Ann"  # no next turn started

    # Nothing can restart or end that turn while counting: 409 with words.
    for path in ("turn/resume", "turn/extend", "turn/end", "turn/pause"):
        refused = client.post(f"/api/games/{gid}/{path}", headers=h(game),
                              json={"turn_id": seen["round"]["turn"]["id"]})
        assert refused.status_code == 409 and "counted" in refused.json()["detail"], path
    again = client.post(f"/api/games/{gid}/round/out", headers=h(game))
    assert again.status_code == 409 and "already" in again.json()["detail"]

    ended = client.post(f"/api/games/{gid}/round/end", headers=h(game),
                        json={"winner": "Ann", "racks": {"Ben": "R5 K7"}})
    assert ended.status_code == 200, ended.text
    assert app.state.storage.turns(gid) == []  # still no penalty, ever
    assert ended.json()["state"] == "round-over"


def test_back_to_the_table_runs_the_turn_on_from_where_it_stopped(client, app, clock):
    game = game_in_round(client, app, timer={"seconds": 30})
    gid = game["id"]
    clock.advance(20)
    client.post(f"/api/games/{gid}/round/out", headers=h(game))
    clock.advance(100)
    back = client.post(f"/api/games/{gid}/round/out", headers=h(game), json={"out": False})
    assert back.status_code == 200, back.text
    turn = back.json()["round"]["turn"]
    assert not back.json()["round"]["counting"] and not turn["paused"]
    assert turn["remaining_s"] == pytest.approx(10)
    twice = client.post(f"/api/games/{gid}/round/out", headers=h(game), json={"out": False})
    assert twice.status_code == 409 and "not being counted" in twice.json()["detail"]

    # A turn paused by the players stays paused after going back.
    client.post(f"/api/games/{gid}/turn/pause", headers=h(game), json=turn_body(client, game))
    client.post(f"/api/games/{gid}/round/out", headers=h(game))
    back = client.post(f"/api/games/{gid}/round/out", headers=h(game), json={"out": False})
    assert back.json()["round"]["turn"]["paused"]


def test_time_that_ran_out_before_anyone_went_out_still_counts(client, app, clock):
    game = game_in_round(client, app, timer={"seconds": 30})
    gid = game["id"]
    clock.advance(31)
    client.post(f"/api/games/{gid}/round/out", headers=h(game))
    (verdict,) = app.state.storage.turns(gid)
    assert verdict["player"] == "Ann" and verdict["timed_out"]


def test_going_out_needs_a_running_round(client, app):
    game = new_game(client, app)
    refused = client.post(f"/api/games/{game['id']}/round/out", headers=h(game))
    assert refused.status_code == 409 and refused.json()["detail"]
    watcher = client.post(f"/api/games/{game['id']}/round/out",
                          headers={"X-Token": game["watch_token"]})
    assert watcher.status_code == 403
