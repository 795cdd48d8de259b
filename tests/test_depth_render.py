"""The renderer with depth: labels are what the photo shows of each tile."""

import math

import cv2
import numpy as np
import pytest

pytest.importorskip("PIL")  # the renderer is training-only (Pillow draws the numbers)

from training.editions import HELD_OUT, is_held_out  # noqa: E402
from training.render3d.camera import Camera, Painter  # noqa: E402
from training.render3d.scene import (  # noqa: E402
    _World,
    draw_block,
    original_edition,
    render_depth_scene,
)
from training.render3d.tiles import visible_label  # noqa: E402
from vision.recognition.labels import TILE_CLASSES  # noqa: E402

EDITION = HELD_OUT["white_modern_logo"]  # numbers high on the face


def _two_rows(rise: float, behind: float = 1.2, back_size: float = 1.0):
    """A tile standing on the table and a second one (`back_size` as big) `behind` cm
    behind it, `rise` cm higher, seen from 35 cm and 30 degrees up; returns (front label,
    back label)."""
    rng = np.random.default_rng(0)
    light = np.array([0.0, 1.0, -0.3]) / np.linalg.norm([0.0, 1.0, -0.3])
    world = _World(rng, EDITION, None, light)
    world.gloss = 0.0
    world.camera = Camera.look_at([1.35, 2.5, 0.5], 35, 30, 0, 0, 66, 640, 360)
    painter = Painter(world.camera, np.full((360, 640, 3), 90, np.float32))
    back = world.standing("R7", 0.0, rise, behind, math.radians(10))
    centre = back.face.mean(0)
    back.face = centre + (back.face - centre) * back_size
    front = world.standing("K5", 0.0, 0.0, 0.0, math.radians(10))
    for block in (back, front):  # far to near
        draw_block(painter, block, light, rng, 0.0, 5000 + block.face_id)
    return visible_label(painter, front), visible_label(painter, back)


def _inside(inner: np.ndarray, outer: np.ndarray, tol: float = 0.6) -> bool:
    outer = outer.reshape(-1, 1, 2).astype(np.float32)
    return all(cv2.pointPolygonTest(outer, (float(x), float(y)), True) >= -tol
               for x, y in inner)


def test_a_tile_wholly_behind_another_is_not_labelled():
    front, back = _two_rows(rise=0.0, back_size=0.7)
    assert front is not None and front.number_visible and front.visible_share > 0.95
    assert back is None, "nothing of the hidden tile's face shows: no label"


def test_a_partly_hidden_tile_keeps_its_visible_quad_inside_its_face():
    _front, back = _two_rows(rise=2.2)
    assert back is not None
    assert 0.2 < back.visible_share < 0.9
    assert _inside(back.visible, back.quad)
    area = cv2.contourArea(back.visible)
    assert 0.2 < area / cv2.contourArea(back.quad) < 0.9
    # the visible part is the top of the face: same top edge, a bottom edge higher up
    assert np.allclose(back.visible[:2], back.quad[:2], atol=1.0)
    assert back.visible[2:, 1].max() < back.quad[2:, 1].min() - 5


def test_the_number_visible_flag_flips_when_the_row_in_front_hides_the_number():
    low = _two_rows(rise=0.6)[1]
    high = _two_rows(rise=2.6)[1]
    assert low is not None and not low.number_visible
    assert high is not None and high.number_visible


@pytest.mark.parametrize("kind", ["rack", "closeup", "low"])
def test_scenes_are_deterministic_by_seed(kind):
    a = render_depth_scene(np.random.default_rng(11), kind=kind, width=480, height=270)
    b = render_depth_scene(np.random.default_rng(11), kind=kind, width=480, height=270)
    c = render_depth_scene(np.random.default_rng(12), kind=kind, width=480, height=270)
    assert a.image.shape == (270, 480, 3) and a.image.dtype == np.uint8
    assert np.array_equal(a.image, b.image) and np.array_equal(a.decoys, b.decoys)
    assert [(t.code, t.visible.tobytes()) for t in a.tiles] == \
        [(t.code, t.visible.tobytes()) for t in b.tiles]
    assert not np.array_equal(a.image, c.image)


def test_labels_lie_inside_faces_and_hard_negatives_never_over_a_labelled_tile():
    labelled = decoy_pixels = 0
    for seed in range(6):
        scene = render_depth_scene(np.random.default_rng(100 + seed), width=480, height=270)
        h, w = scene.decoys.shape
        for code, visible in scene.labels:
            assert code in TILE_CLASSES
            labelled += 1
            mask = np.zeros((h, w), np.uint8)
            cv2.fillConvexPoly(mask, np.round(visible).astype(np.int32), 1)
            mask = cv2.erode(mask, np.ones((3, 3), np.uint8))  # the outline's own pixels
            assert not (scene.decoys & (mask > 0)).any(), "a logo or sticker over a tile"
        for t in scene.tiles:
            assert _inside(t.visible, t.quad)
            assert _inside(t.visible, t.train_quad)
        decoy_pixels += int(scene.decoys.sum())
    assert labelled > 30 and decoy_pixels > 0  # the check saw both tiles and negatives


def test_the_original_look_is_a_training_edition():
    rng = np.random.default_rng(3)
    for _ in range(20):
        e = original_edition(rng)
        assert e.body_family == "white" and e.number_y <= 34 and e.logo in ("print", "emboss")
        assert not is_held_out(e)


def test_bad_arguments_say_what_is_allowed():
    with pytest.raises(ValueError, match="kind must be one of"):
        render_depth_scene(np.random.default_rng(0), kind="ceiling")
    with pytest.raises(ValueError, match="tiers must be 1, 2 or 3"):
        render_depth_scene(np.random.default_rng(0), tiers=4)
