"""Overrides that count: a void turn and a set ruled valid change the standings, counted
again from the racks at the round's end and the audit log; the game's own record stays.
Bad input (an unknown turn, a set not in the turn, the same ruling twice) changes nothing."""

from __future__ import annotations

from tests.server_helpers import PAIR_O11_O12, RUN_O7_O10, table_photo, turn_body, upload
from tests.test_server_tournaments import console, h, log, new_tournament, seat, standings, url

PENALISED_RACK = "O7 O8 O9 O10 O11 O12 B1 B3 K4"  # the penalty's 6 back (57), 3 drawn (8)
OTHERS = ("R5 K13", "B2")  # 18 and 2


def penalised_round(client, app, *, end=True):
    """Table 1 of round 1: its first player lays O7-O10 and the pair O11 O12 (invalid), so
    the penalty sends all 6 back and draws 3; the second player then goes out."""
    tournament = new_tournament(client, app)
    seat(client, tournament, 1)
    table = console(client, tournament)["tables"][0]
    game = {"id": table["game_id"], "token": table["token"]}
    client.post(f"/api/games/{game['id']}/rounds", headers=h(game["token"]))
    upload(client, game, "photo", table_photo(RUN_O7_O10, PAIR_O11_O12))
    verdict = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game["token"]),
                          json=turn_body(client, game)).json()
    assert not verdict["legal"] and verdict["draws"] == 3, verdict["message"]
    first, winner, *rest = table["players"]
    if end:
        racks = {first: PENALISED_RACK, **dict(zip(rest, OTHERS, strict=True))}
        ended = client.post(f"/api/games/{game['id']}/round/end", headers=h(game["token"]),
                            json={"winner": winner, "racks": racks})
        assert ended.status_code == 200, ended.text
    return tournament, table, verdict


def override(client, tournament, kind, reason="ruling", **body):
    return client.post(url(tournament, "/overrides"), headers=h(tournament["director_token"]),
                       json={"kind": kind, "body": {"round": 1, "table": 1, **body},
                             "reason": reason})


def points(client, tournament) -> dict:
    return {s["player"]: s["tournament_points"]
            for s in standings(client, tournament)["standings"]}


def sheet(client, table) -> dict:
    return client.get(f"/api/games/{table['game_id']}",
                      headers=h(table["token"])).json()["sheet"]


def test_a_void_turn_counts_the_round_again_from_its_racks(client, app):
    tournament, table, verdict = penalised_round(client, app)
    first, winner, third, fourth = table["players"]
    before = points(client, tournament)
    assert (before[first], before[winner]) == (-65, 65 + 18 + 2)
    kept = sheet(client, table)
    response = override(client, tournament, "void-turn", "the clock was started early",
                        turn=verdict["turn"], drawn=["B1", "B3", "K4"])
    assert response.status_code == 201, response.text
    assert response.json()["body"]["round_over"] is True
    assert "counted again" in response.json()["effect"]
    after = points(client, tournament)
    # Nothing happened in that turn: the 3 drawn tiles (8 points) come off the rack.
    assert (after[first], after[winner], after[third], after[fourth]) == (
        -57, 57 + 18 + 2, -18, -2)
    assert sheet(client, table) == kept  # the game's record is not edited
    screen = client.get(url(tournament, "/standings.csv"), headers=h(tournament["watch_token"]))
    assert f"{first},-57," in screen.text


def test_a_set_ruled_valid_undoes_the_penalty_given_for_it(client, app):
    tournament, table, verdict = penalised_round(client, app)
    first, winner = table["players"][:2]
    wrong = override(client, tournament, "set-valid", turn=verdict["turn"],
                     set=["R1", "R2", "R3"], drawn=["B1", "B3", "K4"])
    assert wrong.status_code == 422
    assert "has no invalid set R1 R2 R3 (its invalid sets: O11 O12)" in wrong.json()["detail"]
    ruled = override(client, tournament, "set-valid", "O11 O12 J stood, the joker hidden",
                     turn=verdict["turn"], set=["O12", "O11"], drawn=["B1", "B3", "K4"])
    assert ruled.status_code == 201, ruled.text
    after = points(client, tournament)
    # The turn stands: its 6 tiles (57) stay on the table, its 3 drawn (8) go back.
    assert (after[first], after[winner]) == (0, 18 + 2)
    again = override(client, tournament, "set-valid", turn=verdict["turn"],
                     set=["O11", "O12"], drawn=["B1", "B3", "K4"])
    assert again.status_code == 409 and "already ruled valid" in again.json()["detail"]
    void = override(client, tournament, "void-turn", turn=verdict["turn"], drawn=[])
    assert void.status_code == 409 and "undo its penalty twice" in void.json()["detail"]
    assert points(client, tournament) == after


