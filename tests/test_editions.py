"""Rendered editions: held-out looks stay out of training, scenes keep the label rules."""

import numpy as np
import pytest

pytest.importorskip("PIL")  # the renderer is training-only (Pillow draws the numbers)

from training import editions as E  # noqa: E402
from vision.recognition.labels import TILE_CLASSES  # noqa: E402


def test_training_never_draws_a_held_out_editions_combination():
    rng = np.random.default_rng(1)
    drawn = [E.random_edition(rng) for _ in range(400)]
    assert not any(E.is_held_out(e) for e in drawn)
    assert all(e.font != E.FONT["ComicNeue-Bold"] for e in drawn)
    # the check itself recognises each held-out edition
    assert all(E.is_held_out(e) for e in E.HELD_OUT.values())
    # and training still sees every colour family, green in the fourth slot included
    families = {f for e in drawn for _slot, f in e.ink_families}
    assert {"blue", "teal", "orange", "yellow", "green"} <= families


@pytest.mark.parametrize("kind", E.SCENES)
def test_edition_scene_is_deterministic_with_upright_tile_labels(kind):
    edition = E.random_edition(np.random.default_rng(5))
    a, labels, ignores = E.render_edition_scene(np.random.default_rng(11), edition, kind=kind,
                                                width=640, height=480)
    b, labels_b, _ = E.render_edition_scene(np.random.default_rng(11), edition, kind=kind,
                                            width=640, height=480)
    assert a.shape == (480, 640, 3) and np.array_equal(a, b)
    assert [c for c, _ in labels] == [c for c, _ in labels_b]
    if kind == "negatives":
        assert labels == []
        return
    assert labels, f"a {kind} scene should hold tiles"
    for code, quad in labels:
        assert code in TILE_CLASSES
        cx, cy = quad.mean(0)
        assert 0 <= cx < 640 and 0 <= cy < 480
        sides = np.linalg.norm(quad[3] - quad[0]) + np.linalg.norm(quad[2] - quad[1])
        ends = np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])
        assert sides > ends, "a labelled tile is taller than wide in the photo"
    for quad in ignores:
        assert quad.shape == (4, 2)


def test_a_rummy_green_tile_is_labelled_with_the_fourth_colour_slot():
    rummy = E.held_out("rummy_green")
    assert rummy.slot_of("G") == "O"
    assert E.slot_codes(rummy, ["G5", "K1", "J"]) == ["O5", "K1", "J"]
    assert dict(rummy.ink_families)["O"] == "green"


def test_calibration_layout_gives_one_colour_per_row_and_the_jokers():
    image, rows = E.render_calibration_layout("rummy_green", np.random.default_rng(0))
    assert image.shape == (750, 1000, 3)
    assert rows[:4] == [[f"{c}{n}" for n in range(1, 14)] for c in "KRBG"]
    assert rows[4] == ["J", "J"]
    _, rows = E.render_calibration_layout("white_teal", np.random.default_rng(0))
    assert rows[3][0] == "O1"
    with pytest.raises(ValueError, match="no held-out edition"):
        E.held_out("purple")


def test_training_editions_vary_the_numbers_beyond_their_fonts():
    # Bolder and thinner strokes, wider and narrower numbers: the shapes of editions
    # whose fonts the renderer does not ship.
    rng = np.random.default_rng(0)
    drawn = [E.random_edition(rng) for _ in range(60)]
    assert {e.weight for e in drawn} >= {-2, 0, 3}
    assert min(e.stretch for e in drawn) < 0.9 < 1.1 < max(e.stretch for e in drawn)
    ink = {w: E._glyphs("8", 0, w).sum() for w in (-2, 0, 2)}
    assert ink[-2] < ink[0] < ink[2]
    assert np.array_equal(E._glyphs("8", 0, 0), E.R._text_mask("8", 0, 64))
    # The held-out editions keep the plain font, so the evaluation's photos stay the same.
    assert all(h.weight == 0 and h.stretch == 1.0 for h in E.HELD_OUT.values())


