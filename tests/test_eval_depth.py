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
