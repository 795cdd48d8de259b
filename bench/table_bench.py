"""Time `scan` spends beyond recognition for a 54-tile table: grouping, refereeing, suggestion.

`python -m bench.table_bench` prints the median over many runs of `judge_table` (layout,
rules-aware re-reading, verdicts and, for an invalid table, the solver's suggestion) on
54 tiles with the referee's caches cleared before each run, as for a new photo.
Target: < 5 ms. Uses the labels of valid/rummy-36 (54 tiles in 16 sets) when the real
photos are there, else a synthetic 54-tile table. The rummy-36 table is not valid as laid,
and rightly so: the photo shows the run K8 K9 K10 K12 (no K11) and the pair B7 K7, so
every case of it runs the suggestion too; the bench names the invalid sets it found. Every time is also given as a ratio to
the floor of `bench.floor` (JPEG decode + one pass of both models on a 1000x750 photo),
measured before and after in the same run, since absolute times on a shared machine move.

A second part bounds the worst case: random draws of 54 and 80 tiles lying loose (so the
table is invalid and the suggestion's search runs), median and slowest time, with the
search capped at `vision.game.table.SUGGEST_MAX_STATES` as `scan` runs it, and uncapped.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

RUNS = 200


def _detections(codes, quads, uncertain_tiles=()):
    from vision.recognition.detections import TileDetections
    from vision.recognition.labels import TILE_CLASSES

    n = len(codes)
    probs = np.full((n, len(TILE_CLASSES)), 1e-4, np.float32)
    for i, code in enumerate(codes):
        probs[i, TILE_CLASSES.index(code)] = 1.0
    for i, other in uncertain_tiles:  # best reading wrong, truth second
        probs[i, TILE_CLASSES.index(other)] = 1.0
        probs[i, TILE_CLASSES.index(codes[i])] = 0.4
    probs /= probs.sum(axis=1, keepdims=True)
    return TileDetections(np.asarray(quads, np.float32), np.ones(n, np.float32), probs,
                          probs.argmax(axis=1).astype(np.int64),
                          uncertain=probs.max(axis=1) < 0.6)


def table_54():
    """(name, codes, upright quads) of a 54-tile table."""
    try:
        from training.real_data import load_split, oriented_quad
        from vision.game.layout import upright_from_axis

        photo = next(p for p in load_split("valid") if p.key == "rummy-36")
        quads = np.array([upright_from_axis(oriented_quad(t.polygon)) for t in photo.tiles])
        return "valid/rummy-36 labels", [t.code for t in photo.tiles], quads
    except (FileNotFoundError, StopIteration):
        from bench.synth_tables import synth_table

        for seed in range(1000):
            t = synth_table(np.random.default_rng(seed), n_sets=16, n_loose=0)
            if len(t.codes) >= 54:
                return f"synthetic seed {seed}", t.codes[:54], t.quads[:54]
        raise RuntimeError("no synthetic table of 54 tiles") from None


def _time(detections, rules, runs=RUNS) -> tuple[float, object]:
    from vision.game import table as T

    times, reading = [], None
    for _ in range(runs):
        T._verdict.cache_clear()
        start = time.perf_counter()
        reading = T.judge_table(detections, rules)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, reading


def main() -> None:
    from bench.floor import ratio, try_floor_ms
    from referee import DEFAULT_RULES

    floor_before, floor_note = try_floor_ms()
    name, codes, quads = table_54()
    rules = DEFAULT_RULES
    cases = [("as laid", _detections(codes, quads))]
    # Two misreads the rules must fix (best reading wrong, truth second).
    fixed_codes = list(codes)
    wrong = [(3, "R1"), (17, "O9")] if name.startswith("valid") else [(1, "K1")]
    cases.append(("2 misreads re-read", _detections(fixed_codes, quads, wrong)))
    # An invalid table, so the solver's suggestion runs too.
    broken = list(codes)
    broken[0], broken[-1] = broken[-1], broken[0]
    cases.append(("2 tiles swapped (suggestion)", _detections(broken, quads)))
    rows = []
    for label, det in cases:
        _time(det, rules, 5)  # warm imports
        rows.append((label, *_time(det, rules)))
    floor_after, _ = try_floor_ms()
    floor = statistics.median([floor_before, floor_after]) if floor_before else None
    print(f"table bench: {name}, {len(codes)} tiles, median of {RUNS} runs, caches cleared")
    print(f"{floor_note}: {floor:.1f} ms (median of before and after)" if floor else floor_note)
    print(f"{'case':<30} {'x floor':>8} {'ms':>7}  sets  valid  suggestion  warnings")
    for label, ms, reading in rows:
        print(f"{label:<30} {ratio(ms, floor):>8} {ms:7.2f}  {len(reading.sets):>4}  "
              f"{str(reading.table_valid):>5}  {str(reading.suggestion is not None):>10}  "
              f"{len(reading.warnings):>8}")
        invalid = invalid_sets(reading)
        if invalid:
            print(f"{'':<4}invalid as read: {'; '.join(invalid)}")
    print("target: < 5 ms")
    worst_case(rules, floor=floor)


def invalid_sets(reading) -> list[str]:
    """'K8 K9 K10 K12' for each set the table reading judged invalid."""
    codes = reading.detections.codes
    return [" ".join(codes[i] for i in ids)
            for ids, verdict in zip(reading.sets, reading.verdicts, strict=True)
            if not verdict.valid]


def worst_case(rules, draws: int = 300, floor: float | None = None) -> None:
    import random

    from bench.floor import ratio
    from vision.game import table as T

    box = [t.code() for t in rules.all_tiles()]
    cap = T.SUGGEST_MAX_STATES
    print(f"worst case: {draws} random draws lying loose (all invalid, the suggestion's search "
          f"runs), capped at {cap:,} states and uncapped")
    print(f"{'tiles':>5} {'cap':>8} {'median ms':>10} {'x floor':>8} {'max ms':>8} {'x floor':>8}"
          "  gave up")
    try:
        for n in (54, 80):
            for label, states in ((f"{cap:,}", cap), ("none", None)):
                T.SUGGEST_MAX_STATES = states
                rng = random.Random(3)  # the same draws with and without the cap
                times, gave_up = [], 0
                for _ in range(draws):
                    codes = rng.sample(box, n)
                    quads = [_loose_quad(k) for k in range(n)]  # every tile loose
                    ms, reading = _time(_detections(codes, quads), rules, 1)
                    times.append(ms)
                    gave_up += any(w.startswith("no suggestion") for w in reading.warnings)
                median = statistics.median(times)
                print(f"{n:>5} {label:>8} {median:10.2f} {ratio(median, floor):>8} "
                      f"{max(times):8.2f} {ratio(max(times), floor):>8}  {gave_up}")
    finally:
        T.SUGGEST_MAX_STATES = cap


def _loose_quad(k: int) -> np.ndarray:
    x, y = 60 + 90 * (k % 12), 60 + 110 * (k // 12)
    return np.array([[x, y], [x + 40, y], [x + 40, y + 55], [x, y + 55]], np.float32)


if __name__ == "__main__":
    main()