def test_decoys_lie_beside_the_tiles_never_over_a_labelled_one():
    # A card, sticker, logo or rack edge drawn over a tile would hide a tile that still
    # counts as one to find: the held-out evaluation would count it as missed.
    edition = E.HELD_OUT["white_modern_logo"]
    tiles = [np.float32([[x, 100], [x + 60, 100], [x + 60, 183], [x, 183]])
             for x in range(80, 560, 70)]
    mask = np.zeros((480, 640), np.uint8)
    for quad in tiles:
        mask[100:184, int(quad[0, 0]):int(quad[1, 0]) + 1] = 1
    drawn = 0
    for seed in range(40):
        canvas = np.full((480, 640, 3), 128, np.float32)
        E._decoys(np.random.default_rng(seed), canvas, 60.0, edition, tiles)
        changed = np.any(canvas != 128, axis=2)
        assert not np.any(changed & (mask == 1)), f"seed {seed}: a decoy covers a tile"
        drawn += bool(changed.any())
    assert drawn >= 30  # and they are still drawn, beside the tiles


def _over_the_box(codes) -> dict:
    """Tiles shown more often than one box holds (two of each, two jokers)."""
    from collections import Counter

    return {code: k for code, k in Counter(codes).items() if k > 2}


@pytest.mark.parametrize("kind", ["table", "rack_front"])
def test_a_scene_never_shows_more_copies_of_a_tile_than_one_box_holds(kind):
    # Four K6 on one rack is no photo a player can take; the rules' copy check would then
    # "correct" a right reading, and the evaluation count it as a misread.
    for seed in range(20):
        _image, labels, _ignores = E.render_edition_scene(
            np.random.default_rng(170_000 + seed), E.HELD_OUT["white_teal"], kind=kind,
            width=640, height=480)
        codes = [code for code, _quad in labels]
        assert not _over_the_box(codes), f"seed {seed}: {_over_the_box(codes)} in {codes}"


@pytest.mark.parametrize("name", list(E.HELD_OUT))
@pytest.mark.parametrize("code", ["R1", "K8", "O10", "B13"])
def test_number_box_is_where_the_edition_prints_the_number(name, code):
    # bench.eval_editions splits tiles by whether this box lies in the photo, so it must
    # hold the whole number and not much more.
    edition = E.HELD_OUT[name]
    look = list(edition.look(code, np.random.default_rng(0)))
    look[4] = edition.scale  # the nominal size the box is computed for
    face = E.edition_face(code, tuple(look)).astype(np.float32)
    ink = np.asarray(edition.ink(edition.slot_of(code[0])), np.float32)
    h, w = face.shape[:2]
    # the ink of the number, above the foot where a logo may be printed
    inked = np.linalg.norm(face[..., :3] - ink, axis=2) < 60
    inked[int(0.75 * h):] = False
    ys, xs = np.nonzero(inked)
    left, top, right, bottom = E.number_box(code, edition)
    assert left * w - 2 <= xs.min() and xs.max() <= right * w + 2
    assert top * h - 2 <= ys.min() and ys.max() <= bottom * h + 2
    # the box is no wider or taller than the ink by more than a few pixels
    assert (xs.max() - xs.min()) >= (right - left) * w - 6
    assert (ys.max() - ys.min()) >= (bottom - top) * h - 6


def test_a_tile_cut_below_its_number_still_has_its_number_in_the_photo():
    from bench.eval_editions import number_inside

    edition = E.HELD_OUT["white_modern_logo"]  # the number in the upper third
    upright = np.float32([[100, 100], [160, 100], [160, 180], [100, 180]])  # TL TR BR BL
    assert number_inside("R7", upright, edition, 400, 300)
    # the photo ends across the tile's foot, where the logo is: the number is whole
    assert number_inside("R7", upright, edition, 400, 170)
    # it ends across the number: cut
    assert not number_inside("R7", upright, edition, 400, 125)
    # the same tile turned round (its top-left corner now lowest, at the right): its
    # number is in the lower half of the outline, so an edge across the lower half cuts it
    turned = np.roll(upright, 2, axis=0)
    assert number_inside("R7", turned, edition, 400, 170)
    assert not number_inside("R7", turned, edition, 400, 150)
