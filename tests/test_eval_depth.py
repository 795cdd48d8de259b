"""bench.eval_depth counts what a reader finds and reads on rendered stands."""

import numpy as np
import pytest

pytest.importorskip("PIL")

from bench.eval_depth import report, score  # noqa: E402
from training.render3d.scene import render_depth_scene  # noqa: E402
from vision.recognition.plane_view import points_in_quads  # noqa: E402


class _Found:
    def __init__(self, centres, codes):
        self.centers = np.asarray(centres, np.float32).reshape(-1, 2)
        self.codes = list(codes)
        self.detector_scores = np.ones(len(self.codes), np.float32)

    def __len__(self):
        return len(self.codes)


class _Reader:
    """Finds each labelled tile at its visible centre; reads it via `read`; adds `more`."""

    def __init__(self, scene, read=lambda code: code, more=()):
        self.scene, self.read_as, self.more = scene, read, list(more)

    def read(self, image):
        labels = self.scene.labels
        centres = [q.mean(0) for _c, q in labels] + self.more
        codes = [self.read_as(c) for c, _q in labels] + ["K1"] * len(self.more)
        return _Found(centres, codes)


@pytest.fixture(scope="module")
def scene():
    for seed in range(20):
        s = render_depth_scene(np.random.default_rng(seed), kind="rack", width=480, height=270)
        if len(s.labels) >= 5 and s.decoys.any():
            return s
    pytest.fail("no rendered stand with tiles and a hard negative in 20 seeds")


def test_a_perfect_reader_scores_every_tile(scene):
    r = score(_Reader(scene), [scene])
    assert r["tiles"] == len(scene.labels) == r["found"] == r["read_right"]
    assert r["extra"] == r["false_finds"] == 0
    assert "found 100.00 %" in report({"x": r}, 1)


def test_misreads_and_finds_on_a_logo_are_counted(scene):
    ys, xs = np.nonzero(scene.decoys)
    points = np.stack([xs, ys], 1).astype(np.float32)
    quads = np.stack([t.quad for t in scene.tiles] + [t.visible for t in scene.tiles])
    free = ~points_in_quads(points, quads).any(axis=1)  # a logo pixel on no tile at all
    assert free.any()
    on_logo = points[np.nonzero(free)[0][free.sum() // 2]].tolist()
    r = score(_Reader(scene, read=lambda code: "J" if code != "J" else "K1", more=[on_logo]),
              [scene])
    assert r["found"] == r["tiles"] and r["read_right"] == 0
    assert r["extra"] == 1
    assert r["false_finds"] == r["on_hard_negatives"] == 1


def test_a_six_read_as_a_nine_is_counted_as_turned(scene):
    def turned(code):  # the tile taken as turned round: its 6 reads 9 and its 9 reads 6
        if code[1:] in ("6", "9"):
            return code[0] + ("9" if code[1:] == "6" else "6")
        return "J" if code != "J" else "K1"  # any other misread

    r = score(_Reader(scene, read=turned), [scene])
    six_nines = sum(code[1:] in ("6", "9") for code, _q in scene.labels)
    assert six_nines >= 1  # the stand drawn holds a 6 or a 9, so the count means something
    assert r["read_right"] == 0 and r["found"] == r["tiles"]
    assert r["misread_turned"] == six_nines
    assert f"of the same colour (taken as turned round): {six_nines}" in report({"x": r}, 1)


def test_another_colour_or_number_is_not_a_turn():
    from bench.eval_depth import _turned_six_nine

    assert _turned_six_nine("B6", "B9") and _turned_six_nine("K9", "K6")
    assert not _turned_six_nine("B6", "R9")
    assert not _turned_six_nine("B6", "B8")
    assert not _turned_six_nine("J", "K6")
