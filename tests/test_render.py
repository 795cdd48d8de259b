"""The synthetic renderer: deterministic, labels inside the photo, upright convention."""

import numpy as np
import pytest

pytest.importorskip("PIL")  # the renderer is training-only (Pillow draws the numbers)

from training.render import KINDS, render_scene, tile_quad  # noqa: E402
from vision.labels import TILE_CLASSES  # noqa: E402


@pytest.mark.parametrize("kind", KINDS)
def test_scene_is_deterministic_and_labels_lie_in_the_photo(kind):
    a, labels_a = render_scene(np.random.default_rng(7), width=640, height=480, kind=kind)
    b, labels_b = render_scene(np.random.default_rng(7), width=640, height=480, kind=kind)
    assert a.shape == (480, 640, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    assert [c for c, _ in labels_a] == [c for c, _ in labels_b]
    if kind == "empty":
        assert labels_a == []
        return
    assert labels_a, f"a {kind} scene should hold tiles"
    for code, quad in labels_a:
        assert code in TILE_CLASSES
        assert quad.shape == (4, 2) and quad.dtype == np.float32
        cx, cy = quad.mean(0)
        assert 0 <= cx < 640 and 0 <= cy < 480, "a labelled tile's centre is in the photo"
        # clockwise on screen (y down): positive shoelace area
        x, y = quad[:, 0], quad[:, 1]
        assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0


def test_tile_quad_orders_corners_from_the_upright_top_left():
    upright = tile_quad((50, 50), 0.0, 20, 28)
    assert np.allclose(upright, [[40, 36], [60, 36], [60, 64], [40, 64]])
    flipped = tile_quad((50, 50), np.pi, 20, 28)
    assert np.allclose(flipped, np.roll(upright, 2, axis=0), atol=1e-4)
