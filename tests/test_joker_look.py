"""The joker look (`vision.recognition.joker_look`): a second classifier asked whether a
doubtful numbered reading is a joker whose face no training edition prints."""

from __future__ import annotations

import numpy as np
import pytest

from vision.recognition.joker_look import BELOW, MIN_SQUASHED, SURE, SURE_FEW, JokerLook
from vision.recognition.labels import TILE_CLASSES

J = TILE_CLASSES.index("J")
K8 = TILE_CLASSES.index("K8")


class _Second:
    """A stand-in second classifier whose every crop reads as `joker` J."""

    labels = TILE_CLASSES

    def __init__(self, joker: float, turned: float = 0.0) -> None:
        self.joker, self.turned, self.asked = joker, turned, 0

    def crops(self, image, quads):
        return np.zeros((len(quads), 44, 32, 3), np.uint8)

    def predict_joint(self, crops):
        self.asked += len(crops)
        p = np.full((len(crops), len(TILE_CLASSES)), (1 - self.joker) / (len(TILE_CLASSES) - 1),
                    np.float32)
        p[:, J] = self.joker
        return p, p * self.turned  # this share of each class says "turned round"


def _reading(sure: list[float], code: int = K8) -> np.ndarray:
    probs = np.full((len(sure), len(TILE_CLASSES)), 0.0, np.float32)
    for i, s in enumerate(sure):
        probs[i, :] = (1 - s) / (len(TILE_CLASSES) - 1)
        probs[i, code] = s
    return probs


def _ask(look, probs, keep=None, labels=TILE_CLASSES):
    keep = np.ones(len(probs), bool) if keep is None else keep
    upright = np.zeros((len(probs), 4, 2), np.float32)
    return look.relook(np.zeros((10, 10, 3), np.uint8), upright, keep, probs, None, labels)[1]


def test_only_doubtful_numbered_readings_are_asked_and_only_a_sure_joker_counts():
    # four sure tiles, one doubtful 8: the photo is read surely as a whole
    probs = _reading([0.99, 0.99, 0.99, 0.99, BELOW - 0.2])
    second = _Second(joker=SURE + 0.05)
    out = _ask(JokerLook(second), probs)
    assert second.asked == 1
    assert out[4].argmax() == J and (out[:4] == probs[:4]).all()
    # the same doubtful 8 where the second classifier is not sure enough: unchanged
    out = _ask(JokerLook(_Second(joker=SURE - 0.05)), probs)
    assert (out == probs).all()
    # a find the threshold dropped is never asked
    keep = np.array([True, True, True, True, False])
    second = _Second(joker=0.99)
    assert (_ask(JokerLook(second), probs, keep) == probs).all() and second.asked == 0


def test_a_joker_taken_gets_the_second_classifiers_up():
    # an 8 reads the same either way up; the joker's face says which way is up
    probs = _reading([0.99, 0.99, 0.99, 0.5])
    upright = np.float32([[[0, 0], [3, 0], [3, 4], [0, 4]]] * 4)
    flip = np.zeros_like(probs)
    image = np.zeros((10, 10, 3), np.uint8)
    keep = np.ones(4, bool)
    quads, out, flips = JokerLook(_Second(joker=0.97, turned=0.8)).relook(
        image, upright, keep, probs, flip, TILE_CLASSES)
    assert out[3].argmax() == J
    assert (quads[3] == upright[3][[2, 3, 0, 1]]).all() and (quads[:3] == upright[:3]).all()
    # seen from the turned quad, the share that says "the other way" is the upright one
    assert flips[3, J] == pytest.approx(0.97 * 0.2) and (flips[:3] == 0).all()
    quads, out, flips = JokerLook(_Second(joker=0.97, turned=0.1)).relook(
        image, upright, keep, probs, flip, TILE_CLASSES)
    assert (quads == upright).all() and flips[3, J] == pytest.approx(0.97 * 0.1)


def test_a_photo_read_unsurely_as_a_whole_is_not_asked():
    # a low phone's squashed tiles: most readings unsure, where numerals drawn out of
    # shape look like pictures to the second classifier too
    probs = _reading([0.4, 0.5, 0.6, 0.99])
    second = _Second(joker=0.99)
    assert (_ask(JokerLook(second), probs) == probs).all() and second.asked == 0



def test_a_rack_of_a_few_tiles_is_asked_but_needs_a_surer_joker():
    # a lone doubtful tile, or one of two, is half the photo, but no squashed view: asked
    for sure in ([0.5], [0.99, 0.5], [0.5, 0.6]):
        probs = _reading(sure)
        second = _Second(joker=SURE_FEW + 0.01)
        out = _ask(JokerLook(second), probs)
        assert second.asked == sum(s < BELOW for s in sure)
        assert out[-1].argmax() == J, sure
        # ...where a joker as sure as a fuller photo's needs is not enough
        if SURE < SURE_FEW - 0.02:
            assert (_ask(JokerLook(_Second(joker=SURE_FEW - 0.02)), probs) == probs).all()
    # a later pass's few finds (a finer scale, the view from above) are no rack of a few
    # tiles: there the share rule alone holds, as for the photo's first reading before
    probs = _reading([0.99, 0.5])
    second = _Second(joker=0.99)
    upright = np.zeros((2, 4, 2), np.float32)
    out = JokerLook(second).relook(np.zeros((10, 10, 3), np.uint8), upright, np.ones(2, bool),
                                   probs, None, TILE_CLASSES, whole_photo=False)[1]
    assert (out == probs).all() and second.asked == 0
    # MIN_SQUASHED unsure tiles make a squashed photo again, however few the tiles
    probs = _reading([0.5] * MIN_SQUASHED)
    second = _Second(joker=0.99)
    assert (_ask(JokerLook(second), probs) == probs).all() and second.asked == 0

