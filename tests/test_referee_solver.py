"""The arrangement solver: exact partition of a multiset of tiles into valid sets."""

import itertools
import random
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import JOKER, SearchBudgetExceeded, Tile, arrange, check_set, edition, parse_tiles

ORIGINAL = edition()
SETTINGS = settings(max_examples=80, deadline=None)


def assert_is_arrangement_of(sets, tiles, rules=ORIGINAL):
    assert sorted(t for s in sets for t in s) == sorted(tiles)
    for tiles_of_set in sets:
        assert check_set(tiles_of_set, rules).valid, tiles_of_set


@pytest.mark.parametrize(
    "codes",
    ["R1 R2 R3 B7 K7 O7 J", "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 J", "R12 R13 J",
     "K5 R5 B5 O5 K5 R5 B5 O5", "R1 R2 R3 R1 R2 R3 R1 R2 R3", "K1 K2 K3 K4 K5 K6 J J"],
)
def test_solvable_tiles_are_arranged(codes):
    tiles = parse_tiles(codes)
    assert_is_arrangement_of(arrange(tiles), tiles)


@pytest.mark.parametrize(
    ("codes", "why"),
    [("K5 R5 B5 O5 J", "a full group has no room for a joker"),
     ("R12 R13 R1", "no wrapping past 13"),
     ("R1 R2", "too few tiles"),
     ("J J", "jokers alone are no set"),
     ("R1 R2 R3 J J J", "more jokers than the edition has"),
     ("G1 G2 G3", "no green tiles in the original edition"),
     ("R1 R2 R3 R4 K9", "a lone tile")],
)
def test_unsolvable_tiles_are_refused(codes, why):
    assert arrange(parse_tiles(codes)) is None, why


def test_an_empty_table_is_arranged_as_no_sets():
    assert arrange([]) == []


def test_whole_boxes_of_every_edition_can_be_arranged():
    for rules in (edition("original"), edition("six-player"), edition("rummy")):
        tiles = rules.all_tiles()
        assert_is_arrangement_of(arrange(tiles, rules), tiles, rules)


def test_a_search_budget_gives_up_loudly_instead_of_answering_wrong():
    tiles = ORIGINAL.all_tiles()  # a whole box needs about a hundred search states
    with pytest.raises(SearchBudgetExceeded, match="20 search states"):
        arrange(tiles, max_states=20)
    assert_is_arrangement_of(arrange(tiles, max_states=5_000), tiles)


def test_a_budget_large_enough_changes_no_answer():
    rng = random.Random(7)
    box = ORIGINAL.all_tiles()
    for _ in range(50):
        tiles = rng.sample(box, 40)
        assert (arrange(tiles, max_states=10**6) is None) == (arrange(tiles) is None)


def test_a_spare_joker_is_placed_even_when_every_set_seems_full():
    tiles = parse_tiles(" ".join(f"R{n}" for n in range(1, 14)) + " J")
    assert_is_arrangement_of(arrange(tiles), tiles)


# -- cross-check against brute force on small tables --------------------------------------

def brute_force_arrangeable(tiles, rules):
    @cache
    def go(rest):
        if not rest:
            return True
        first, others = rest[0], rest[1:]
        for size in range(2, len(others) + 1):
            for chosen in set(itertools.combinations(others, size)):
                if check_set((first, *chosen), rules).valid:
                    left = list(others)
                    for tile in chosen:
                        left.remove(tile)
                    if go(tuple(left)):
                        return True
        return False

    return go(tuple(sorted(tiles)))


@st.composite
def small_tables(draw):
    """Up to 9 tiles from a narrow window of numbers, so that sets are likely but not sure."""
    low = draw(st.integers(1, 11))
    tiles = draw(st.lists(st.builds(Tile, st.sampled_from(ORIGINAL.colors[:3]),
                                    st.integers(low, min(13, low + 4))), max_size=7))
    return tiles + [JOKER] * draw(st.integers(0, 2))


@SETTINGS
@given(small_tables())
def test_the_solver_agrees_with_brute_force(tiles):
    result = arrange(tiles)
    if all(t.is_joker for t in tiles):
        assert result == ([] if not tiles else None)
        return
    assert (result is not None) == brute_force_arrangeable(tiles, ORIGINAL)
    if result is not None:
        assert_is_arrangement_of(result, tiles)


# -- properties on generated valid tables -------------------------------------------------