def test_bad_rulings_are_refused_with_words_and_change_nothing(client, app):
    tournament, table, verdict = penalised_round(client, app)
    entries, before = log(client, tournament), points(client, tournament)
    turn = verdict["turn"]
    answers = {
        "unknown turn": override(client, tournament, "void-turn", turn=99, drawn=[]),
        "no drawn": override(client, tournament, "void-turn", turn=turn),
        "not on the rack": override(client, tournament, "void-turn", turn=turn,
                                    drawn=["R9", "B1"]),
        "too many": override(client, tournament, "void-turn", turn=turn,
                             drawn=["B1", "B3", "K4", "O7"]),
        "not a code": override(client, tournament, "void-turn", turn=turn, drawn=["Q99"]),
        "no set": override(client, tournament, "set-valid", turn=turn),
        "no reason": override(client, tournament, "void-turn", "  ", turn=turn, drawn=[]),
        "round_over is the server's": override(client, tournament, "void-turn", turn=turn,
                                               drawn=[], round_over=False),
    }
    codes = {name: (r.status_code, r.json()["detail"]) for name, r in answers.items()}
    assert codes["unknown turn"][0] == 404 and "no judged turn 99" in codes["unknown turn"][1]
    assert codes["no drawn"][0] == 422 and "name those still on the rack" in codes["no drawn"][1]
    assert codes["not on the rack"] == (422, f"R9 is not on {table['players'][0]}'s counted rack")
    assert codes["too many"][0] == 422 and "name at most 3, not 4" in codes["too many"][1]
    assert codes["not a code"][0] == 422 and codes["not a code"][1].startswith("drawn:")
    assert codes["no set"][0] == 422 and codes["no set"][1].startswith("set:")
    assert codes["no reason"][0] == 422
    assert codes["round_over is the server's"] == (422, "unknown key 'round_over'")
    assert log(client, tournament) == entries and points(client, tournament) == before

    first = override(client, tournament, "void-turn", turn=turn, drawn=["K4"])
    assert first.status_code == 201, first.text
    voided = points(client, tournament)
    twice = override(client, tournament, "void-turn", turn=turn, drawn=["K4"])
    assert twice.status_code == 409
    assert twice.json()["detail"] == (f"round 1 table 1 turn {turn} is already void (log entry "
                                      f"{first.json()['id']}); nothing changed")
    ruled = override(client, tournament, "set-valid", turn=turn, set=["O11", "O12"], drawn=[])
    assert ruled.status_code == 409 and "already void" in ruled.json()["detail"]
    assert points(client, tournament) == voided and len(log(client, tournament)) == \
        len(entries) + 1


def test_a_ruling_while_the_round_plays_leaves_the_table_and_counts_at_the_end(client, app):
    tournament, table, verdict = penalised_round(client, app, end=False)
    first, winner, *rest = table["players"]
    ruled = override(client, tournament, "void-turn", turn=verdict["turn"])
    assert ruled.status_code == 201, ruled.text
    assert ruled.json()["body"]["round_over"] is False
    assert ruled.json()["effect"] == f"{first} puts the 3 tile(s) drawn back in the pool now"
    named = override(client, tournament, "void-turn", turn=verdict["turn"], drawn=["B1"])
    assert named.status_code == 409  # void already: the same ruling twice changes nothing
    # The drawn tiles went back to the pool at the table: the count has them off already.
    racks = {first: "O7 O8 O9 O10 O11 O12", **dict(zip(rest, OTHERS, strict=True))}
    client.post(f"/api/games/{table['game_id']}/round/end", headers=h(table["token"]),
                json={"winner": winner, "racks": racks})
    assert points(client, tournament)[first] == -57


def test_a_set_ruled_valid_while_the_round_plays_is_counted_at_the_round_end(client, app):
    tournament, table, verdict = penalised_round(client, app, end=False)
    first, winner, *rest = table["players"]
    early = override(client, tournament, "set-valid", turn=verdict["turn"],
                     set=["O11", "O12"], drawn=["B1"])
    assert early.status_code == 422 and early.json()["detail"].startswith("drawn: only")
    ruled = override(client, tournament, "set-valid", turn=verdict["turn"], set=["O11", "O12"])
    assert ruled.status_code == 201, ruled.text
    # The table as photographed stays the table: the 6 tiles stay on the rack until the
    # count, which takes them off; the 3 drawn go back to the pool now.
    back = " ".join(t["code"] for t in verdict["penalty"]["tiles_back"])  # the penalty's order
    assert sorted(back.split()) == ["O10", "O11", "O12", "O7", "O8", "O9"]
    assert ruled.json()["effect"] == (
        f"{first} puts the 3 tile(s) drawn back in the pool now; the tiles stay where they "
        f"are, and the round's count takes {back} as off {first}'s rack")
    racks = {first: "O7 O8 O9 O10 O11 O12 R1", **dict(zip(rest, OTHERS, strict=True))}
    client.post(f"/api/games/{table['game_id']}/round/end", headers=h(table["token"]),
                json={"winner": winner, "racks": racks})
    after = points(client, tournament)
    assert (after[first], after[winner]) == (-1, 1 + 18 + 2)


def test_the_same_score_or_result_twice_changes_nothing_and_says_why(client, app):
    tournament, table, _ = penalised_round(client, app)
    player = table["players"][2]
    changed = override(client, tournament, "score", game=1, player=player, score=-10)
    assert changed.status_code == 201, changed.text
    entries = log(client, tournament)
    twice = override(client, tournament, "score", game=1, player=player, score=-10)
    assert twice.status_code == 409
    assert twice.json()["detail"] == (f"{player} has -10 in round 1 table 1 game 1 already; "
                                      "nothing changed")
    scores = {p: 0 for p in console(client, tournament)["tables"][1]["players"]}
    scores[next(iter(scores))] = 5
    scores[list(scores)[1]] = -5
    body = {"game": 1, "scores": scores}
    assert client.post(url(tournament, "/overrides"), headers=h(tournament["director_token"]),
                       json={"kind": "result", "reason": "camera failed",
                             "body": {"round": 1, "table": 2, **body}}).status_code == 201
    again = client.post(url(tournament, "/overrides"), headers=h(tournament["director_token"]),
                        json={"kind": "result", "reason": "camera failed",
                              "body": {"round": 1, "table": 2, **body}})
    assert again.status_code == 409 and "these scores already" in again.json()["detail"]
    assert len(log(client, tournament)) == len(entries) + 1
