"""Tournament formats, standings and tie-breaks, finals (referee.tournament)."""

import json

import pytest

from referee.tournament import (
    FORMATS,
    Finals,
    Format,
    GameResult,
    Match,
    Seating,
    final_table,
    finals_seeding,
    finals_stages,
    game_points,
    match_of,
    results_problems,
    standings,
    table_ranking,
    tournament_format,
)

CLUB = tournament_format("club")
SWISS = tournament_format("swiss-2p")
CHAMPIONSHIP = tournament_format("championship")

# RULES.md section 8's score sheet: two games at one table.
SHEET = [GameResult(1, 1, 1, {"A": 24, "B": -5, "C": -16, "D": -3}),
         GameResult(1, 1, 2, {"A": -6, "B": -11, "C": 22, "D": -5})]
SHEET_SEATING = [Seating((("A", "B", "C", "D"),))]


def order(table):
    return [(s.place, s.player) for s in table]


# -- formats -----------------------------------------------------------------------------

def test_presets_follow_their_sources():
    assert (CLUB.players_per_table, CLUB.games_per_round, CLUB.rounds) == (4, 4, 3)
    assert CLUB.seating == "standings" and CLUB.game_points == "raw"
    assert (SWISS.players_per_table, SWISS.rounds, SWISS.edition) == (2, 5, "mso")
    assert SWISS.tie_breaks == ("final-round-board", "final-round-result", "points", "wins",
                                "head-to-head", "buchholz")
    assert CHAMPIONSHIP.finals == Finals(size=8, advance=2, games=3, wins_needed=4)
    assert CHAMPIONSHIP.place_points == (4, 2, 1, 0)
    assert set(FORMATS) == {"club", "swiss-2p", "championship"}


def test_every_preset_names_an_edition_that_exists():
    from referee import edition

    for fmt in FORMATS.values():
        assert edition(fmt.edition).name == fmt.edition


def test_a_format_survives_json():
    for fmt in FORMATS.values():
        assert Format.from_dict(json.loads(json.dumps(fmt.to_dict()))) == fmt


def test_a_bad_format_names_every_problem():
    data = CLUB.to_dict() | {"players_per_table": 3, "rounds": 0, "tie_breaks": ["luck"],
                             "place_points": [0, 1, 2, 4], "edition": "poker"}
    with pytest.raises(ValueError) as error:
        Format.from_dict(data)
    text = str(error.value)
    for part in ("players_per_table", "rounds", "unknown 'luck'", "a better place",
                 "edition: one of original"):
        assert part in text
    with pytest.raises(ValueError, match="unknown format key 'colour'"):
        Format.from_dict({"colour": 1})
    with pytest.raises(ValueError, match="known formats: club, swiss-2p, championship"):
        tournament_format("league")


# -- standings and tie-breaks ------------------------------------------------------------

def test_the_score_sheet_in_raw_points():
    table = standings(SHEET, CLUB, SHEET_SEATING)
    assert [(s.player, s.tournament_points) for s in table] == [
        ("A", 18), ("C", 6), ("D", -8), ("B", -16)]
    assert [s.place for s in table] == [1, 2, 3, 4]
    a = table[0]
    assert a.tie_breaks["wins"] == 1 and a.tie_breaks["points"] == 18
    assert a.tie_breaks["buchholz"] == 6 - 8 - 16


def test_the_score_sheet_in_places_needs_a_tie_break():
    # Game 1: A, D, B, C -> 4, 2, 1, 0; game 2: C, D, A, B -> 4, 2, 1, 0.
    assert game_points(SHEET[0], CHAMPIONSHIP) == {"A": 4, "D": 2, "B": 1, "C": 0}
    table = standings(SHEET, CHAMPIONSHIP, SHEET_SEATING)
    assert [(s.player, s.tournament_points) for s in table] == [
        ("A", 5), ("C", 4), ("D", 4), ("B", 1)]
    c, d = table[1], table[2]
    # C and D are level on 4; points (the raw total) puts C ahead: 6 against -8.
    assert (c.tie_breaks["points"], d.tie_breaks["points"]) == (6, -8)
    assert (c.place, d.place) == (2, 3)
    assert (c.tie_breaks["wins"], d.tie_breaks["wins"]) == (1, 0)
    # Everyone met everyone: Buchholz is the other three's points.
    assert (c.tie_breaks["buchholz"], d.tie_breaks["buchholz"]) == (10, 10)


def test_equal_scores_share_the_places_points():
    result = GameResult(1, 1, 1, {"A": 10, "B": -5, "C": -5})
    assert game_points(result, CHAMPIONSHIP) == {"A": 4, "B": 1.5, "C": 1.5}
    assert result.winner == "A"
    assert GameResult(1, 1, 1, {"A": 0, "B": 0}).winner is None


# Two rounds of a 2-player Swiss: A beats B, C beats D; then C beats A, B beats D.
SWISS_RESULTS = [GameResult(1, 1, 1, {"A": 20, "B": -20}), GameResult(1, 2, 1, {"C": 15, "D": -15}),
                 GameResult(2, 1, 1, {"A": -10, "C": 10}), GameResult(2, 2, 1, {"B": 5, "D": -5})]
