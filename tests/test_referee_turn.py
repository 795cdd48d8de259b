"""Turns: initial meld (RULES.md section 4), later turns (5), jokers (6), mistakes (9)."""

import pytest

from referee import check_initial_meld, check_turn, edition, parse_tiles


def sets(*codes):
    return [parse_tiles(c) for c in codes]


# -- section 4: the initial meld ------------------------------------------------------------

@pytest.mark.parametrize(
    ("meld", "legal", "total"),
    [(["R10 R11 R12"], True, 33),
     (["R10 R11 R12", "K1 K2 K3"], True, 39),
     (["K10 R10 B10"], True, 30),
     (["K9 R9 B9"], False, 27),
     # A joker counts as the tile it stands for.
     (["R9 J R11"], True, 30),
     (["K1 K2 K3", "B4 B5 B6"], False, 21)],
)
def test_initial_meld_is_worth_at_least_30(meld, legal, total):
    verdict = check_initial_meld(sets(*meld), edition())
    assert (verdict.legal, verdict.total) == (legal, total)
    assert bool(verdict.problems) != legal


def test_initial_meld_sets_must_each_be_valid():
    verdict = check_initial_meld(sets("R10 R11 R12", "K13 K1 K2"))
    assert not verdict.legal and verdict.total == 33
    assert "set 2" in verdict.problems[0] and "wraps past 13" in verdict.problems[0]


def test_initial_meld_needs_a_set():
    assert not check_initial_meld([]).legal


def test_initial_meld_minimum_is_a_setting():
    assert check_initial_meld(sets("K9 R9 B9"), edition().replace(initial_meld_minimum=25)).legal


TABLE = ["K5 R5 B5", "O1 O2 O3"]


def test_a_legal_initial_meld_turn():
    verdict = check_turn(sets(*TABLE), sets(*TABLE, "R10 R11 R12"),
                         parse_tiles("R10 R11 R12 K1"), has_melded=False, rules=edition())
    assert verdict.legal, verdict.problems
    assert verdict.initial_meld_total == 33
    assert verdict.played == parse_tiles("R10 R11 R12")
    assert verdict.draw == 0


def test_original_lets_the_meld_turn_play_on_table_sets_without_counting_them():
    after = sets("O1 O2 O3", "K5 R5 B5 O5", "R10 R11 R12")
    rack = parse_tiles("O5 R10 R11 R12")
    verdict = check_turn(sets(*TABLE), after, rack, has_melded=False, rules=edition())
    assert verdict.legal, verdict.problems
    assert verdict.initial_meld_total == 33  # the O5 laid on a table set does not count


def test_table_tiles_never_count_towards_the_30():
    # K5 comes off the table into a run with the rack's K6 K7: that set is not the player's.
    verdict = check_turn(sets(*TABLE), sets("O1 O2 O3", "R5 B5 O5", "K5 K6 K7"),
                         parse_tiles("O5 K6 K7"), has_melded=False, rules=edition())
    assert not verdict.legal
    assert verdict.initial_meld_total == 0
    assert any("table tiles never count" in p for p in verdict.problems)


def test_tournament_initial_meld_may_not_touch_table_sets():
    after = sets("O1 O2 O3", "K5 R5 B5 O5", "R10 R11 R12")
    rack = parse_tiles("O5 R10 R11 R12")
    verdict = check_turn(sets(*TABLE), after, rack, has_melded=False, rules=edition("tournament"))
    assert not verdict.legal
    assert any("may not add to, split or rearrange" in p for p in verdict.problems)


def test_tournament_initial_meld_may_not_use_table_tiles():
    after = sets("O1 O2 O3", "R5 B5 O5", "K5 K6 K7", "R10 R11 R12")
    rack = parse_tiles("O5 K6 K7 R10 R11 R12")
    verdict = check_turn(sets(*TABLE), after, rack, has_melded=False, rules=edition("tournament"))
    assert any("uses table tiles" in p for p in verdict.problems)


# -- section 5: later turns -----------------------------------------------------------------

def test_after_the_meld_a_player_may_rearrange_the_table_freely():
    before = sets("K5 R5 B5 O5", "R6 R7 R8")
    after = sets("K5 B5 O5", "R4 R5 R6 R7 R8")
    verdict = check_turn(before, after, parse_tiles("R4 K1"), has_melded=True, rules=edition())
    assert verdict.legal, verdict.problems
    assert verdict.played == parse_tiles("R4")
    assert verdict.initial_meld_total is None


