"""The not-a-tile threshold kept under the rendered flat tiles too (training/calibrate.py)."""

from types import SimpleNamespace

import numpy as np
import pytest

from training import calibrate
from training.render3d.tiles import TileLabel
from vision.recognition.detections import TileDetections
from vision.recognition.labels import TILE_CLASSES


def _tile(x: float, standing: bool, number_visible: bool = True) -> TileLabel:
    quad = np.array([[x, 10], [x + 20, 10], [x + 20, 40], [x, 40]], np.float32)  # portrait
    return TileLabel("R7", quad, quad, quad, 1.0, number_visible, standing)


class FixedReader:
    """Reads every scene as detections at the given x centres with the given scores."""

    def __init__(self, finds: list[tuple[float, float]]):
        self.finds = finds
        self.reads = 0

    def read(self, image):
        self.reads += 1
        corners = np.array([[[x - 2, 23], [x + 2, 23], [x + 2, 27], [x - 2, 27]]
                            for x, _ in self.finds], np.float32)
        probs = np.zeros((len(self.finds), len(TILE_CLASSES)), np.float32)
        probs[:, 0] = 1.0
        return TileDetections(corners, np.array([s for _, s in self.finds], np.float32), probs,
                              np.zeros(len(self.finds), np.int64))


def _scene(tiles):
    return SimpleNamespace(image=np.zeros((60, 200, 3), np.uint8), tiles=tiles)


def test_flat_scores_are_those_of_found_lying_tiles_only():
    # a lying tile (x 0..20), a standing one (50..70), a lying one whose number is hidden
    # (100..120, not labelled), and a find on nothing at x 160
    scene = _scene([_tile(0, False), _tile(50, True), _tile(100, False, number_visible=False)])
    reader = FixedReader([(10, 0.3), (60, 0.9), (110, 0.05), (160, 0.01)])
    assert calibrate.flat_scores(reader, [scene]).tolist() == pytest.approx([0.3])


def test_a_scene_without_a_lying_tile_is_not_read():
    reader = FixedReader([(60, 0.9)])
    assert len(calibrate.flat_scores(reader, [_scene([_tile(50, True)])])) == 0
    assert reader.reads == 0


def test_threshold_is_the_lower_of_the_train_rule_and_the_flat_tiles(monkeypatch):
    true = np.array([0.6, 0.8, 0.9])
    monkeypatch.setattr(calibrate, "joint_scores", lambda reader, photos: (true, np.array([0.2])))
    monkeypatch.setattr(calibrate.TileReader, "load", classmethod(lambda cls, *a, **k: None))
    flat = np.linspace(0.2, 1.0, 21)  # 5th percentile 0.24
    monkeypatch.setattr(calibrate, "flat_scores", lambda reader, scenes: flat)

    alone = calibrate.calibrate("models", ["photo"])
    assert alone["reject_below"] == pytest.approx(0.45)
    assert "flat_tiles_found" not in alone and "train/ (1 photos)" in alone["chosen_on"]

    both = calibrate.calibrate("models", ["photo"], flat=["scene"] * 3)
    assert both["reject_below"] == pytest.approx(0.75 * 0.24)
    assert both["train_threshold"] == pytest.approx(0.45)
    assert both["flat_tiles_found"] == 21 and both["flat_tiles_dropped"] == 0
    assert both["train_false_finds_dropped"] == 0  # the false find 0.2 is now kept
    assert "3 rendered scenes" in both["chosen_on"]

    monkeypatch.setattr(calibrate, "flat_scores", lambda reader, scenes: flat + 1.0)
    surer = calibrate.calibrate("models", ["photo"], flat=["scene"])
    assert surer["reject_below"] == pytest.approx(0.45)  # the flat tiles never raise it


def test_flat_scenes_come_from_the_calibration_seeds_not_an_evaluation_bench():
    from bench import eval_depth
    from training.editions import HELD_OUT

    last_depth_seed = eval_depth.SEEDS + 1000 * len(HELD_OUT) * len(eval_depth.CELLS)
    assert calibrate.FLAT_SEEDS > last_depth_seed
    scene = calibrate.flat_scenes(1)[0]
    again = calibrate.flat_scenes(1)[0]
    assert np.array_equal(scene.image, again.image)


def test_a_negative_scene_count_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as stop:
        calibrate.main(["--flat-scenes", "-1"])
    assert stop.value.code == 2
    assert "--flat-scenes must be 0 or more" in capsys.readouterr().err
