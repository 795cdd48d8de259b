"""Seating: table sizes, the seeded draw, and later rounds against a brute force."""

import random
import time
from itertools import combinations

import pytest

from referee.tournament import (
    Seating,
    byes_needed,
    choose_bye,
    repeat_count,
    seat_first_round,
    seat_next_round,
    seating_problems,
    table_sizes,
    tournament_format,
)

CLUB = tournament_format("club")
SWISS = tournament_format("swiss-2p")


def names(count):
    return [f"P{i:03d}" for i in range(1, count + 1)]


def test_tables_of_four_and_three_only_for_6_to_200_players():
    for count in range(6, 201):
        sizes = table_sizes(count, CLUB)
        assert set(sizes) <= {3, 4} and sum(sizes) == count, count
        # As few tables of 3 as the count allows: never 4 of them (3 x 4 = 4 x 3).
        assert sizes.count(3) <= 3 and sizes == sorted(sizes, reverse=True)
    assert table_sizes(3, CLUB) == [3] and table_sizes(4, CLUB) == [4]


@pytest.mark.parametrize("count", [1, 2])
def test_counts_that_need_a_table_of_two_are_refused(count):
    with pytest.raises(ValueError, match="cannot sit at tables of 4 and 3"):
        table_sizes(count, CLUB)


def test_five_players_sit_at_one_table_of_four_and_one_sits_out():
    assert byes_needed(5, CLUB) == 1 and table_sizes(5, CLUB) == [4]
    seating = seat_first_round(names(5), CLUB, seed="five")
    assert len(seating.tables) == 1 and len(seating.tables[0]) == 4
    assert seating.bye is not None and seating.bye not in seating.tables[0]
    assert seating_problems(seating, names(5), CLUB) == []
    no_bye = Seating((tuple(names(4)),), None)
    assert seating_problems(no_bye, names(5), CLUB) == [
        "P005 has no seat", "5 players at tables of 4 need one player with a bye"]


def test_byes_occur_only_for_5_at_tables_of_four_and_odd_counts_in_pairs():
    for count in range(5, 201):
        assert byes_needed(count, CLUB) == (count == 5), count
        assert byes_needed(count, SWISS) == count % 2, count


@pytest.mark.parametrize("fmt", [CLUB, SWISS], ids=["tables-of-4", "pairs"])
def test_every_count_5_to_200_with_a_bye_rotates_it_through_everyone(fmt):
    """Wherever a bye occurs: the first round's draw is a valid seating, and over as many
    rounds as players nobody sits out twice, the lowest-ranked first after round 1."""
    counts = [c for c in range(5, 201) if byes_needed(c, fmt)]
    assert counts == ([5] if fmt is CLUB else list(range(5, 201, 2)))
    for count in counts:
        players = names(count)
        first = seat_first_round(players, fmt, seed=count)
        assert seating_problems(first, players, fmt) == [], count
        history = [first]
        rng = random.Random(count)
        for _ in range(count - 1):
            ranking = rng.sample(players, count)
            bye = choose_bye(ranking, history)
            had = {s.bye for s in history}
            assert bye not in had, count
            # The lowest-ranked of those who have not sat out yet.
            assert bye == [p for p in ranking if p not in had][-1], count
            history.append(Seating((), bye))
        assert sorted(s.bye for s in history) == players, count
        # Round count + 1: the cycle starts again from the lowest-ranked.
        assert choose_bye(players, history) == players[-1]


def test_five_players_over_five_rounds_each_sit_out_once():
    players = names(5)
    history = [seat_first_round(players, CLUB, seed=3)]
    rng = random.Random(3)
    for _ in range(4):
        ranking = rng.sample(players, 5)
        seating = seat_next_round(ranking, history, CLUB)
        assert seating_problems(seating, players, CLUB, history) == []
        assert seating.bye == [p for p in ranking if p not in {s.bye for s in history}][-1]
        history.append(seating)
    assert sorted(s.bye for s in history) == players


def test_a_second_bye_before_everyone_had_one_is_a_problem():
    players = names(5)
    history = [Seating((("P001", "P002", "P003", "P004"),), "P005")]
    again = Seating((("P001", "P002", "P003", "P004"),), "P005")
    assert seating_problems(again, players, CLUB, history) == [
        "P005 would sit out a round again while P001, P002, P003, P004 have sat out fewer"]
    drawn = CLUB.replace(seating="drawn")
    for _ in range(4):
        history.append(seat_next_round(players, history, drawn, seed="d"))
    assert sorted(s.bye for s in history) == players


def test_two_player_formats_seat_pairs_with_a_bye_for_an_odd_count():
    assert table_sizes(10, SWISS) == [2] * 5
    seating = seat_first_round(names(7), SWISS, seed=1)
    assert all(len(t) == 2 for t in seating.tables) and seating.bye is not None
    assert seating_problems(seating, names(7), SWISS) == []