@pytest.mark.parametrize(
    ("after", "rack", "phrase"),
    [
        # Section 9: taking a tile from the table to the rack.
        (["K5 R5 B5", "R6 R7 R8 R9"], "R9", "tiles left the table: O5"),
        # Tiles must come from the rack.
        (["K5 R5 B5 O5", "R6 R7 R8 R9"], "K1", "tiles not from the rack: R9"),
        # Section 9: a set of fewer than three tiles left on the table.
        (["K5 R5 B5 O5", "R6 R7", "R8 R9 R10"], "R9 R10", "set 2 (R6 R7) is invalid: too short"),
        # ... or a tile left lying alone.
        (["K5 R5 B5 O5", "R6 R7 R8", "K9"], "K9", "K9 lies alone on the table"),
        # A turn that lays nothing.
        (["K5 R5 B5 O5", "R6 R7 R8"], "R9", "laid nothing"),
        # Section 9: two tiles of one colour in a group.
        (["K5 R5 B5 O5", "R6 R7 R8", "K9 R9 K9"], "K9 R9 K9", "duplicate colour in a group"),
        # Section 9: wrapping past 13.
        (["K5 R5 B5 O5", "R6 R7 R8", "B12 B13 B1"], "B12 B13 B1", "wraps past 13"),
    ],
)
def test_every_mistake_is_named(after, rack, phrase):
    before = sets("K5 R5 B5 O5", "R6 R7 R8")
    verdict = check_turn(before, sets(*after), parse_tiles(rack), has_melded=True, rules=edition())
    assert not verdict.legal
    assert any(phrase in p for p in verdict.problems), verdict.problems


def test_an_illegal_turn_restores_the_table_and_draws_three():
    before = sets("R6 R7 R8")
    verdict = check_turn(before, sets("R6 R7", "R8 R9"), parse_tiles("R9"), True, edition())
    assert verdict.draw == 3
    verdict = check_turn(before, sets("R6 R7", "R8 R9"), parse_tiles("R9"), True,
                         edition().replace(invalid_table_draw=1))
    assert verdict.draw == 1


def test_laying_nothing_draws_one():
    before = sets("R6 R7 R8")
    verdict = check_turn(before, before, parse_tiles("K1"), True, edition())
    assert verdict.played == [] and verdict.draw == 1


def test_all_problems_at_once():
    before = sets("K5 R5 B5 O5", "R6 R7 R8")
    after = sets("K5 R5 B5", "R6 R7", "K13 K1 K2")
    verdict = check_turn(before, after, parse_tiles("K1 K2"), True, edition())
    assert [p.split(":")[0] for p in verdict.problems] == [
        "tiles left the table", "tiles not from the rack", "set 2 (R6 R7) is invalid",
        "set 3 (K13 K1 K2) is invalid"]
    assert sorted(verdict.left_table) == sorted(parse_tiles("O5 R8"))


# -- section 6: jokers ----------------------------------------------------------------------

def test_a_freed_joker_must_be_played_again():
    before = sets("R5 J R7")
    after = sets("R5 R6 R7")
    verdict = check_turn(before, after, parse_tiles("R6 K2"), True, edition())
    assert not verdict.legal
    assert any("joker went from the table to the rack" in p for p in verdict.problems)
    after = sets("R5 R6 R7", "K1 K2 J")
    verdict = check_turn(before, after, parse_tiles("R6 K1 K2"), True, edition())
    assert verdict.legal, verdict.problems


def test_rummy_sets_with_a_joker_may_not_be_split():
    before = sets("G1 G2 G3 J G5 G6")
    after = sets("G1 G2 G3 G4", "J G5 G6")
    verdict = check_turn(before, after, parse_tiles("G4"), True, edition("rummy"))
    assert any("may not be split" in p for p in verdict.problems)
    splittable = edition("rummy").replace(joker_sets_splittable=True)
    assert check_turn(before, after, parse_tiles("G4"), True, splittable).legal


def test_copies_beyond_the_box_are_flagged_in_a_turn():
    verdict = check_turn(sets("R5 R6 R7", "R5 B5 K5"), sets("R5 R6 R7", "R5 B5 K5", "R3 R4 R5"),
                         parse_tiles("R3 R4 R5"), True, edition())
    assert any(p.startswith("impossible count: R5 appears 3 times") for p in verdict.problems)
