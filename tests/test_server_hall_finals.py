"""Finals on the server (semi-finals 1,3,5,7 / 2,4,6,8, a final table to 4 wins) and the
bye of a 5-player field: each finals table is a game like any other, the winner is
declared, and seating too early, twice, or a game of a decided match is refused."""

from __future__ import annotations

from tests.test_server_tournaments import (
    console,
    h,
    log,
    new_tournament,
    play_game,
    seat,
    standings,
    url,
)


def finals(client, tournament, stage):
    return client.post(url(tournament, "/finals"), headers=h(tournament["director_token"]),
                       json={"stage": stage})


def test_the_finals_are_seated_from_the_standings_and_played_to_a_winner(client, app):
    tournament = new_tournament(client, app, fmt="championship", rounds=1, games=1)
    seat(client, tournament, 1)
    tables = console(client, tournament)["tables"]
    early = finals(client, tournament, "semi-final")
    assert early.status_code == 409
    assert early.json()["detail"] == ("round 1 is not over: table 1 has 0 of 1 games; "
                                      "table 2 has 0 of 1 games; table 3 has 0 of 1 games")
    for table in tables:
        play_game(client, table)
    wrong_order = finals(client, tournament, "final")
    assert wrong_order.status_code == 409
    assert wrong_order.json()["detail"] == "the semi-finals come first"
    ranking = [s["player"] for s in standings(client, tournament)["standings"]]
    semis = finals(client, tournament, "semi-final")
    assert semis.status_code == 200, semis.text
    assert semis.json()["seating"]["tables"] == [ranking[0:8:2], ranking[1:8:2]]
    entries = log(client, tournament)
    twice = finals(client, tournament, "semi-final")
    assert twice.status_code == 409 and "seated already" in twice.json()["detail"]
    assert log(client, tournament) == entries
    again = seat(client, tournament, 2)
    assert again.status_code == 409 and "has 1 rounds" in again.json()["detail"]

    semi_tables = console(client, tournament)["tables"]
    assert console(client, tournament)["stage"] == "semi-final"
    assert [t["players"] for t in semi_tables] == semis.json()["seating"]["tables"]
    game = client.get(f"/api/games/{semi_tables[0]['game_id']}",
                      headers=h(semi_tables[0]["token"])).json()
    assert game["hall"] == {"tournament": tournament["tournament"], "round": 2, "table": 1}
    for _ in range(2):
        play_game(client, semi_tables[0])
    not_over = finals(client, tournament, "final")
    assert not_over.status_code == 409
    assert not_over.json()["detail"] == ("the semi-finals are not over: table 1 has 2 of 3 "
                                         "games; table 2 has 0 of 3 games")
    play_game(client, semi_tables[0])
    for _ in range(3):
        play_game(client, semi_tables[1])
    fourth = client.post(f"/api/games/{semi_tables[1]['game_id']}/rounds",
                         headers=h(semi_tables[1]["token"]))
    assert fourth.status_code == 409 and "played its 3 games" in fourth.json()["detail"]
    # The qualifying standings stay those of round 1.
    assert [s["player"] for s in standings(client, tournament)["standings"]] == ranking

    # Each semi-final: its first player went out 3 times (12 points), B2 (2 a game: 6),
    # O10 O11 (1 a game: 3), R5 J K13 (0): the best two of each go to the final.
    view = standings(client, tournament)["finals"]
    semi = view["seated"][0]["tables"]
    first, second = (t["players"] for t in semi)
    assert [t["ranking"] for t in semi] == [[p[0], p[2], p[3], p[1]] for p in (first, second)]
    assert [t["points"][t["players"][0]] for t in semi] == [12, 12]
    final = finals(client, tournament, "final")
    assert final.status_code == 200, final.text
    assert final.json()["seating"]["tables"] == [[first[0], second[0], first[2], second[2]]]
    table = console(client, tournament)["tables"][0]
    for _ in range(4):
        play_game(client, table)
    view = standings(client, tournament)["finals"]
    assert view["winner"] == first[0]
    assert view["seated"][1]["tables"][0]["wins"] == {first[0]: 4, second[0]: 0,
                                                      first[2]: 0, second[2]: 0}
    decided = client.post(f"/api/games/{table['game_id']}/rounds", headers=h(table["token"]))
    assert decided.status_code == 409
    assert decided.json()["detail"] == (f"the match at the final is decided: {first[0]} has 4 "
                                        "wins; no further game counts")
    late = client.post(url(tournament, "/overrides"), headers=h(tournament["director_token"]),
                       json={"kind": "result", "reason": "camera failed", "body": {
                           "round": 3, "table": 1, "game": 5,
                           "scores": dict.fromkeys(table["players"], 0)}})
    assert late.status_code == 409 and "is decided" in late.json()["detail"]
    assert standings(client, tournament)["finals"]["winner"] == first[0]
    assert finals(client, tournament, "final").status_code == 409


