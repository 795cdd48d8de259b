"""Could you have melded: the best initial meld in a rack, checked against brute force."""

import random
import subprocess
import sys
from functools import cache

import pytest

from referee import JOKER, check_initial_meld, check_set, edition, parse_tiles, score_round
from referee.meld import best_initial_meld
from referee.scoring import rack_penalty

ORIGINAL = edition()


def best_block_value(block, rules):
    """The most a block is worth as one valid set: jokers tried at every place among the
    sorted real tiles (check_set reads jokers by place), or None if no order is valid."""
    reals = sorted(t for t in block if not t.is_joker)
    jokers = len(block) - len(reals)
    best = None

    def place(row, left):
        nonlocal best
        if not left:
            verdict = check_set(row, rules)
            if verdict.valid and (best is None or verdict.value > best):
                best = verdict.value
            return
        for i in range(len(row) + 1):
            place(row[:i] + [JOKER] + row[i:], left - 1)

    place(reals, jokers)
    return best


def brute_force_best(rack, rules):
    """Every way to split some of the rack into blocks of 3+, each judged by check_set."""
    @cache
    def best(tiles):
        if len(tiles) < 3:
            return 0
        first, rest = tiles[0], tiles[1:]
        value = best(rest)  # the first tile stays on the rack
        seen = set()
        for size in range(2, len(rest) + 1):
            for mask in _subsets(len(rest), size):
                others = tuple(rest[i] for i in mask)
                if others in seen:
                    continue
                seen.add(others)
                block_value = best_block_value([first, *others], rules)
                if block_value is None:
                    continue
                remaining = tuple(t for i, t in enumerate(rest) if i not in mask)
                value = max(value, block_value + best(remaining))
        return value

    return best(tuple(sorted(rack)))


def _subsets(n, size):
    from itertools import combinations

    return combinations(range(n), size)


@pytest.mark.parametrize(
    ("codes", "total"),
    [("R10 R11 R12", 33), ("R12 R13 J", 36), ("K5 R5 B5 O5 J", 20), ("R1 R2 R4", 0),
     ("R3 R4 R5 R6 R7 J K9 B9 O9", 61), ("R1 R2 R3 R1 R2 R3", 12),
     # One R5 and a joker: the joker is the second R5, so two runs share the number.
     ("R3 R4 R5 R6 R7 J", 33)],
)
def test_worked_racks(codes, total):
    meld = best_initial_meld(codes)
    assert meld.total == total
    assert sum(check_set(s).value for s in meld.sets) == total


def test_a_meld_found_is_a_legal_initial_meld_of_tiles_from_the_rack():
    rack = parse_tiles("K1 K2 K3 K4 R4 B4 J R9 R10 R11 R11 R12 R13")
    meld = best_initial_meld(rack)
    assert meld.reaches and check_initial_meld(meld.sets).legal
    laid = sorted(t for s in meld.sets for t in s)
    for tile in set(laid):
        assert laid.count(tile) <= rack.count(tile)


def test_a_rack_below_the_minimum_is_proved_so():
    meld = best_initial_meld("K1 K2 K3 R6 B6 J K9")
    assert not meld.reaches and meld.total == 24  # K1-K3 and R6 B6 J
    assert "no: the best is 24 points" in meld.summary()


@pytest.mark.parametrize("seed", range(6))
def test_best_meld_equals_brute_force_on_random_small_racks(seed):
    rng = random.Random(seed)
    # A narrow box (numbers 8-13 and both jokers) so small racks hold many sets.
    box = [t for t in ORIGINAL.all_tiles() if t.is_joker or t.number >= 8]
    for _ in range(25):
        rack = rng.sample(box, rng.randint(3, 8))
        meld = best_initial_meld(rack)
        assert meld.total == brute_force_best(rack, ORIGINAL), rack
        assert sum(check_set(s).value for s in meld.sets) == meld.total
        laid = sorted(t for s in meld.sets for t in s)
        assert all(laid.count(t) <= rack.count(t) for t in laid)


def test_four_jokers_can_share_sets_with_every_real_tile():
    rummy = edition("rummy")
    rack = parse_tiles("R1 R2 R3 J J J")
    assert best_initial_meld(rack, rummy).total == brute_force_best(rack, rummy)


def test_no_meld_penalty_by_edition():
    mso = edition("mso")
    assert (mso.rack_joker_penalty, mso.no_meld_penalty,
            mso.no_meld_penalty_if_meld_possible) == (50, 100, 200)
    assert rack_penalty(parse_tiles("R5 J"), mso) == 55
    assert rack_penalty(parse_tiles("R5 J"), mso, melded=False) == 100
    assert rack_penalty(parse_tiles("R10 R11 R12 K1"), mso, melded=False) == 200
    # Editions without it charge the rack as usual.
    assert rack_penalty(parse_tiles("R10 R11 R12"), ORIGINAL, melded=False) == 33


def test_score_round_charges_players_who_never_melded():
    mso = edition("mso")
    racks = {"A": [], "B": parse_tiles("R1 R2"), "C": parse_tiles("K11 K12 K13")}
    result = score_round(racks, "A", mso, never_melded=["B", "C"])
    assert result.scores == {"A": 300, "B": -100, "C": -200}
    with pytest.raises(ValueError, match="made the initial meld"):
        score_round(racks, "A", mso, never_melded=["A"])
    with pytest.raises(ValueError, match="did not play"):
        score_round(racks, "A", mso, never_melded=["Z"])


def run_cli(*args):
    return subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_arrange_meld():
    done = run_cli("arrange", "--meld", "R10 R11 J K3 K4")
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["R10 R11 J: valid run, J is R12, 33 points",
                                        "initial meld: yes: 33 points in 1 set "
                                        "(at least 30 needed)"]
    done = run_cli("arrange", "--meld", "R1 R2 R3 K5", "--json")
    assert done.returncode == 1
    assert '"reaches": false, "total": 6' in done.stdout
    done = run_cli("arrange", "--meld", "R1 X2")
    assert done.returncode == 2 and "bad tile code 'X2'" in done.stderr
    assert "Traceback" not in done.stderr