def test_a_reader_with_other_labels_is_not_asked():
    probs = _reading([0.99, 0.99, 0.5])
    second = _Second(joker=0.99)
    other = tuple(f"X{i}" for i in range(len(TILE_CLASSES)))
    assert (_ask(JokerLook(second), probs, labels=other) == probs).all() and second.asked == 0


def test_the_file_is_optional_and_a_broken_one_is_named(tmp_path):
    from vision.recognition.sessions import ModelUnreadable

    assert JokerLook.load(tmp_path) is None
    (tmp_path / "joker_look.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelUnreadable, match="joker_look.onnx"):
        JokerLook.load(tmp_path)


def _butterfly_in_a_row(index: int):
    """`bench.eval_jokers`' whole-reader picture: a butterfly joker between two numbered
    tiles of a held-out edition, on a 1000x750 table, and its quad."""
    from bench.eval_jokers import CODES, _in_a_row
    from training import render as R
    from training.editions import HELD_OUT
    from training.render3d.tiles import unfamiliar_joker

    edition = HELD_OUT["white_teal"]
    rng = np.random.default_rng(51_000 + index)
    side = np.random.default_rng(52_000 + index)
    beside = [R._face_for(c, edition.look(c, side)) for c in (CODES[1], CODES[2])]
    face = unfamiliar_joker(edition.look("J", rng), "butterfly")
    return _in_a_row(face, beside, np.random.default_rng(53_000 + index))


def _read_at(reader, image, quad) -> str:
    import cv2

    tiles = reader.read(image)
    for i in range(len(tiles)):
        c = tiles.corners[i].mean(0)
        if cv2.pointPolygonTest(quad.reshape(-1, 1, 2), (float(c[0]), float(c[1])), False) >= 0:
            return tiles.codes[i]
    return "not found"


def test_a_butterfly_joker_reads_as_a_joker_with_the_shipped_look(tile_reader):
    if tile_reader.joker_look is None:
        pytest.skip("no joker_look.onnx beside the models")
    import copy

    without = copy.copy(tile_reader)
    without.joker_look = None
    read = [(_read_at(tile_reader, *_butterfly_in_a_row(i)),
             _read_at(without, *_butterfly_in_a_row(i))) for i in (1, 3, 6)]
    # the first classifier alone takes each for an 8; the look reads them as jokers
    assert all(alone in ("K8", "R8") for _, alone in read), read
    assert all(looked == "J" for looked, _ in read), read


def test_the_look_changes_nothing_on_the_real_valid_photos(tile_reader, valid_by_key):
    if tile_reader.joker_look is None:
        pytest.skip("no joker_look.onnx beside the models")
    import copy

    import cv2

    without = copy.copy(tile_reader)
    without.joker_look = None
    asked = 0
    for photo in valid_by_key.values():
        image = cv2.imread(str(photo.path))
        looked = tile_reader.read(image)
        asked += tile_reader.joker_look.last_asked
        assert list(looked.codes) == list(without.read(image).codes), photo.key
    assert asked > 0  # it was asked on some of them, and said "not a joker"


def test_a_white_close_up_with_a_butterfly_joker_reads_right(tile_reader):
    # Rendered white close-up 700,023 (bench.eval_white_racks): its joker wears a
    # butterfly, which the first classifier took for an R8.
    if tile_reader.joker_look is None:
        pytest.skip("no joker_look.onnx beside the models")
    from bench.eval_white_racks import render, score_photo
    from referee import DEFAULT_RULES
    from vision.game.cover import read_rack_photo
    from vision.recognition.decode import Photo

    _seed, scene, data = render(700_023, "closeup")
    rack = read_rack_photo(tile_reader, Photo.from_bytes(data), DEFAULT_RULES)
    score = score_photo(scene, rack)
    assert score["right"] == score["tiles"] == 11 and score["false"] == 0, score
    assert "J" in rack.codes, rack.codes


def test_a_rendered_rack_of_many_tiles_reads_as_before_the_few_tile_rule(tile_reader,
                                                                         monkeypatch):
    # eval_table's rack scene 95,036 (46 tiles): its finer pass reads a few finds of its
    # own, one of them doubtful; asked as if it were a rack of a few tiles, it became a
    # joker find that is no tile (and two more scenes alike)
    if tile_reader.joker_look is None:
        pytest.skip("the joker look does not ship")
    from bench.synth_tables import jpeg_roundtrip
    from training.render import render_scene
    from vision.recognition import joker_look

    image = jpeg_roundtrip(render_scene(np.random.default_rng(95_036), kind="rack")[0])
    now = tile_reader.read(image).codes
    monkeypatch.setattr(joker_look, "MIN_SQUASHED", 1)  # the rule before
    assert list(now) == list(tile_reader.read(image).codes)
    assert "J" not in now
