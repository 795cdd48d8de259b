"""Calibration profiles: their files and errors, layout files, the classifier's embedding."""

from __future__ import annotations

import json

import numpy as np
import pytest

from calibration import (
    Layout,
    LayoutError,
    Profile,
    ProfileError,
)
from calibration.profile import SlotColor
from vision.recognition.pipeline import TileReader
from vision.recognition.settings import REPO_ROOT


def _profile(sha="ab" * 32, fourth="O") -> Profile:
    rng = np.random.default_rng(0)
    vectors = rng.random((4, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    slots = tuple(SlotColor(s, (40.0, 10.0 * i, -5.0), (2.0, 3.0, 1.5), 13)
                  for i, s in enumerate("KRB" + fourth))
    return Profile(model_sha256=sha, edition="test tiles", slots=slots,
                   body_bgr=(210.0, 230.0, 240.0), codes=("K1", f"{fourth}13", "J", "K1"),
                   turned=(False, False, False, True), vectors=vectors,
                   net_colours=tuple(tuple(0.97 if k == j else 0.01 for k in range(4))
                                     for j in range(4)),
                   stats={"tiles": 3})


# ----------------------------------------------------------------------------- files
def test_a_profile_round_trips_through_its_file(tmp_path):
    profile = _profile(fourth="G")
    path = tmp_path / "green.json"
    profile.save(path)
    again = Profile.from_file(path)
    assert again == profile
    assert np.allclose(again.vectors, profile.vectors, atol=1e-4)
    assert again.stats == {"tiles": 3}
    assert "G7" in again.labels and "O7" not in again.labels and again.labels[-1] == "J"


def test_a_missing_profile_is_one_clear_error(tmp_path):
    with pytest.raises(ProfileError, match="no calibration profile at .*nothing.json"):
        Profile.from_file(tmp_path / "nothing.json")


@pytest.mark.parametrize("text, words", [
    ("{\"kind\": ", "not JSON"),
    ("[1, 2]", "not a calibration profile"),
    (json.dumps({"kind": "rummikub-calibration-profile", "version": 99}), "version 99"),
])
def test_a_corrupt_profile_is_one_clear_error(tmp_path, text, words):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(ProfileError, match=words) as info:
        Profile.from_file(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_profile_with_broken_prototypes_is_corrupt(tmp_path):
    obj = _profile().to_json()
    obj["prototypes"]["vectors"] = obj["prototypes"]["vectors"][:2]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(ProfileError, match="corrupt calibration profile .*line up"):
        Profile.from_file(path)
    obj = _profile().to_json()
    obj["slots"][3]["slot"] = "K"
    path.write_text(json.dumps(obj))
    with pytest.raises(ProfileError, match="colour slots"):
        Profile.from_file(path)


@pytest.fixture(scope="module")
def reader():
    return TileReader.load()


def test_a_profile_made_for_another_model_is_refused(reader):
    with pytest.raises(ProfileError, match="made for another classifier"):
        reader.with_profile(_profile(sha="0" * 64))


def test_the_classifier_gives_its_embedding_from_the_same_run(reader):
    crops = np.random.default_rng(1).integers(0, 255, (3, 44, 32, 3), dtype=np.uint8)
    probs, turned = reader.classifier.predict_joint(crops)
    probs2, turned2, embedding = reader.classifier.predict_joint(crops, with_embedding=True)
    assert np.array_equal(probs, probs2) and np.array_equal(turned, turned2)
    assert embedding.shape[0] == 3 and embedding.shape[1] >= 32


# ----------------------------------------------------------------------------- layouts
def test_a_layout_file_holds_the_tiles_row_by_row(tmp_path):
    path = tmp_path / "table.txt"
    path.write_text("# my table\nK1 K2 K3\n\nR7, G7, B7  # a group\nJ\n")
    layout = Layout.from_file(path)
    assert layout.rows == (("K1", "K2", "K3"), ("R7", "G7", "B7"), ("J",))
    assert Layout.from_text(layout.text()).rows == layout.rows


def test_a_bad_layout_names_the_line_and_the_code(tmp_path):
    with pytest.raises(LayoutError, match=r"line 2: not a tile code: 'X5 R14'"):
        Layout.from_text("K1 K2\nX5 R14 B3")
    with pytest.raises(LayoutError, match="no built-in layout 'diagonal'"):
        Layout.builtin("diagonal")
    with pytest.raises(LayoutError, match="neither a built-in layout"):
        Layout.resolve(str(tmp_path / "missing.txt"))


# ----------------------------------------------------------------------------- commands
RACK = REPO_ROOT / "sample_images" / "rack_marble.jpg"


@pytest.mark.parametrize("argv", [
    ["scan", str(RACK)],
    ["score", str(RACK)],
    ["turn", str(RACK), str(RACK)],
    ["round", str(RACK), "--players", "Ann"],
])
def test_every_photo_command_gives_a_bad_profile_one_line_and_status_2(argv, tmp_path, capsys):
    from app.cli import main

    missing = tmp_path / "nothing.json"
    assert main([*argv, "--profile", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--profile" in err[0] and str(missing) in err[0]

    other = tmp_path / "other.json"
    _profile(sha="0" * 64).save(other)
    assert main([*argv, "--profile", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "made for another classifier" in err[0]


def test_calibrate_command_refuses_an_unknown_layout_in_one_line(tmp_path, capsys):
    from app.cli import main

    assert main(["calibrate", str(RACK), "--layout", "spiral", "--out",
                 str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--layout" in err[0] and "spiral" in err[0]
    assert not (tmp_path / "p.json").exists()


def test_a_profile_from_one_real_photo_reads_the_real_valid_photos_no_worse(reader,
                                                                             real_photos_dir):
    """The cream edition the models know: a profile made from one corrected reading of a
    train/ photo must not cost the valid/ photos a tile."""
    from bench.eval_vision import evaluate_photo
    from calibration.calibrate import calibrate_tiles
    from training.real_data import load_split, oriented_quad
    from vision.recognition.rectify import canonical_quad

    photo = next(p for p in load_split("train", real_photos_dir) if p.key == "rummy-3")
    image = photo.read()
    quads = np.stack([canonical_quad(oriented_quad(t.polygon)) for t in photo.tiles])
    upright, _probs = reader.classifier.classify(image, quads)
    profile = calibrate_tiles(image, upright, [t.code for t in photo.tiles], reader)
    assert profile.slot_letters == "KRBO"
    profiled = reader.with_profile(profile)
    valid = load_split("valid", real_photos_dir)[::3]
    without = [evaluate_photo(reader, p) for p in valid]
    with_profile = [evaluate_photo(profiled, p) for p in valid]
    assert sum(r.correct for r in with_profile) >= sum(r.correct for r in without)
    assert sum(r.matched for r in with_profile) >= sum(r.matched for r in without)


def test_calibrate_tiles_names_a_tile_that_is_not_its_code(reader, real_photos_dir):
    from calibration.calibrate import CalibrationError, calibrate_tiles
    from training.real_data import load_split, oriented_quad
    from vision.recognition.rectify import canonical_quad

    photo = next(p for p in load_split("train", real_photos_dir) if p.key == "rummy-3")
    image = photo.read()
    quads = np.stack([canonical_quad(oriented_quad(t.polygon)) for t in photo.tiles])
    upright, _probs = reader.classifier.classify(image, quads)
    codes = [t.code for t in photo.tiles]
    k = next(i for i, c in enumerate(codes) if c.startswith("R") and c != "R13")
    wrong = list(codes)
    wrong[k] = f"B{codes[k][1:]}"
    with pytest.raises(CalibrationError, match=rf"tile {k + 1} looks red, the layout has a blue"):
        calibrate_tiles(image, upright, wrong, reader)


def test_graph_surgery_adds_the_embedding_and_keeps_the_logits(tmp_path):
    onnx = pytest.importorskip("onnx")
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from training.add_embedding_output import add_embedding_output, update_sidecar

    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(6, 4)).astype(np.float32), rng.normal(size=(5, 6)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["crops", "w1"], ["hidden"], transB=1),
         helper.make_node("Relu", ["hidden"], ["features"]),
         helper.make_node("Gemm", ["features", "w2"], ["logits"], transB=1)],
        "tiny", [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 5])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    path = tmp_path / "classifier.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    before = ort.InferenceSession(str(path)).run(None, {"crops": x})[0]

    assert add_embedding_output(path) == "features"
    assert add_embedding_output(path) == "embedding"  # a second run changes nothing
    logits, embedding = ort.InferenceSession(str(path)).run(None, {"crops": x})
    assert np.array_equal(logits, before)
    assert np.allclose(embedding, np.maximum(x @ w1.T, 0), atol=1e-5)
    spec = update_sidecar(tmp_path)
    assert spec["embedding_output"] == "embedding" and len(spec["sha256"]) == 64


# ----------------------------------------------------------------------------- ink
def _crop(number_bgr, lip: bool) -> np.ndarray:
    """A 32x44 crop of a cream tile with a number printed in `number_bgr`, and with `lip`
    a black rack lip and its shadow across its lower half, as a rack seen at an angle
    puts into the crop."""
    import cv2

    crop = np.full((44, 32, 3), (205, 228, 240), np.uint8)
    cv2.putText(crop, "7", (8, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.75, number_bgr, 3)
    if lip:
        crop[26:32] = (18, 18, 20)
    return crop


@pytest.mark.parametrize("lip", [False, True])
def test_a_green_print_reads_green_even_with_a_black_rack_lip_in_the_crop(lip):
    from calibration.features import chroma_hue, ink_features

    green, _ = ink_features(_crop((55, 145, 35), lip)[None])
    chroma, hue = chroma_hue(green[0])
    assert chroma > 25 and 110 < hue < 190, (chroma, hue)
    black, _ = ink_features(_crop((35, 30, 30), lip)[None])
    assert chroma_hue(black[0])[0] < 10


def test_a_profile_never_rules_out_the_other_way_round():
    # A 9 seen turned round is a 6's glyph: network and prototypes can both be all but sure
    # of the wrong one. The other way keeps ORIENT_DOUBT, spread as the network spreads it,
    # so a rack's tiles that face one way (vision.game.rack) can still put it right.
    from calibration.head import ORIENT_DOUBT, _doubt_the_turn

    joint = np.zeros((2, 14, 2), np.float32)
    joint[0, 9, 1] = 1.0  # read: a 9, turned round; nothing on the crop's own way up
    joint[1, 8, 0], joint[1, 8, 1] = 0.6, 0.4  # an 8: no doubt to add
    net = np.full((2, 14, 2), 1e-3, np.float32)
    net[0, 6, 0] = 0.5
    out = _doubt_the_turn(joint, np.array([True, False]), net)
    assert out[0, :, 0].sum() == pytest.approx(ORIENT_DOUBT)
    assert int(out[0, :, 0].argmax()) == 6 and int(out[0].sum(axis=1).argmax()) == 9
    assert out[0].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(out[1], joint[1])


def test_a_real_photo_laid_as_the_rows_layout_calibrates_and_racks_still_total_right(
        reader, real_photos_dir):
    """train/rummy-4 is a real photo of the cream tiles laid as the built-in layout says
    (a colour per row, 1-13, then the jokers): the whole `rummikub calibrate` path on a
    real photo. Through its profile the real valid/ photos read no worse and every real
    rack photo still totals right (tiles read turned round against the rack included)."""
    from bench.eval_vision import evaluate_photo
    from calibration import calibrate
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.real_data import load_split
    from vision.game.rack import read_rack

    photo = next(p for p in load_split("train", real_photos_dir) if p.key == "rummy-4")
    profile = calibrate(photo.read(), Layout.builtin("rows"), reader)
    assert profile.stats["rows"] == ["B", "R", "O", "K", "J"]
    assert profile.stats["colours_right"] == profile.stats["colour_tiles"] == 52
    profiled = reader.with_profile(profile)
    valid = load_split("valid", real_photos_dir)
    some = valid[1::3]
    without = [evaluate_photo(reader, p) for p in some]
    with_profile = [evaluate_photo(profiled, p) for p in some]
    assert sum(r.correct for r in with_profile) >= sum(r.correct for r in without)
    assert sum(r.matched for r in with_profile) >= sum(r.matched for r in without)
    racks = {p.key: p for p in valid if p.key in ("rummy3-7", "rummy3-10", "rummy4-87",
                                                   "rummy4-92", "rummy4-93")}
    assert len(racks) == 5
    for key, p in racks.items():
        want = rack_penalty([Tile.from_code(t.code) for t in p.tiles], DEFAULT_RULES)
        assert read_rack(profiled.read(p.read()), DEFAULT_RULES).total == want, key
