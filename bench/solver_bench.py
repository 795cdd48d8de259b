"""The arrangement solver on provably unsolvable tables with jokers: `python -m bench.solver_bench`

Tables: random draws of 49-86 tiles from the original box (1 or 2 of them jokers, copy
counts within the box), seeded, kept when `referee.arrange` proves them impossible: the
solver must then exhaust its search. Each table is timed for our solver and, right after
it, for `rummikub-solver` (PyPI, a MILP through cvxpy on scipy's HiGHS; the optional
`bench` extra) when it is installed, once each or the median of `--runs`; the ratio
theirs/ours per table is the figure: the goal is ours faster on every table. Both first
run 30 tables of another seed untimed (start-up: our per-colour option caches, their
model build). The other solver allows jokers left over ("free jokers"), so on a table
where only the jokers have nowhere to go it finds an answer; such tables are counted apart.

Times are also given as a ratio to a floor measured in the same run (bench.floor: JPEG
decode + one pass of both models), since absolute times on a shared machine move 2-4x.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time

from referee import JOKER, arrange, edition
from referee.tiles import Tile

# Tables of another seed each solver runs untimed first.
WARM_UP = 30


def unsolvable_tables(seed: int, count: int, low: int = 49, high: int = 86,
                      max_jokers: int = 2) -> list[list[Tile]]:
    """`count` seeded random tables of `low`-`high` tiles, with 1 to `max_jokers` jokers,
    that cannot be arranged; drawn from the original box so no tile has a third copy."""
    rules = edition("original")
    box = [t for t in rules.all_tiles() if not t.is_joker]
    rng = random.Random(seed)
    tables = []
    while len(tables) < count:
        size = rng.randint(low, high)
        jokers = rng.randint(1, max_jokers)
        tiles = rng.sample(box, size - jokers) + [JOKER] * jokers
        rng.shuffle(tiles)
        if arrange(tiles, rules) is None:
            tables.append(tiles)
    return tables


def _once(fn, *args) -> tuple[float, object]:
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn(*args)
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def _their_solver():
    """A function timing rummikub-solver on one table, or a string saying why not."""
    try:
        from rummikub_solver import RuleSet
    except ImportError:
        return "rummikub-solver not installed (pip install -e '.[bench]')"
    rules = RuleSet()
    by_name = {}
    for tile in rules.tiles:
        text = str(tile).strip("<>").split(" (")[0]  # "Blue 2", "Joker"
        by_name[text] = tile
    words = {"K": "Black", "R": "Red", "B": "Blue", "O": "Orange"}

    def solve(tiles: list[Tile]):
        state = rules.new_game()
        state.add_table(*[by_name["Joker" if t.is_joker else f"{words[t.color.value]} {t.number}"]
                          for t in tiles])
        return rules.arrange_table(state)

    return solve


def _warm_up(solve, tables) -> None:
    """Untimed runs before the timed ones: our solver's per-colour option tables (cached
    as they are first met) and the other solver's model build are start-up costs."""
    for tiles in tables:
        solve(tiles)


def meld_times(seed: int, sizes=(14, 20, 30), count: int = 30) -> list[tuple[int, list[float]]]:
    """best_initial_meld on `count` seeded random racks of each size (from the whole box)."""
    from referee.meld import best_initial_meld

    box = edition("original").all_tiles()
    rng = random.Random(seed)
    rows = []
    for size in sizes:
        racks = [rng.sample(box, size) for _ in range(count)]
        rows.append((size, [_once(best_initial_meld, rack)[0] for rack in racks]))
    return rows