SWISS_SEATINGS = [Seating((("A", "B"), ("C", "D"))), Seating((("A", "C"), ("B", "D")))]


@pytest.mark.parametrize(
    ("tie_break", "a_value", "b_value", "ahead"),
    [("final-round-board", 1, 2, "A"),  # table 1 in the last round
     ("final-round-result", 0, 1, "B"),  # B won the last round, A lost it
     ("points", 10, -15, "A"),
     ("head-to-head", 1, -1, "A"),
     ("buchholz", 3, 1, "A"),  # A met B (1) and C (2); B met A (1) and D (0)
     ("wins", 1, 1, None)],
)
def test_each_tie_break_on_its_own(tie_break, a_value, b_value, ahead):
    fmt = SWISS.replace(tie_breaks=(tie_break,))
    table = standings(SWISS_RESULTS, fmt, SWISS_SEATINGS)
    by_name = {s.player: s for s in table}
    assert [s.player for s in table][0] == "C" and by_name["C"].tournament_points == 2
    assert by_name["A"].tournament_points == by_name["B"].tournament_points == 1
    assert (by_name["A"].tie_breaks[tie_break], by_name["B"].tie_breaks[tie_break]) == (
        a_value, b_value)
    if ahead is None:
        assert by_name["A"].place == by_name["B"].place == 2
    else:
        behind = "B" if ahead == "A" else "A"
        assert (by_name[ahead].place, by_name[behind].place) == (2, 3)
    assert by_name["D"].place == 4


def test_the_swiss_order_applies_tie_breaks_in_turn():
    table = standings(SWISS_RESULTS, SWISS, SWISS_SEATINGS)
    assert order(table) == [(1, "C"), (2, "A"), (3, "B"), (4, "D")]
    assert table[1].to_dict()["tie_breaks"]["final-round-board"] == 1


def test_head_to_head_counts_only_games_among_the_players_still_level():
    # A, B, C, D all end on 0 points; X on 10 and Y on -10 are not level with them.
    results = [GameResult(1, 1, 1, {"A": 1, "B": -1}), GameResult(1, 1, 2, {"A": 1, "B": -1}),
               GameResult(1, 1, 3, {"A": -2, "B": 2}),
               GameResult(1, 2, 1, {"C": 0, "D": 0}),
               GameResult(1, 3, 1, {"X": 10, "Y": -10})]
    fmt = CLUB.replace(games_per_round=3, tie_breaks=("head-to-head",))
    table = standings(results, fmt)
    assert order(table) == [(1, "X"), (2, "A"), (3, "C"), (3, "D"), (5, "B"), (6, "Y")]
    h2h = {s.player: s.tie_breaks["head-to-head"] for s in table}
    # A finished above B twice and below once; C and D drew; X and Y needed no tie-break.
    assert h2h == {"A": 1, "B": -1, "C": 0, "D": 0, "X": 0, "Y": 0}


def test_a_bye_earns_a_win_in_places_scoring():
    seatings = [Seating((("A", "B"),), bye="C")]
    table = standings([GameResult(1, 1, 1, {"A": 5, "B": -5})], SWISS, seatings)
    assert {s.player: s.tournament_points for s in table} == {"A": 1, "C": 1, "B": 0}


def test_a_bye_at_tables_of_four_earns_a_tables_average_and_is_flagged():
    # 5 players, places 4/2/1/0, 3 games a round: E sits out and earns 3 x 7/4.
    seatings = [Seating((("A", "B", "C", "D"),), bye="E")]
    results = [GameResult(1, 1, g, {"A": 9, "B": -1, "C": -3, "D": -5}) for g in (1, 2, 3)]
    table = standings(results, CHAMPIONSHIP, seatings)
    assert {s.player: (s.tournament_points, s.byes) for s in table} == {
        "A": (12, 0), "E": (5.25, 1), "B": (6, 0), "C": (3, 0), "D": (0, 0)}
    assert [s.player for s in table] == ["A", "B", "E", "C", "D"]
    assert table[2].to_dict()["byes"] == 1 and table[2].games == 0
    # Raw scoring: a bye earns 0, the average of a table whose scores sum to 0.
    raw = standings(results, CHAMPIONSHIP.replace(game_points="raw"), seatings)
    assert {s.player: s.tournament_points for s in raw}["E"] == 0
    assert CHAMPIONSHIP.replace(bye_points="win").bye_points == "win"
    with pytest.raises(ValueError, match="bye_points: one of average, win"):
        CHAMPIONSHIP.replace(bye_points="half")


def test_results_problems_names_every_problem():
    seatings = [Seating((("A", "B", "C", "D"), ("E", "F", "G")))]
    results = [GameResult(1, 1, 1, {"A": 1, "B": 1, "C": 1, "D": -3}),
               GameResult(1, 1, 1, {"A": 1, "B": 1, "C": 1, "D": -3}),
               GameResult(1, 2, 5, {"E": 1, "F": -1, "Z": 0}),
               GameResult(1, 3, 1, {"A": 0}),
               GameResult(2, 1, 1, {"A": 0})]
    problems = results_problems(results, seatings, CLUB)
    assert problems == [
        "round 1 table 1 game 1 is entered 2 times",
        "round 1 table 2 game 5: a round has 4 games",
        "round 1 table 2 game 5: no score for G; Z not seated there",
        "round 1 table 3 game 1: round 1 has 2 tables",
        "round 2 table 1 game 1: round 2 has no seating",
    ]
    assert results_problems(results[:1], seatings, CLUB) == []


