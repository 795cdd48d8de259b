"""Grouping tiles into sets: rendered tables with known sets, and the real photos' labels."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from bench.synth_tables import MODES, synth_table
from tests.table_helpers import row
from vision.game.layout import group_lines, upright_from_axis
from vision.recognition.settings import REPO_ROOT


def _score(table, layout):
    pred = {tuple(s) for s in layout.sets}
    right = sum(tuple(s) in pred for s in table.sets)
    whole = pred == {tuple(s) for s in table.sets} and sorted(layout.loose) == table.loose
    return right, whole


def test_empty_and_single():
    assert group_lines(np.zeros((0, 4, 2))).sets == []
    one = group_lines(np.array(row(["R1"])))
    assert one.sets == [] and one.loose == [0]


def test_row_is_ordered_left_to_right_whatever_the_input_order():
    quads = row(["R1", "R2", "R3", "R4"])
    order = [2, 0, 3, 1]
    layout = group_lines(np.array([quads[k] for k in order]))
    assert [[order[i] for i in s] for s in layout.sets] == [[0, 1, 2, 3]]


@pytest.mark.parametrize("angle_deg", [0, 30, 90, 135, 180, 250])
def test_rotated_set_reads_along_the_tiles(angle_deg):
    quads = row(["K5", "K6", "K7"], x=400, y=400, angle=math.radians(angle_deg))
    assert group_lines(np.array(quads)).sets == [[0, 1, 2]]


def test_two_sets_end_to_end_split_at_a_gap_of_a_tile():
    quads = row(["R1", "R2", "R3"]) + row(["K5", "K6", "K7"], x=100 + 3 * 42 + 30)
    assert group_lines(np.array(quads)).sets == [[0, 1, 2], [3, 4, 5]]


def test_rows_stacked_close_stay_apart():
    h = 40 / 0.72
    quads = row(["R1", "R2", "R3"]) + row(["K1", "R1", "B1"], y=100 + h + 3)
    assert group_lines(np.array(quads)).sets == [[0, 1, 2], [3, 4, 5]]


def test_upside_down_tile_in_a_run_keeps_the_order():
    quads = row(["B3", "B4", "B5", "B6"])
    quads[1] = np.roll(quads[1], 2, axis=0)
    assert group_lines(np.array(quads)).sets == [[0, 1, 2, 3]]


def test_loose_pair_far_apart_is_loose():
    quads = row(["R1"]) + row(["R2"], x=300)
    layout = group_lines(np.array(quads))
    assert layout.sets == [] and layout.loose == [0, 1]


@pytest.mark.parametrize("mode", MODES)
def test_rendered_tables_grouped_right(mode):
    right = total = whole = 0
    for seed in range(15):
        table = synth_table(np.random.default_rng(seed), mode=mode)
        r, w = _score(table, group_lines(table.quads))
        right, total, whole = right + r, total + len(table.sets), whole + w
    assert right / total >= 0.99
    assert whole >= 14


def test_oblique_and_noisy_tables():
    right = total = 0
    for seed in range(20):
        table = synth_table(np.random.default_rng(100 + seed), oblique=0.5, noise=0.035)
        r, _ = _score(table, group_lines(table.quads))
        right, total = right + r, total + len(table.sets)
    assert right / total >= 0.99


def test_valid_photos_sets_from_labels(real_photos_dir):
    from training.real_data import load_split, oriented_quad

    truth = json.loads((REPO_ROOT / "bench" / "valid_sets.json").read_text())
    photos = {p.key: p for p in load_split("valid", real_photos_dir)}
    right = total = 0
    for key, item in truth["photos"].items():
        photo = photos[key]
        up = item.get("up", [0, -1])
        quads = np.array([upright_from_axis(oriented_quad(t.polygon), up) for t in photo.tiles])
        layout = group_lines(quads)
        pred = {tuple(s) for s in layout.sets}
        right += sum(tuple(s) in pred for s in item["sets"])
        total += len(item["sets"])
        assert sorted(layout.loose) == sorted(item["loose"]), key
    assert right / total >= 0.95


def test_box_drawn_half_into_its_neighbour_still_joins_the_line():
    # The detector sometimes shifts a box 0.45 tile widths into the next tile.
    quads = row(["R1", "R2", "R3", "R4"])
    quads[3] = quads[3] - np.array([0.45 * 40, 0.0])
    assert group_lines(np.array(quads)).sets == [[0, 1, 2, 3]]


def test_boxes_drawn_small_on_a_steep_view_still_join():
    # Tiles 2 px apart whose boxes came out 30 % too narrow: a measured gap of 0.5 w.
    quads = row(["K8", "K9", "K10", "K11"])
    shrunk = [q.mean(axis=0) + (q - q.mean(axis=0)) * np.array([0.7, 1.0]) for q in quads]
    assert group_lines(np.array(shrunk)).sets == [[0, 1, 2, 3]]


@pytest.mark.parametrize(("gap_w", "is_set"), [(0.05, True), (0.22, True), (0.35, False)])
def test_a_pair_is_a_set_only_when_its_tiles_touch(gap_w, is_set):
    quads = row(["B4", "B5"], gap=gap_w * 40)
    assert (group_lines(np.array(quads)).sets == [[0, 1]]) is is_set


def test_sets_in_one_row_three_quarters_of_a_tile_apart_stay_apart():
    quads = row(["R1", "R2", "R3"]) + row(["K5", "K6", "K7"], x=100 + 3 * 42 + 28)
    assert group_lines(np.array(quads)).sets == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("elevation", [50, 30])
def test_an_oblique_photo_is_grouped_on_the_table_plane(elevation):
    from bench.eval_geometry import pinhole

    table = synth_table(np.random.default_rng(7), oblique=0.0, noise=0.0)
    photo = pinhole(table.plane_quads, elevation, yaw=0.3)
    layout = group_lines(photo)
    assert layout.plane is not None and layout.plane.tilt > 1.2
    assert sorted(map(tuple, layout.sets)) == sorted(map(tuple, table.sets))
    assert sorted(layout.loose) == table.loose


def test_a_photo_from_above_is_grouped_as_it_is():
    table = synth_table(np.random.default_rng(8), oblique=0.0)
    assert group_lines(table.quads).plane is None


def _link_candidates_pair_by_pair(corners, max_gap):
    """The neighbour pairs as first written, one pair at a time in Python."""
    from vision.game.layout import (
        MAX_ACROSS,
        MAX_ANGLE_DEG,
        MAX_OVERLAP,
        MAX_SIZE_RATIO,
        tile_frames,
    )

    centres, right, _down, widths, heights = tile_frames(corners)
    d = centres[None, :, :] - centres[:, None, :]
    along = np.einsum("ijk,ik->ij", d, right)
    perp = np.stack([-right[:, 1], right[:, 0]], axis=1)
    across = np.einsum("ijk,ik->ij", d, perp)
    cos_axes = np.abs(right @ right.T)
    w_mean = (widths[:, None] + widths[None, :]) / 2
    h_mean = (heights[:, None] + heights[None, :]) / 2
    gap = (np.abs(along) - w_mean) / np.maximum(w_mean, 1e-9)
    across_rel = np.abs(across) / np.maximum(h_mean, 1e-9)
    size_ratio = np.maximum(heights[:, None], heights[None, :]) / np.maximum(
        np.minimum(heights[:, None], heights[None, :]), 1e-9)
    ok = ((gap <= max_gap) & (gap >= -MAX_OVERLAP) & (across_rel <= MAX_ACROSS)
          & (cos_axes >= np.cos(np.radians(MAX_ANGLE_DEG))) & (size_ratio <= MAX_SIZE_RATIO))
    ok = ok & ok.T
    out = []
    for i, j in zip(*np.nonzero(np.triu(ok, 1)), strict=True):
        i, j = int(i), int(j)
        g = max(gap[i, j], gap[j, i])
        a = max(across_rel[i, j], across_rel[j, i])
        cost = max(g, 0.0) + 0.5 * max(-g, 0.0) + a + 5.0 * (1.0 - cos_axes[i, j])
        out.append((float(cost), i, 1 if along[i, j] > 0 else -1, j,
                    1 if along[j, i] > 0 else -1, float(g)))
    return sorted(out)


@pytest.mark.parametrize("seed", range(12))
def test_neighbour_pairs_all_at_once_are_the_pairs_one_at_a_time(seed):
    from vision.game.layout import MAX_GAP, _link_candidates

    mode = MODES[seed % len(MODES)]
    table = synth_table(np.random.default_rng(500 + seed), mode=mode)
    corners = np.asarray(table.quads, np.float64)
    assert _link_candidates(corners, MAX_GAP) == _link_candidates_pair_by_pair(corners, MAX_GAP)