def test_the_first_round_draw_is_repeatable_from_its_seed():
    players = names(30)
    first = seat_first_round(players, CLUB, seed="2026 club final")
    assert first == seat_first_round(players, CLUB, seed="2026 club final")
    assert first != seat_first_round(players, CLUB, seed="another seed")
    assert seating_problems(first, players, CLUB) == []
    assert Seating.from_dict(first.to_dict()) == first


@pytest.mark.parametrize("count", [6, 7, 9, 13, 40, 121, 200])
def test_every_round_seats_everyone_once_with_the_leader_at_table_1(count):
    rng = random.Random(count)
    players = names(count)
    history = [seat_first_round(players, CLUB, seed=count)]
    for _ in range(3):
        ranking = rng.sample(players, count)
        seating = seat_next_round(ranking, history, CLUB)
        assert seating_problems(seating, players, CLUB) == []
        assert ranking[0] in seating.tables[0]
        assert sorted(len(t) for t in seating.tables) == sorted(table_sizes(count, CLUB))
        history.append(seating)


def test_sixteen_players_meet_nobody_twice_in_round_2():
    players = names(16)
    first = Seating(tuple(tuple(players[i:i + 4]) for i in range(0, 16, 4)))
    second = seat_next_round(players, [first], CLUB)
    assert repeat_count(second, [first]) == 0
    # Plain standings order would put P001-P004 together again; the leader stays at table 1.
    assert second.tables[0][0] == "P001"


def test_with_no_history_the_seating_is_plain_standings_order():
    players = names(11)
    seating = seat_next_round(players, [], CLUB)
    assert seating.tables == (tuple(players[:4]), tuple(players[4:8]), tuple(players[8:]))


def all_seatings(players, sizes):
    """Every split of `players` into tables of `sizes` (as sets, table order ignored)."""
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for size in sorted(set(sizes)):
        remaining = list(sizes)
        remaining.remove(size)
        for mates in combinations(rest, size - 1):
            left = [p for p in rest if p not in mates]
            for others in all_seatings(left, remaining):
                yield [(first, *mates)] + others


def brute_force_fewest_repeats(players, history):
    sizes = table_sizes(len(players), CLUB)
    return min(repeat_count(Seating(tuple(tables)), history)
               for tables in all_seatings(players, sizes))


@pytest.mark.parametrize(("count", "rounds"), [(8, 2), (8, 3), (9, 2), (9, 3), (10, 3)])
def test_repeat_table_mates_never_more_than_brute_force(count, rounds):
    rng = random.Random(count * 10 + rounds)
    players = names(count)
    for trial in range(4):
        history = [seat_first_round(players, CLUB, seed=trial)]
        for _ in range(rounds - 1):
            ranking = rng.sample(players, count)
            seating = seat_next_round(ranking, history, CLUB)
            assert repeat_count(seating, history) == brute_force_fewest_repeats(players, history)
            history.append(seating)


def test_swiss_pairs_avoid_rematches_while_possible():
    players = names(8)
    history = [seat_first_round(players, SWISS, seed=5)]
    rng = random.Random(5)
    for _ in range(6):  # 7 rounds of 8 players: a round robin is possible
        seating = seat_next_round(rng.sample(players, 8), history, SWISS)
        assert seating_problems(seating, players, SWISS) == []
        history.append(seating)
    pairs = [frozenset(t) for s in history for t in s.tables]
    assert len(set(pairs)) == len(pairs) == 28


def test_the_bye_goes_to_the_lowest_ranked_player_without_one():
    players = names(5)
    first = Seating((("P001", "P002"), ("P003", "P004")), bye="P005")
    second = seat_next_round(players, [first], SWISS)
    assert second.bye == "P004"


def test_drawn_seating_redraws_each_round():
    drawn = CLUB.replace(seating="drawn")
    players = names(12)
    first = seat_first_round(players, drawn, seed=3)
    second = seat_next_round(players, [first], drawn, seed=3)
    assert second != first and seating_problems(second, players, drawn) == []
    assert second == seat_next_round(players, [first], drawn, seed=3)


def test_seating_problems_names_every_problem():
    players = ["A", "B", "C", "D", "E", "F", "G"]
    bad = Seating((("A", "B", "C", "A"), ("E", "F"), ("Z", "G", "E")))
    assert seating_problems(bad, players, CLUB) == [
        "A is seated 2 times", "E is seated 2 times", "Z is seated but not in the tournament",
        "D has no seat", "table 2 has 2 players; tables seat 3 or 4"]
    with pytest.raises(ValueError, match="'A' is listed 2 times"):
        seat_first_round(["A", "A", "B"], CLUB, seed=1)


def test_two_hundred_players_are_seated_quickly():
    players = names(200)
    history = [seat_first_round(players, CLUB, seed=1)]
    start = time.perf_counter()
    seating = seat_next_round(players, history, CLUB)
    elapsed = time.perf_counter() - start
    assert seating_problems(seating, players, CLUB) == []
    assert repeat_count(seating, history) == 0
    assert elapsed < 10  # a generous ceiling on a shared 2-core machine
