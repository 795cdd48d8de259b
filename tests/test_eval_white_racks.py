"""bench.eval_white_racks scores a rack reading the way the issue scores the real photos:
tile F1 over the stand's tiles whose number shows, a refused photo scoring none."""

import numpy as np
import pytest

pytest.importorskip("PIL")

from bench.eval_white_racks import main, score_photo, summary  # noqa: E402
from training.render3d.scene import _labelled, original_edition, render_depth_scene  # noqa: E402
from vision.game.rack import RackReading  # noqa: E402


@pytest.fixture(scope="module")
def scene():
    for seed in range(30):
        rng = np.random.default_rng(seed)
        s = render_depth_scene(rng, original_edition(rng), kind="rack", tiers=2, width=640,
                               height=360)
        wanted = [t for t in s.tiles if t.standing and _labelled(t)]
        hidden = [t for t in s.tiles if t.standing and not _labelled(t)]
        lying = [t for t in s.tiles if not t.standing]
        if len(wanted) >= 4 and hidden and lying:
            return s
    pytest.fail("no two-tier stand with a hidden number and a tile lying by in 30 seeds")


def _rack(tiles, codes) -> RackReading:
    from tests.table_helpers import detections_from

    found = detections_from(codes, [t.visible for t in tiles])
    return RackReading(found, [list(range(len(tiles)))])


def test_every_stand_tile_read_right_scores_all(scene):
    wanted = [t for t in scene.tiles if t.standing and _labelled(t)]
    row = score_photo(scene, _rack(wanted, [t.code for t in wanted]))
    assert row == {"tiles": len(wanted), "counted": len(wanted), "right": len(wanted),
                   "false": 0, "missed": 0}


def test_a_misread_a_lying_tile_and_a_hidden_number_count_as_they_should(scene):
    wanted = [t for t in scene.tiles if t.standing and _labelled(t)]
    hidden = next(t for t in scene.tiles if t.standing and not _labelled(t))
    lying = next(t for t in scene.tiles if not t.standing)
    wrong = "J" if wanted[0].code != "J" else "K1"
    codes = [wrong] + [t.code for t in wanted[1:]] + ["K2", "K3"]
    row = score_photo(scene, _rack(wanted + [hidden, lying], codes))
    # the misread is one false and one missed; the tile lying by counted is false; the
    # standing tile whose number is hidden is neither
    assert row["right"] == len(wanted) - 1 and row["missed"] == 1 and row["false"] == 2


def test_a_refused_photo_scores_none_of_its_tiles():
    rows = [{"tiles": 10, "counted": 10, "right": 10, "false": 0, "missed": 0,
             "refused": None},
            {"tiles": 10, "counted": 0, "right": 0, "false": 0, "missed": 10,
             "refused": "too blurred: hold the phone still and take it again"}]
    s = summary(rows)
    assert s["refused"] == 1 and s["recall"] == 0.5 and s["precision"] == 1.0
    assert s["f1"] == pytest.approx(2 / 3)


def test_a_count_under_one_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["--photos", "0"])
    assert ended.value.code == 2 and "--photos must be at least 1" in capsys.readouterr().err


def test_a_phone_held_upright_frames_the_same_stand_across_its_width():
    # `--portrait`: the same seed draws the same stand; the photo is as tall as the
    # landscape one is wide, and the stand fits across it, its tiles as many pixels as
    # the landscape's scaled to that width (2604 / 4624 = 0.56), not cut at the sides
    from vision.recognition.geometry import tile_frames

    def standing(width, height):
        rng = np.random.default_rng(700_000)
        s = render_depth_scene(rng, original_edition(rng), kind="rack", width=width,
                               height=height, effects=False)
        assert s.image.shape[:2] == (height, width)
        tiles = [t for t in s.tiles if t.standing]
        return tiles, float(np.median(tile_frames(np.stack([t.quad for t in tiles]))[4]))

    wide, wide_height = standing(1156, 651)  # a quarter of 4624 x 2604: the same framing
    tall, tall_height = standing(651, 1156)
    assert [t.code for t in tall] == [t.code for t in wide]
    assert sum(_labelled(t) for t in tall) >= 0.9 * sum(_labelled(t) for t in wide)
    assert 0.45 <= tall_height / wide_height <= 0.75
