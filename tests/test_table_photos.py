"""Rendered table photos read end to end: JPEG -> models -> sets, against their true sets.

The photos are painted by `bench.synth_tables.render_table` (needs Pillow, in the dev
extra), so every tile's place and every set is known exactly. These seeds are among those
`make eval` reports on, never used to tune the layout.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.eval_table import RENDERED_SEEDS, compare, match_to_labels
from bench.synth_tables import jpeg_roundtrip, render_table, synth_table
from referee import edition
from vision.game.table import judge_table
from vision.recognition.pipeline import TileReader

pytest.importorskip("PIL")


@pytest.fixture(scope="module")
def reader():
    return TileReader.load()


def _read(reader, seed):
    rng = np.random.default_rng(seed)
    table = synth_table(rng, flip_p=0.0)
    photo = jpeg_roundtrip(render_table(rng, table))
    reading = judge_table(reader.read(photo), edition("original"))
    to_truth = match_to_labels(reading.detections.centers, list(table.true_quads()))
    sets = [[to_truth.get(i, -1 - i) for i in s] for s in reading.sets]
    loose = [to_truth.get(i, -1 - i) for i in reading.loose]
    return table, reading, sets, loose


def test_rendered_table_photos_are_grouped_into_their_true_sets(reader):
    right = total = whole = 0
    for seed in range(RENDERED_SEEDS, RENDERED_SEEDS + 12):
        table, _reading, sets, loose = _read(reader, seed)
        found, all_right = compare(table.sets, table.loose, sets, loose)
        right, total, whole = right + found, total + len(table.sets), whole + all_right
    assert total >= 60
    assert right / total >= 0.97, f"{right}/{total} sets grouped right"
    assert whole >= 10


def test_a_rendered_table_reads_as_its_tiles_in_reading_order(reader):
    table, reading, sets, _loose = _read(reader, RENDERED_SEEDS)
    codes = reading.detections.codes
    # Same tiles, in the order a player reads them, and read as what they are.
    assert {tuple(s) for s in table.sets} <= {tuple(s) for s in sets}
    read_codes = {tuple(codes[i] for i in s) for s in reading.sets}
    assert {tuple(table.codes[k] for k in s) for s in table.sets} <= read_codes


def test_rendered_turns_are_judged_from_two_photos(reader):
    from collections import Counter

    from bench.eval_table import TURN_SEEDS
    from bench.synth_tables import synth_turn
    from vision.game.turn import judge_turn

    def read(rng, table):
        return reader.read(jpeg_roundtrip(render_table(rng, table)))

    for seed in range(TURN_SEEDS, TURN_SEEDS + 4):
        rng = np.random.default_rng(seed)
        turn = synth_turn(rng)
        reading = judge_turn(read(rng, turn.before), read(rng, turn.after),
                             rules=edition("original"))
        codes = reading.after.detections.codes
        assert Counter(codes[i] for i in reading.played) == \
            Counter(turn.after.codes[i] for i in turn.played), seed
        assert reading.left == [], seed


def test_a_synthetic_turn_adds_one_set_and_keeps_every_tile_in_the_picture():
    from bench.synth_tables import synth_turn

    for seed in range(20):
        turn = synth_turn(np.random.default_rng(seed))
        b, a = turn.before, turn.after
        assert a.codes[: len(b.codes)] == b.codes and a.sets[:-1] == b.sets
        assert turn.played == a.sets[-1]
        assert (a.quads >= 0).all() and (a.quads[..., 0] <= a.width).all()
        assert (a.quads[..., 1] <= a.height).all()
        assert not np.allclose(a.homography, b.homography)  # the camera moved