def test_a_game_result_from_bad_json_says_everything_wrong():
    with pytest.raises(ValueError) as error:
        GameResult.from_dict({"round": 0, "table": "1", "game": 1, "scores": {"A": "5"}})
    assert "round: a whole number 1 or more" in str(error.value)
    assert "table: a whole number" in str(error.value) and "scores:" in str(error.value)
    good = SHEET[0].to_dict()
    assert GameResult.from_dict(json.loads(json.dumps(good))) == SHEET[0]


# -- finals ------------------------------------------------------------------------------

def test_finals_seeding():
    ranking = [f"P{i}" for i in range(1, 11)]
    assert finals_seeding(ranking, CHAMPIONSHIP) == [["P1", "P3", "P5", "P7"],
                                                     ["P2", "P4", "P6", "P8"]]
    top4 = CHAMPIONSHIP.replace(finals=Finals(size=4, wins_needed=4))
    assert finals_seeding(ranking, top4) == [["P1", "P2", "P3", "P4"]]
    assert finals_seeding(ranking, CLUB) == []
    with pytest.raises(ValueError, match="need 8 ranked players, not 7"):
        finals_seeding(ranking[:7], CHAMPIONSHIP)
    table = standings(SHEET, CHAMPIONSHIP, SHEET_SEATING)
    assert finals_seeding(table, top4) == [["A", "C", "D", "B"]]


def test_final_table_takes_the_best_two_of_each_semi_final():
    semis = [["P3", "P1", "P7", "P5"], ["P2", "P8", "P4", "P6"]]
    assert final_table(semis, CHAMPIONSHIP) == ["P3", "P2", "P1", "P8"]
    with pytest.raises(ValueError, match="two semi-finals"):
        final_table(semis[:1], CHAMPIONSHIP)


def test_first_to_four_wins():
    match = Match(("A", "B", "C", "D"), 4)
    for game_winner in ["A", "B", None, "A", "A", "C"]:
        match = match.add_game(game_winner)
    assert match.wins == {"A": 3, "B": 1, "C": 1, "D": 0} and not match.over
    match = match.add_game("A")
    assert match.over and match.winner == "A"
    # A game after the end changes nothing and says why.
    assert match.problems_with("B") == ["the match is over: A has 4 wins; no further game counts"]
    with pytest.raises(ValueError, match="the match is over"):
        match.add_game("B")
    assert len(match.games) == 7
    assert Match(("A", "B"), 2).problems_with("Z") == ["Z does not play at this table (A, B)"]
    again = Match.from_dict(json.loads(json.dumps(match.to_dict())))
    assert again == match
    with pytest.raises(ValueError, match="the match is over"):
        Match.from_dict(match.to_dict() | {"games": list(match.games) + ["B"]})


def test_finals_stages_follow_the_finals_size():
    assert finals_stages(CHAMPIONSHIP) == ["semi-final", "final"]
    assert finals_stages(CHAMPIONSHIP.replace(finals=Finals(size=4, wins_needed=4))) == ["final"]
    assert finals_stages(CLUB) == []


def test_a_finals_table_ranks_by_its_games_summed_then_by_seed():
    seeds = ["P1", "P3", "P5", "P7"]
    games = [GameResult(2, 1, 1, {"P1": -5, "P3": 20, "P5": -10, "P7": -5}),
             GameResult(2, 1, 2, {"P1": -5, "P3": -10, "P5": 30, "P7": -15})]
    # Places 4/2/1/0: P3 4 + 1, P5 0 + 4, P1 1.5 + 2, P7 1.5 + 0. Below, in raw scoring
    # with no tie-breaks, P7, P5 and P1 are level on everything: the better seed first.
    assert table_ranking(games, seeds, CHAMPIONSHIP) == ["P3", "P5", "P1", "P7"]
    raw = CHAMPIONSHIP.replace(game_points="raw", tie_breaks=())
    level = [GameResult(2, 1, 1, {"P1": -5, "P3": 15, "P5": -5, "P7": -5})]
    assert table_ranking(level, ["P7", "P5", "P3", "P1"], raw) == ["P3", "P7", "P5", "P1"]


def test_a_match_counts_games_in_order_until_it_is_decided():
    players = ("A", "B", "C", "D")
    games = [GameResult(3, 1, g, {"A": 10, "B": -10, "C": 0, "D": 0}) for g in (3, 1, 2)]
    games.append(GameResult(3, 1, 4, {"A": -10, "B": 10, "C": 0, "D": 0}))
    match = match_of(games, players, 3)
    assert match.winner == "A" and len(match.games) == 3  # game 4 came after the decision
    assert match_of(games[:2], players, 3).winner is None
