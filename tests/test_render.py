"""The synthetic renderer: deterministic, labels inside the photo, upright convention."""

import numpy as np
import pytest

pytest.importorskip("PIL")  # the renderer is training-only (Pillow draws the numbers)

from training.render import KINDS, render_scene, tile_quad  # noqa: E402
from vision.recognition.labels import TILE_CLASSES  # noqa: E402


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


# A render run in a fresh interpreter; prints the SHA-256 of its photos and labels. With
# `swap` set, every font the process opens from outside training/fonts/ (the machine's
# fonts, or Pillow's built-in default) is replaced by a different face: a machine whose
# fonts are all different. A renderer that draws only with the shipped fonts is unmoved.
_RENDER_HASH = r"""
import hashlib, sys
import numpy as np
from PIL import ImageFont

from training import render

if sys.argv[1] == "swap":
    shipped = str(render.FONT_DIR)
    other = str(render.FONT_DIR / "ComicNeue-Bold.otf")
    truetype, load_default = ImageFont.truetype, ImageFont.load_default

    def foreign_truetype(font=None, size=10, *args, **kwargs):
        if not str(font).startswith(shipped):
            font = other
        return truetype(font, size, *args, **kwargs)

    ImageFont.truetype = foreign_truetype
    ImageFont.load_default = lambda size=None: truetype(other, size or 10)

digest = hashlib.sha256()
for seed, kind in enumerate(render.KINDS[:4]):
    photo, labels = render.render_scene(np.random.default_rng(seed), width=480, height=360,
                                        kind=kind)
    digest.update(photo.tobytes())
    for code, quad in labels:
        digest.update(code.encode() + quad.tobytes())
print(digest.hexdigest())
"""


def _render_hash(tmp_path, mode: str) -> str:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    home = tmp_path / mode  # no ~/.fonts, no XDG font folders of the user's
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home), XDG_DATA_DIRS=str(home),
               PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-c", _RENDER_HASH, mode], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300, check=True)
    return out.stdout.strip()


def test_a_render_is_byte_identical_whatever_fonts_the_machine_has(tmp_path):
    assert _render_hash(tmp_path, "as_is") == _render_hash(tmp_path, "swap")


def test_numbers_are_drawn_only_with_the_fonts_shipped_beside_the_renderer():
    from training import render

    paths = render.font_paths()
    assert len(paths) == len(render.FONT_FILES) >= 4
    for path in paths:
        assert path.startswith(str(render.FONT_DIR))
        assert (render.FONT_DIR / path).is_file()


def test_a_box_keeps_what_it_holds_and_redraws_a_set_of_the_same_shape():
    import numpy as np

    from training.render import TileBox

    rng = np.random.default_rng(5)
    box = TileBox(rng)
    assert box.take(["R5", "R6", "R7"]) == ["R5", "R6", "R7"]
    assert box.take(["R5", "R6", "R7"]) == ["R5", "R6", "R7"]  # the second copies
    run = box.take(["R5", "J", "R7"])  # no R5 or R7 left: another run of three
    assert run[1] == "J" and run != ["R5", "J", "R7"]
    colours, numbers = {run[0][0], run[2][0]}, (int(run[0][1:]), int(run[2][1:]))
    assert len(colours) == 1 and numbers[1] == numbers[0] + 2
    assert box.left["R5"] == 0 and box.left["J"] == 1
    box = TileBox(rng)
    for _copy in range(2):
        assert box.take(["K6", "R6", "B6"]) == ["K6", "R6", "B6"]
    group = box.take(["K6", "R6", "B6"])  # the third time: another group of three
    assert len({g[1:] for g in group}) == 1 and len({g[0] for g in group}) == 3
    assert group != ["K6", "R6", "B6"]
    # the box draws from its own generator: the scene's next draw is as before
    assert rng.random() == np.random.default_rng(5).random()
