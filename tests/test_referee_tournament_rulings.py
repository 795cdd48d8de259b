"""The director's rulings on a turn (referee/tournament/rulings.py): a void turn and a set
ruled valid change the round's count from the racks counted at its end, never the record."""

import pytest

from referee.editions import edition
from referee.scoring import score_round
from referee.tiles import parse_tiles
from referee.tournament.rulings import (
    RackChange,
    TurnRecord,
    recount,
    set_problems,
    set_valid_change,
    unruled_sets,
    void_change,
)

RULES = edition("tournament")
# Ann went out; the others' racks as counted at the round's end.
RACKS = {"Ann": [], "Ben": ["R5", "K13"], "Cat": ["B2", "O9", "O8"]}
PENALISED = TurnRecord(4, "Ben", played=("O11", "O12", "O7"), tiles_back=("O11", "O12", "O7"),
                       draws=3, invalid_sets=(("O11", "O12"),))


def scores(racks, winner):
    return score_round({n: parse_tiles(r) for n, r in racks.items()}, winner, RULES).scores


def test_nothing_ruled_counts_the_round_as_it_was():
    assert recount(RACKS, "Ann", [], RULES).scores == scores(RACKS, "Ann")


def test_a_void_legal_turn_puts_its_tiles_back_on_the_rack():
    turn = TurnRecord(5, "Cat", played=("K1", "K2", "K3"))
    change = void_change(turn)
    assert change == RackChange("Cat", ("K1", "K2", "K3"), (), 0)
    counted = recount(RACKS, "Ann", [(change, [])], RULES)
    assert counted.scores == scores({**RACKS, "Cat": RACKS["Cat"] + ["K1", "K2", "K3"]}, "Ann")
    assert counted.scores["Cat"] == -(2 + 9 + 8 + 6)


def test_a_void_pass_takes_the_drawn_tile_off_the_rack_once_named():
    change = void_change(TurnRecord(6, "Ben", draws=1))
    with pytest.raises(ValueError, match="drew 1 tile.*name at most 1, not 2"):
        recount(RACKS, "Ann", [(change, ["K13", "R5"])], RULES)
    # Named none: the drawn tile was laid later, so it is on the table either way.
    assert recount(RACKS, "Ann", [(change, [])], RULES).scores == scores(RACKS, "Ann")
    with pytest.raises(ValueError, match="B7 is not on Ben's counted rack"):
        recount(RACKS, "Ann", [(change, ["B7"])], RULES)
    assert recount(RACKS, "Ann", [(change, ["K13"])], RULES).scores["Ben"] == -5


def test_a_void_penalty_leaves_the_tiles_on_the_rack_and_returns_the_draw():
    change = void_change(PENALISED)
    # Sent back by the penalty, so they never left the rack: only the draw is undone.
    assert change == RackChange("Ben", (), (), 3)


def test_voiding_the_going_out_turn_means_nobody_went_out():
    change = void_change(TurnRecord(9, "Ann", played=("R1", "R2", "R3")))
    counted = recount(RACKS, "Ann", [(change, [])], RULES)
    expected = score_round({n: parse_tiles(r) for n, r in {**RACKS, "Ann": ["R1", "R2", "R3"]}
                            .items()}, None, RULES)
    assert counted.scores == expected.scores and counted.pool_empty
    assert counted.winner == "Ann"  # the lowest rack (6) wins an ended round with nobody out


def test_ruling_the_only_invalid_set_valid_undoes_the_penalty():
    assert unruled_sets(PENALISED, []) == [("O11", "O12")]
    change = set_valid_change(PENALISED, [["O12", "O11"]])
    assert change == RackChange("Ben", (), ("O11", "O12", "O7"), 3)
    racks = {**RACKS, "Ben": ["R5", "K13", "O11", "O12", "O7", "B1", "B3", "K4"]}
    counted = recount(racks, "Ann", [(change, ["B1", "B3", "K4"])], RULES)
    assert counted.scores["Ben"] == -18


def test_a_turn_stands_only_when_every_problem_was_a_set_ruled_valid():
    two = TurnRecord(4, "Ben", played=("O11", "O12", "R1", "R2"), tiles_back=("O11", "O12"),
                     draws=3, invalid_sets=(("O11", "O12"), ("R1", "R2")))
    assert set_valid_change(two, [["O11", "O12"]]) is None
    assert set_valid_change(two, [["O11", "O12"], ["R1", "R2"]]) is not None
    short = TurnRecord(4, "Ben", played=("O11", "O12"), tiles_back=("O11", "O12"), draws=3,
                       invalid_sets=(("O11", "O12"),), other_problems=("initial meld: 23",))
    assert set_valid_change(short, [["O11", "O12"]]) is None
    timed = TurnRecord(4, "Ben", played=("O11", "O12"), tiles_back=("O11", "O12"), draws=3,
                       timed_out=True, invalid_sets=(("O11", "O12"),))
    assert set_valid_change(timed, [["O11", "O12"]]).draws_back == 0


def test_a_set_not_in_the_turn_or_ruled_twice_is_named():
    assert set_problems(PENALISED, ["R1", "R2", "R3"], []) == [
        "turn 4 has no invalid set R1 R2 R3 (its invalid sets: O11 O12)"]
    assert set_problems(PENALISED, ["O11", "O12"], []) == []
    assert set_problems(PENALISED, ["O11", "O12"], [["O11", "O12"]]) == [
        "the set O11 O12 of turn 4 is already ruled valid"]


def test_a_turn_record_comes_from_the_servers_verdict():
    verdict = {"turn": 3, "player": "Ann", "played": ["O11", "O12"], "draws": 3,
               "timed_out": False, "penalty": {"tiles_back": [{"code": "O11"}, {"code": "O12"}],
                                               "draw": 3},
               "invalid_sets": [{"tiles": ["O11", "O12"]}],
               "problems": ["set 2 (O11 O12) is invalid", "tile gone"],
               "problem_ids": [{"id": "turn.set_invalid"}, {"id": "turn.table_tile_gone"}]}
    record = TurnRecord.from_verdict(verdict)
    assert record.tiles_back == ("O11", "O12") and record.invalid_sets == (("O11", "O12"),)
    assert record.other_problems == ("tile gone",) and record.penalised
