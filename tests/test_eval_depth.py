"""bench.eval_depth counts what a reader finds and reads on rendered stands."""

import numpy as np
import pytest

pytest.importorskip("PIL")

from bench.eval_depth import report, score  # noqa: E402
from training.render3d.scene import render_depth_scene  # noqa: E402
from vision.recognition.plane_view import points_in_quads  # noqa: E402


class _Reader:
    """Finds each labelled tile as its visible quad; reads it via `read`; adds `more`
    (points, each found as a small box round it)."""

    def __init__(self, scene, read=lambda code: code, more=()):
        self.scene, self.read_as, self.more = scene, read, list(more)

    def read(self, image):
        from tests.table_helpers import detections_from

        labels = self.scene.labels
        boxes = [np.asarray(p, np.float64) + [[-3, -4], [3, -4], [3, 4], [-3, 4]]
                 for p in self.more]
        quads = [q for _c, q in labels] + boxes
        codes = [self.read_as(c) for c, _q in labels] + ["K1"] * len(self.more)
        return detections_from(codes, quads)


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


def test_the_product_counts_the_stands_tiles_and_leaves_out_those_lying_by():
    from training.render3d.scene import _labelled

    for seed in range(40):  # a stand with a labelled tile lying beside or behind it
        s = render_depth_scene(np.random.default_rng(seed), kind="rack", width=640, height=360)
        labelled = [t for t in s.tiles if _labelled(t)]
        if len(labelled) >= 5 and any(not t.standing for t in labelled):
            break
    else:
        pytest.fail("no rendered stand with a labelled tile lying by in 40 seeds")
    r = score(_Reader(s), [s])
    stand = sum(t.standing for t in labelled)
    assert r["rack_photos"] == 1 and r["on_rack"] == r["product_tiles"] == stand
    assert r["on_rack_found"] == r["on_rack_read_right"] == r["product_read_right"] == stand
    assert r["lying_left_out"] == len(labelled) - stand and r["lying_counted"] == 0
    assert "product, rack scenes" in report({"x": r}, 1)