@st.composite
def valid_sets(draw, rules=ORIGINAL):
    if draw(st.booleans()):
        color = draw(st.sampled_from(rules.colors))
        length = draw(st.integers(3, 13))
        start = draw(st.integers(1, 14 - length))
        tiles = [Tile(color, n) for n in range(start, start + length)]
    else:
        number = draw(st.integers(1, 13))
        colors = draw(st.lists(st.sampled_from(rules.colors), min_size=3, max_size=4,
                               unique=True))
        tiles = [Tile(c, number) for c in colors]
    # A joker may take the place of any one tile (it stands for that tile).
    if draw(st.booleans()):
        tiles[draw(st.integers(0, len(tiles) - 1))] = JOKER
    return tiles


@st.composite
def valid_tables(draw):
    table = draw(st.lists(valid_sets(), min_size=1, max_size=12))
    jokers = sum(t.is_joker for s in table for t in s)
    if jokers > ORIGINAL.jokers:
        # Keep the box honest: drop sets until at most two jokers remain.
        kept, count = [], 0
        for tiles in table:
            extra = sum(t.is_joker for t in tiles)
            if count + extra <= ORIGINAL.jokers:
                kept.append(tiles)
                count += extra
        table = kept or [parse_tiles("R1 R2 R3")]
    return table


@SETTINGS
@given(valid_tables(), st.randoms(use_true_random=False))
def test_any_valid_table_can_be_arranged_and_the_arrangement_uses_exactly_its_tiles(table, rng):
    tiles = [t for s in table for t in s]
    rng.shuffle(tiles)
    assert_is_arrangement_of(arrange(tiles), tiles)


@SETTINGS
@given(valid_tables(), st.randoms(use_true_random=False))
def test_a_valid_table_shuffled_within_its_sets_stays_valid(table, rng):
    for tiles in table:
        shuffled = list(tiles)
        rng.shuffle(shuffled)
        before, after = check_set(tiles), check_set(shuffled)
        assert before.valid and after.valid
        assert {before.kind, after.kind} <= {"run", "group"}


def test_random_one_tile_misreads_of_a_full_box_stay_consistent():
    rng = random.Random(7)
    box = ORIGINAL.all_tiles()
    codes = sorted(set(box))
    for _ in range(40):
        tiles = list(box)
        tiles[rng.randrange(len(tiles))] = rng.choice(codes)
        result = arrange(tiles)
        if sum(t.is_joker for t in tiles) > ORIGINAL.jokers:
            assert result is None
        else:
            assert_is_arrangement_of(result, tiles)


def test_more_tiles_than_a_box_holds_are_refused_at_once():
    from referee import TooManyTiles

    tiles = parse_tiles("R5 R6 R7 " * 700)  # 2,100 tiles took minutes to search
    with pytest.raises(TooManyTiles, match="2100 tiles, but a box of the original edition "
                                           "holds 106"):
        arrange(tiles)
    # The six-player box holds 160: what one edition refuses another may hold.
    box = edition("six-player").all_tiles()
    assert len(box) == 160 and arrange(box, edition("six-player")) is not None
    with pytest.raises(TooManyTiles, match="holds 106"):
        arrange(box)


# -- the bounds that cut off hard impossible tables ---------------------------------------

@st.composite
def medium_tables(draw):
    """10-40 tiles in a window of 5-8 numbers with 1-2 jokers: about half can be arranged."""
    low = draw(st.integers(1, 9))
    high = min(13, low + draw(st.integers(4, 7)))
    box = [Tile(c, n) for c in ORIGINAL.colors for n in range(low, high + 1) for _ in range(2)]
    tiles = draw(st.lists(st.sampled_from(range(len(box))), min_size=10, max_size=40,
                          unique=True))
    return [box[i] for i in tiles] + [JOKER] * draw(st.integers(1, 2))


@settings(max_examples=150, deadline=None)
@given(medium_tables())
def test_the_bounds_never_cut_off_a_table_that_can_be_arranged(tiles):
    import referee.solver as solver

    # Both directions and the bounds from the first state on (normally only once a table
    # proves hard).
    first_slice, bound_after = solver._FIRST_SLICE, solver._BOUND_AFTER
    solver._FIRST_SLICE, solver._BOUND_AFTER = 1, 1
    try:
        bounded = arrange(tiles)
    finally:
        solver._FIRST_SLICE, solver._BOUND_AFTER = first_slice, bound_after
    assert (bounded is not None) == solver._unbounded_finds_plan(tiles, ORIGINAL)
    if bounded is not None:
        assert_is_arrangement_of(bounded, tiles)


def test_hard_impossible_tables_with_jokers_are_still_refused_both_ways():
    # The bench's tables (seed 22), where the bounds do cut: the same answer without them.
    import referee.solver as solver
    from bench.solver_bench import unsolvable_tables

    for tiles in unsolvable_tables(22, 20):
        assert arrange(tiles) is None
        assert not solver._unbounded_finds_plan(tiles, ORIGINAL)