def test_a_format_without_finals_or_too_few_players_is_refused(client, app):
    club = new_tournament(client, app, rounds=1, games=1)
    answer = finals(client, club, "final")
    assert answer.status_code == 409 and answer.json()["detail"] == "the club format has no finals"
    bad = finals(client, club, "quarter-final")
    assert bad.status_code == 422
    champ = client.post("/api/tournaments", headers=h(app.state.table_token), json={
        "name": "Small", "format": "championship",
        "switches": {"rounds": 1, "games_per_round": 1}}).json()
    client.post(url(champ, "/players"), headers=h(champ["director_token"]),
                json={"players": ["A", "B", "C", "D", "E", "F", "G"]})
    seat(client, champ, 1)
    for table in console(client, champ)["tables"]:
        play_game(client, table)
    few = finals(client, champ, "semi-final")
    assert few.status_code == 409
    assert few.json()["detail"] == "finals of 8 need 8 ranked players, not 7"


def test_five_players_seat_one_table_with_a_rotating_bye(client, app):
    made = client.post("/api/tournaments", headers=h(app.state.table_token), json={
        "name": "Five", "format": "championship",
        "switches": {"rounds": 3, "games_per_round": 1, "finals": {"size": 0}}})
    assert made.status_code == 201, made.text
    tournament = made.json()
    client.post(url(tournament, "/players"), headers=h(tournament["director_token"]),
                json={"players": ["Ann", "Ben", "Cat", "Dan", "Eve"]})
    byes = []
    for number in (1, 2, 3):
        lines = standings(client, tournament)["standings"]
        seated = seat(client, tournament, number)
        assert seated.status_code == 200, seated.text
        seating = seated.json()["seating"]
        assert [len(t) for t in seating["tables"]] == [4] and seating["bye"] is not None
        byes.append(seating["bye"])
        if number > 1:  # the lowest in the standings of those who have not sat out
            assert seating["bye"] == [s["player"] for s in lines
                                      if s["player"] not in byes[:-1]][-1]
        play_game(client, console(client, tournament)["tables"][0])
    assert len(set(byes)) == 3
    lines = {s["player"]: s for s in standings(client, tournament)["standings"]}
    assert {p: lines[p]["byes"] for p in lines} == {p: int(p in byes) for p in lines}
    assert all(lines[p]["games"] == 3 - lines[p]["byes"] for p in lines)
    # Places 4/2/1/0: a bye earns a table's average, 7/4 for its one game. Each table's
    # first player went out; the others left B2 (2 points), O10 O11 (1), R5 J K13 (0).
    seated = [s for s in client.get(url(tournament, "/export.json"), headers=h(
        tournament["director_token"])).json()["seatings"]]
    earned = dict.fromkeys(lines, 0.0)
    for seating in seated:
        first, second, third, fourth = seating["tables"][0]
        for player, points in ((first, 4), (second, 0), (third, 2), (fourth, 1)):
            earned[player] += points
        earned[seating["bye"]] += 1.75
    assert {p: lines[p]["tournament_points"] for p in lines} == earned
