"""A turn ends once: every call that changes a turn names it (`turn_id`), and a call for a
turn that is no longer running is a 409 that changes nothing (issue #20)."""

from __future__ import annotations

import threading

import pytest

from tests.server_helpers import game_in_round, h, make_app, turn_body


@pytest.fixture
def app(tmp_path, clock):
    # A slow tick: the test, not the tick, decides when the server's timeout is judged.
    return make_app(tmp_path, clock=clock, tick_s=3600)


def state(client, game) -> dict:
    return client.get(f"/api/games/{game['id']}", headers=h(game)).json()


def test_the_turn_has_an_id_stable_across_reloads(client, app):
    game = game_in_round(client, app)
    first = state(client, game)["round"]["turn"]
    assert first["id"] == state(client, game)["round"]["turn"]["id"]
    client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                json={"turn_id": first["id"]})
    second = state(client, game)["round"]["turn"]
    assert second["player"] == "Ben" and second["id"] != first["id"]


def test_twenty_taps_on_one_turn_end_it_once(client, app):
    game = game_in_round(client, app)
    body = turn_body(client, game)
    start = threading.Barrier(20)
    answers = []

    def tap():
        start.wait()
        answers.append(client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                                   json=body))

    threads = [threading.Thread(target=tap) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(a.status_code for a in answers)
    assert codes == [200] + [409] * 19
    refused = [a.json()["detail"] for a in answers if a.status_code == 409]
    assert all("Ann's turn has already ended" in d and "Nothing was changed" in d
               for d in refused), refused[0]
    history = client.get(f"/api/games/{game['id']}/history", headers=h(game)).json()["turns"]
    assert [(t["turn"], t["player"]) for t in history] == [(1, "Ann")]
    turn = state(client, game)["round"]["turn"]
    assert turn["player"] == "Ben" and turn["number"] == 2


def test_a_tap_after_the_servers_timeout_leaves_the_next_turn_alone(client, app, clock):
    game = game_in_round(client, app, timer={"seconds": 60})
    body = turn_body(client, game)
    clock.advance(61)
    # The server's own timeout judges Ann's turn (as the tick does) ...
    assert app.state.service.check_all_timeouts() == 1
    ben = state(client, game)["round"]["turn"]
    assert ben["player"] == "Ben"
    # ... and Ann's late tap names her turn: refused, Ben's turn untouched.
    late = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game), json=body)
    assert late.status_code == 409
    assert "Ann's turn has already ended (time ran out)" in late.json()["detail"]
    after = state(client, game)["round"]["turn"]
    assert after == ben
    assert after["remaining_s"] == pytest.approx(60)
    history = client.get(f"/api/games/{game['id']}/history", headers=h(game)).json()["turns"]
    assert [(t["player"], t["timed_out"]) for t in history] == [("Ann", True)]


def test_a_tap_after_the_deadline_before_the_tick_is_refused_too(client, app, clock):
    game = game_in_round(client, app, timer={"seconds": 60})
    body = turn_body(client, game)
    clock.advance(61)
    late = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game), json=body)
    assert late.status_code == 409 and "time ran out" in late.json()["detail"]
    history = client.get(f"/api/games/{game['id']}/history", headers=h(game)).json()["turns"]
    assert [(t["player"], t["timed_out"]) for t in history] == [("Ann", True)]
    assert state(client, game)["round"]["turn"]["player"] == "Ben"


@pytest.mark.parametrize("kind", ["pause", "resume", "extend", "end"])
def test_every_turn_call_needs_the_turn_id(client, app, kind):
    game = game_in_round(client, app, timer={"seconds": 60, "extensions": 2})
    before = state(client, game)["round"]["turn"]
    for body in (None, {}, {"turn_id": ""}):
        answer = client.post(f"/api/games/{game['id']}/turn/{kind}", headers=h(game),
                             json=body)
        assert answer.status_code == 422, answer.text
        assert "turn_id" in answer.json()["detail"]
    assert state(client, game)["round"]["turn"] == before


@pytest.mark.parametrize("kind", ["pause", "extend", "end"])
def test_a_call_for_an_ended_turn_changes_nothing(client, app, kind):
    game = game_in_round(client, app, timer={"seconds": 60, "extensions": 2})
    old = turn_body(client, game)
    assert client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                       json=old).status_code == 200
    before = state(client, game)["round"]["turn"]
    answer = client.post(f"/api/games/{game['id']}/turn/{kind}", headers=h(game), json=old)
    assert answer.status_code == 409
    assert "Ann's turn has already ended" in answer.json()["detail"]
    assert "now it is Ben's turn" in answer.json()["detail"]
    assert state(client, game)["round"]["turn"] == before


def test_a_turn_cut_short_by_the_rounds_end_is_refused_in_the_next_round(client, app):
    game = game_in_round(client, app)
    old = turn_body(client, game)
    client.post(f"/api/games/{game['id']}/round/end", headers=h(game),
                json={"winner": "Ann", "racks": {"Ben": "R5"}})
    client.post(f"/api/games/{game['id']}/rounds", headers=h(game))
    now = state(client, game)["round"]["turn"]
    assert now["id"] != old["turn_id"] and now["number"] == 1
    answer = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game), json=old)
    assert answer.status_code == 409 and "round is over" in answer.json()["detail"]
    assert state(client, game)["round"]["turn"] == now