def search_states(tables) -> list[int]:
    """Search states each table costs (both directions and the bounds' states together):
    unlike times, the same on any machine, so settings can be compared exactly."""
    import referee.solver as solver

    made = []
    plain_init = solver._Search.__init__

    def counting_init(self, *args, **kwargs):
        plain_init(self, *args, **kwargs)
        made.append(self)

    solver._Search.__init__ = counting_init
    try:
        per_table = []
        for tiles in tables:
            made.clear()
            arrange(tiles)
            per_table.append(sum(search.states for search in made))
        return per_table
    finally:
        solver._Search.__init__ = plain_init


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=22, help="random seed (default 22)")
    parser.add_argument("--count", type=int, default=300, help="tables (default 300)")
    parser.add_argument("--runs", type=int, default=1,
                        help="runs per table and solver, the median counts (default 1)")
    parser.add_argument("--no-compare", action="store_true", help="skip rummikub-solver")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor (no models)")
    parser.add_argument("--states", action="store_true",
                        help="only count search states per table (worst 4 and the sum)")
    args = parser.parse_args(argv)
    rules = edition("original")
    if args.states:
        per_table = sorted(search_states(unsolvable_tables(args.seed, args.count)))
        print(f"seed {args.seed}: search states, worst 4 {per_table[-4:]}, sum {sum(per_table)}")
        return 0
    floor_before = floor_note = None
    if not args.no_floor:
        from bench.floor import try_floor_ms

        floor_before, floor_note = try_floor_ms()
    tables = unsolvable_tables(args.seed, args.count)
    warm = unsolvable_tables(args.seed + 1000, WARM_UP)
    _warm_up(lambda tiles: arrange(tiles, rules), warm)
    theirs = None if args.no_compare else _their_solver()
    compare = callable(theirs)
    if compare:
        _warm_up(theirs, warm)
    # Per table, ours and theirs back to back (run by run), so both meet the same load on
    # the shared machine; a whole pass of one and then of the other did not.
    ours, their_times, free_joker_answers = [], [], 0
    for tiles in tables:
        our_runs, their_runs = [], []
        for _ in range(args.runs):
            seconds, result = _once(arrange, tiles, rules)
            assert result is None, "a table drawn as unsolvable was arranged"
            our_runs.append(seconds)
            if compare:
                seconds, answer = _once(theirs, tiles)
                their_runs.append(seconds)
        ours.append(statistics.median(our_runs))
        if compare:
            their_times.append(statistics.median(their_runs))
            free_joker_answers += answer is not None
    floor = None
    if floor_before:
        from bench.floor import try_floor_ms

        floor = statistics.median([floor_before, try_floor_ms()[0]])

    def ms(values):
        return f"median {statistics.median(values) * 1e3:8.2f} ms  max {max(values) * 1e3:8.2f} ms"

    sizes = [len(t) for t in tables]
    timing = "one run" if args.runs == 1 else f"the median of {args.runs} runs"
    print(f"solver bench: seed {args.seed}, {len(tables)} unsolvable tables of {min(sizes)}-"
          f"{max(sizes)} tiles (1-2 jokers), {timing} each, python {sys.version.split()[0]}")
    if floor:
        print(f"{floor_note}: {floor:.1f} ms (median of before and after)")
    print(f"ours (referee.arrange):  {ms(ours)}" + (
        f"  (max {max(ours) * 1e3 / floor:.2f}x floor)" if floor else ""))
    for size, seconds in meld_times(args.seed):
        print(f"best_initial_meld, {len(seconds)} random racks of {size} tiles: {ms(seconds)}")
    if not compare:
        print(f"comparison skipped: {theirs or '--no-compare'}")
        return 0
    ratios = [t / o for t, o in zip(their_times, ours, strict=True)]
    slower = sum(r < 1 for r in ratios)
    print(f"rummikub-solver (MILP):  {ms(their_times)}")
    print(f"ratio theirs/ours per table: min {min(ratios):.2f}x  median "
          f"{statistics.median(ratios):.1f}x  max {max(ratios):.0f}x; ours slower on "
          f"{slower} of {len(tables)}")
    print(f"tables it answers with jokers left free (no answer under our rules): "
          f"{free_joker_answers}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
