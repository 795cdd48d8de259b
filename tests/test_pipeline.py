"""The photo pipeline object, the annotator and the evaluation's matching (no torch)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from bench.eval_vision import match_centres
from vision.recognition.annotate import LOOSE_COLOR as LOOSE
from vision.recognition.annotate import TableAnnotator
from vision.recognition.detections import TileDetections
from vision.recognition.labels import TILE_CLASSES
from vision.recognition.pipeline import ModelsMissing, TileReader
from vision.recognition.settings import MODELS_DIR, REPO_ROOT

SAMPLES = sorted(p for p in (REPO_ROOT / "sample_images").glob("*") if p.suffix.lower() in
                 (".jpg", ".jpeg", ".png"))
HAVE_MODELS = all((MODELS_DIR / name).is_file() for name in ("detector.onnx", "classifier.onnx"))
needs_models = pytest.mark.skipif(not HAVE_MODELS, reason=f"no models in {MODELS_DIR}")


def signed_area(quad: np.ndarray) -> float:
    """> 0 when the corners run clockwise on screen (image y points down)."""
    x, y = quad[:, 0], quad[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)) / 2


def square(cx, cy, half=20.0):
    return np.float32([[cx - half, cy - half], [cx + half, cy - half],
                       [cx + half, cy + half], [cx - half, cy + half]])


# -- fakes, so the glue is tested without models ---------------------------------------------
class FakeDetector:
    def __init__(self, quads):
        self.quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)

    def detect(self, image):
        return self.quads, np.full(len(self.quads), 0.9, np.float32)


class FakeClassifier:
    labels = TILE_CLASSES

    def __init__(self, codes, confidence=0.95):
        self.codes, self.confidence = codes, confidence

    def classify(self, image, quads):
        probs = np.full((len(quads), len(TILE_CLASSES)), 0.0, np.float32)
        for i, code in enumerate(self.codes[: len(quads)]):
            probs[i] = (1 - self.confidence) / (len(TILE_CLASSES) - 1)
            probs[i, TILE_CLASSES.index(code)] = self.confidence
        return quads[:, [2, 3, 0, 1]], probs  # "turned 180°"


def test_import_vision_is_light():
    code = ("import sys, vision; vision.TileDetections; vision.TileReader; vision.TableAnnotator;"
            "bad = [m for m in ('torch', 'onnxruntime') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT)


def test_lazy_exports():
    import vision

    assert vision.TileReader is TileReader
    with pytest.raises(AttributeError):
        vision.no_such_thing  # noqa: B018


def test_reader_glues_detect_and_classify():
    quads = [square(50, 50), square(150, 50)]
    reader = TileReader(FakeDetector(quads), FakeClassifier(["R7", "J"], 0.95))
    image = np.zeros((200, 300, 3), np.uint8)
    det = reader.read(image)
    assert det.codes == ["R7", "J"]
    assert det.corners.shape == (2, 4, 2)
    np.testing.assert_allclose(det.corners[0][0], quads[0][2])  # the classifier's order kept
    assert not det.uncertain.any()
    assert set(reader.last_timings) == {"detect", "classify"}
    unsure = TileReader(FakeDetector(quads), FakeClassifier(["R7", "J"], 0.4)).read(image)
    assert unsure.uncertain.all()


def test_a_find_no_class_claims_is_not_a_tile():
    quads = [square(50, 50), square(150, 50)]
    image = np.zeros((200, 300, 3), np.uint8)

    class OneSure(FakeClassifier):
        def classify(self, image, quads):
            upright, probs = super().classify(image, quads)
            # the find on the right is a wood knot: every class equally unlikely, in any box
            probs[np.asarray(quads)[:, :, 0].mean(axis=1) > 100] = 1 / len(TILE_CLASSES)
            return upright, probs

    kept = TileReader(FakeDetector(quads), OneSure(["R7", "J"]), reject_below=0.1).read(image)
    assert kept.codes == ["R7"]
    np.testing.assert_allclose(kept.corners[0][0], quads[0][2])
    everything = TileReader(FakeDetector(quads), OneSure(["R7", "J"])).read(image)
    assert len(everything) == 2


class ReadsOnlyLyingBoxes(FakeClassifier):
    """A tile lying on its side: a box whose long side runs left-right shows its number
    upright (R7, sure); the detector's standing box shows it on its side (K1, unsure)."""

    def __init__(self, unsure=0.5, sure=0.95, lying_code="R7"):
        super().__init__([])
        self.unsure, self.sure, self.lying_code = unsure, sure, lying_code

    def classify(self, image, quads):
        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        probs = np.zeros((len(quads), len(TILE_CLASSES)), np.float32)
        for i, q in enumerate(quads):
            along = q[3] - q[0]
            lying = abs(along[0]) > abs(along[1])
            p = self.sure if lying else self.unsure
            probs[i] = (1 - p) / (len(TILE_CLASSES) - 1)
            probs[i, TILE_CLASSES.index(self.lying_code if lying else "K1")] = p
        return quads, probs


def standing_box(cx=100.0, cy=60.0):
    """A box 30 wide and 40 high, corners clockwise from the top-left."""
    return np.float32([[cx - 15, cy - 20], [cx + 15, cy - 20], [cx + 15, cy + 20],
                       [cx - 15, cy + 20]])


def test_an_unsure_find_is_read_again_in_its_box_turned_a_quarter_round():
    from vision.recognition.classify import quarter_turned

    box = standing_box()
    image = np.zeros((120, 200, 3), np.uint8)
    reader = TileReader(FakeDetector([box]), ReadsOnlyLyingBoxes())
    det = reader.read(image)
    assert det.codes == ["R7"] and reader.last_second_looks == (1, 1)
    # The corners are those of the reading kept: the box turned, its long side left-right.
    np.testing.assert_allclose(det.corners[0], quarter_turned(box[None])[0])
    assert abs(det.corners[0][3] - det.corners[0][0])[0] > 30
    assert "classify.second_look" in reader.last_timings
    # Without the second look the find reads as the standing box shows it.
    once = TileReader(FakeDetector([box]), ReadsOnlyLyingBoxes(), second_look_below=0)
    det = once.read(image)
    assert det.codes == ["K1"] and once.last_second_looks == (0, 0)
    np.testing.assert_allclose(det.corners[0], box)


def test_the_second_look_keeps_a_reading_the_network_is_not_clearly_surer_of():
    box = standing_box()
    image = np.zeros((120, 200, 3), np.uint8)
    barely = TileReader(FakeDetector([box]), ReadsOnlyLyingBoxes(unsure=0.5, sure=0.52))
    assert barely.read(image).codes == ["K1"] and barely.last_second_looks == (1, 0)
    # The same tile read surer in the turned box keeps its first box (a joker's face reads
    # as a joker in any box; the turned corners would lie across the tile).
    same = TileReader(FakeDetector([box]), ReadsOnlyLyingBoxes(lying_code="K1"))
    det = same.read(image)
    assert det.codes == ["K1"] and same.last_second_looks == (1, 0)
    np.testing.assert_allclose(det.corners[0], box)
    # A find read surely enough is not looked at again.
    sure = TileReader(FakeDetector([box]), ReadsOnlyLyingBoxes(unsure=0.95, sure=0.99))
    assert sure.read(image).codes == ["K1"] and sure.last_second_looks == (0, 0)


def test_the_second_look_never_makes_a_dropped_find_a_tile():
    # Detector score 0.15: the first look (0.15 x 0.5) is under reject_below 0.1, the turned
    # box's reading (0.15 x 0.95) would be over it. The find stays dropped.
    box = standing_box()
    image = np.zeros((120, 200, 3), np.uint8)

    class Weak(FakeDetector):
        def detect(self, image):
            return self.quads, np.full(len(self.quads), 0.15, np.float32)

    reader = TileReader(Weak([box]), ReadsOnlyLyingBoxes(), reject_below=0.1)
    assert len(reader.read(image)) == 0 and reader.last_second_looks == (0, 0)


def test_reader_no_tiles_and_bytes():
    reader = TileReader(FakeDetector(np.zeros((0, 4, 2))), FakeClassifier([]))
    ok, data = cv2.imencode(".jpg", np.full((60, 80, 3), 127, np.uint8))
    det = reader.read_bytes(data.tobytes())
    assert len(det) == 0 and det.to_json() == []
    assert set(reader.last_timings) >= {"decode", "detect"}


def test_models_missing(tmp_path):
    with pytest.raises(ModelsMissing, match=str(tmp_path)):
        TileReader.load(tmp_path)


def test_match_centres_one_to_one():
    polys = [square(50, 50), square(90, 50)]  # overlapping squares
    centres = np.float32([[70, 50], [60, 50], [300, 300]])
    pairs = match_centres(centres, polys)
    assert sorted(pairs) == [(0, 1), (1, 0)]  # both labels matched, each once
    assert match_centres(np.zeros((0, 2)), polys) == []
    assert match_centres(centres, []) == []


def _detections(codes, centres, uncertain=None):
    quads = np.stack([square(x, y, 18) for x, y in centres])
    probs = np.zeros((len(codes), len(TILE_CLASSES)), np.float32)
    for i, code in enumerate(codes):
        probs[i, TILE_CLASSES.index(code)] = 1.0
    return TileDetections(quads, np.ones(len(codes), np.float32), probs, probs.argmax(1),
                          uncertain=None if uncertain is None else np.asarray(uncertain))


def test_annotate_tiles_and_table():
    image = np.full((600, 800, 3), 90, np.uint8)
    det = _detections(["R7", "R8", "J", "K1", "B5", "O2"],
                      [(100, 100), (140, 100), (180, 100), (100, 300), (140, 300), (500, 500)],
                      uncertain=[False, False, False, False, True, False])
    plain = TableAnnotator().annotate(image, det)
    assert plain.shape == image.shape and plain.dtype == np.uint8
    assert (plain != image).any()
    assert (image == 90).all()  # the input is left alone
    table = SimpleNamespace(
        detections=det, sets=[[0, 1, 2], [3, 4]], loose=[5], table_valid=False,
        verdicts=[SimpleNamespace(valid=True, kind="run", reasons=[], jokers=["R9"], value=24),
                  SimpleNamespace(valid=False, kind=None, reasons=["a set needs 3 tiles"],
                                  jokers=[], value=None)],
        suggestion=None, warnings=[])
    judged = TableAnnotator().annotate(image, det, table)
    assert judged.shape == image.shape
    assert (judged != plain).any()
    # an invalid set's outline is red, a valid one's green
    red = (judged[..., 2] > 180) & (judged[..., 1] < 60) & (judged[..., 0] < 60)
    green = (judged[..., 1] > 150) & (judged[..., 2] < 80) & (judged[..., 0] < 80)
    assert red.sum() > 50 and green.sum() > 50
    assert TableAnnotator()._joker_texts(table, det.codes) == {2: "J=R9"}


@pytest.mark.parametrize("outline", [
    [(100, 100), (159, 100), (159, 182), (100, 182)],
    [(300.4, 90.2), (352.7, 121.9), (310.1, 192.3), (257.8, 160.6)],  # turned, sub-pixel
])
def test_loose_tile_dashes_drawn_in_one_call_look_as_dash_by_dash(outline):
    dash = 6.0
    segments = TableAnnotator.dash_segments(outline, dash)
    # every other step of about `dash` pixels along each of the four sides
    perimeter = sum(np.hypot(*np.subtract(outline[i - 1], outline[i])) for i in range(4))
    assert abs(len(segments) - perimeter / dash / 2) <= 4
    lengths = np.hypot(*(segments[:, 1] - segments[:, 0]).T)
    assert lengths.max() <= dash + 2 and np.median(lengths) >= dash - 2
    one_call = np.zeros((300, 450, 3), np.uint8)
    TableAnnotator._dashed(one_call, outline, LOOSE, 2, dash)
    by_dash = np.zeros_like(one_call)
    for start, end in segments:
        cv2.line(by_dash, tuple(map(int, start)), tuple(map(int, end)), LOOSE, 2, cv2.LINE_AA)
    assert np.array_equal(one_call, by_dash)
    # several loose tiles at once: the dashes of each, one after the other
    shifted = np.float32(outline) + (40, 60)
    both = TableAnnotator.dash_segments(np.stack([np.float32(outline), shifted]), dash)
    assert np.array_equal(both, np.concatenate([segments, TableAnnotator.dash_segments(shifted,
                                                                                        dash)]))


def test_annotate_scales_with_photo():
    def banner_rows(picture):
        return int(np.all(picture[:, 0] == (60, 60, 60), axis=1).sum())

    small = TableAnnotator().annotate(np.zeros((300, 400, 3), np.uint8),
                                      _detections(["K13"], [(200, 150)]))
    big = TableAnnotator().annotate(np.zeros((3024, 4032, 3), np.uint8),
                                    _detections(["K13"], [(2000, 1500)]))
    assert banner_rows(small) > 5
    assert banner_rows(big) > 3 * banner_rows(small)


# -- with the real models ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def reader():
    if not HAVE_MODELS:
        pytest.skip(f"no models in {MODELS_DIR}")
    return TileReader.load()


@needs_models
@pytest.mark.skipif(not SAMPLES, reason="no sample_images/")
def test_sample_images(reader):
    for path in SAMPLES[:4]:
        det = reader.read_bytes(path.read_bytes())
        assert det.class_probs.shape == (len(det), len(reader.labels))
        for quad in det.corners:
            assert signed_area(quad) > 0, f"{path.name}: corners not clockwise"
        json_tiles = det.to_json()
        assert [t["id"] for t in json_tiles] == list(range(len(det)))


@needs_models
@pytest.mark.skipif(not SAMPLES, reason="no sample_images/")
def test_a_16_megapixel_photo_reads_as_its_1000_px_original(reader):
    from vision.recognition.decode import Photo

    original = cv2.imread(str(REPO_ROOT / "sample_images" / "table_runs_groups.jpg"))
    expected = reader.read(original)
    big = cv2.resize(original, (4624, 3468), interpolation=cv2.INTER_CUBIC)
    photo = Photo.from_bytes(cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 90])[1])
    got = reader.read(photo)  # detected on a 1/8 decode, tiles cropped where they stay sharp
    assert len(expected) >= 10
    assert sorted(got.codes) == sorted(expected.codes)
    scale = np.float32([4624 / original.shape[1], 3468 / original.shape[0]])
    pairs = match_centres(got.centers, [(q + 0.5) * scale - 0.5 for q in expected.corners])
    assert len(pairs) == len(expected)
    assert all(got.codes[i] == expected.codes[j] for i, j in pairs)


@pytest.mark.parametrize("width, height, factor", [
    (1000, 750, 1), (4032, 3024, 4), (4624, 3468, 4), (8160, 6120, 8), (1500, 1000, 1)])
def test_the_detector_reads_a_decode_of_at_least_one_and_a_half_times_its_input(
        width, height, factor):
    from vision.recognition.decode import Header, Photo
    from vision.recognition.pipeline import detection_reduction

    photo = Photo(b"", Header("JPEG", width, height))
    assert detection_reduction(photo, SimpleNamespace(long_side=512)) == factor
    assert detection_reduction(photo, object()) == 1  # a detector that does not say: whole


def test_tiles_are_cropped_from_a_decode_where_each_fills_the_crop():
    from vision.recognition.pipeline import crop_reduction

    def tile(width, height):
        return np.float32([[0, 0], [width, 0], [width, height], [0, height]])

    crop = (32, 44)
    assert crop_reduction([tile(40, 55)], crop) == 1  # a 1000 px photo: read as it is
    assert crop_reduction([tile(160, 220)], crop) == 4  # 4x bigger: a 1/4 decode still holds it
    assert crop_reduction([tile(160, 220), tile(60, 82)], crop) == 2  # the smallest decides
    assert crop_reduction([tile(1000, 1400)], crop) == 8
    assert crop_reduction([tile(1000, 1400)], crop, coarsest=4) == 4  # never past the detector's
    assert crop_reduction([tile(20, 27)], crop) == 1  # tiny: the whole photo


@needs_models
def test_blank_table_has_no_tiles(reader):
    rng = np.random.default_rng(0)
    wood = np.zeros((750, 1000, 3), np.uint8)
    wood[:] = (40, 70, 110)
    wood = cv2.add(wood, rng.integers(0, 25, wood.shape, dtype=np.uint8))
    assert len(reader.read(wood)) == 0
    assert len(reader.read(np.full((750, 1000, 3), 245, np.uint8))) == 0


@needs_models
def test_real_valid_photos(reader, real_photos_dir):
    from training.real_data import load_split

    photos = {p.key: p for p in load_split("valid", real_photos_dir)}
    for key in ("rummy-36", "rummy2-2", "rummy4-1"):
        if key not in photos:
            continue
        photo = photos[key]
        det = reader.read(photo.read())
        centres = det.centers
        pairs = match_centres(centres, [t.polygon for t in photo.tiles])
        assert len(pairs) >= 0.9 * len(photo.tiles), key
        assert len(det) <= len(photo.tiles) + 2, key
        for quad in det.corners:
            assert signed_area(quad) > 0
    for key, photo in photos.items():
        if key.startswith("rummyBackground"):
            assert len(reader.read(photo.read())) == 0, key
            break


class FixedBoxes:
    """A detector that finds exactly the boxes it is given."""

    def __init__(self, quads):
        self.quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)

    def detect(self, image):
        return self.quads, np.ones(len(self.quads), np.float32)


@needs_models
@pytest.mark.parametrize("edition, seed", [("white-teal", 43), ("white-red-orange", 42)])
def test_tiles_whose_boxes_lie_across_them_are_read_thanks_to_the_second_look(
        reader, edition, seed):
    # On a rack or a low table a tile can look nearly square, and the detector's box may
    # then run its long side along the tile's width: the crop shows the number on its side.
    pytest.importorskip("PIL")
    from bench import calibrate_bench as render
    from vision.recognition.classify import quarter_turned

    rng = np.random.default_rng(seed)
    ed = render.EDITIONS[edition]
    photo = render.render_tiles_photo(rng, ed, render.random_rows(rng, ed, 3, 8), tilt=0.1)
    sideways = quarter_turned(photo.quads)
    centres = photo.quads.mean(axis=1)

    def read(second_look_below):
        # Every box is kept (reject_below 0): this pins what the second look reads; that it
        # never rescues a find the first look drops is pinned apart, with fakes, above.
        r = TileReader(FixedBoxes(sideways), reader.classifier, reject_below=0.0,
                       second_look_below=second_look_below)
        det = r.read(photo.image)
        tile = [int(np.argmin(np.linalg.norm(centres - c, axis=1))) for c in det.centers]
        right = sum(det.codes[i] == photo.codes[k] for i, k in enumerate(tile))
        return det, tile, right

    once, _tile, right_once = read(0.0)
    det, tile, right = read(reader.second_look_below)
    assert right >= 0.9 * len(photo.codes) and right_once < 0.3 * len(photo.codes), (
        right, right_once)
    assert len(det) == len(once)  # the same finds kept: the first look decides that
    # Where the second look changed the reading, the corners returned follow the tile: its
    # top edge where the tile's top is (a joker read as a joker either way keeps its box).
    changed = np.flatnonzero(np.array(det.codes) != np.array(once.codes))
    assert len(changed) >= 0.7 * len(photo.codes)
    tile = np.array(tile)[changed]
    tops = (det.corners[changed, 0] + det.corners[changed, 1]) / 2
    true_tops = (photo.quads[tile, 0] + photo.quads[tile, 1]) / 2
    heights = np.linalg.norm(photo.quads[tile, 3] - photo.quads[tile, 0], axis=1)
    assert (np.linalg.norm(tops - true_tops, axis=1) < 0.3 * heights).mean() >= 0.9


@needs_models
def test_real_cream_photos_read_the_same_with_the_second_look(reader, real_photos_dir):
    from training.real_data import load_split

    once = TileReader(reader.detector, reader.classifier, reject_below=reader.reject_below,
                      second_look_below=0)
    looked_again = 0
    for photo in load_split("valid", real_photos_dir):
        image = photo.read()
        det, plain = reader.read(image), once.read(image)
        looked_again += reader.last_second_looks[0]
        assert len(det) == len(plain), photo.key
        pairs = match_centres(det.centers, [t.polygon for t in photo.tiles])
        for d, _k in pairs:  # every labelled tile: same reading, same corners
            assert det.codes[d] == plain.codes[d], photo.key
            np.testing.assert_allclose(det.corners[d], plain.corners[d])
    assert looked_again <= 20  # few real crops are unsure (4 of the 479 finds kept)


def test_scan_photo_path_missing(tmp_path):
    from vision.recognition.decode import PhotoError, read_photo

    with pytest.raises(PhotoError, match="nope.jpg"):
        read_photo(Path(tmp_path) / "nope.jpg")


@needs_models
def test_calibration_never_drops_a_true_training_tile(real_photos_dir):
    from training.calibrate import calibrate
    from training.real_data import load_split

    photos = [p for p in load_split("train") if p.key in ("rummy-35", "rummy2-13", "rummy4-8")]
    spec = calibrate(MODELS_DIR, photos)
    assert spec["train_true_tiles"] >= sum(len(p.tiles) for p in photos) - 1
    assert spec["train_true_tiles_dropped"] == 0
    assert 0 < spec["reject_below"] < 1


# -- the scan JSON, built with fewer calls, is the same text ---------------------------------
def _tiles_json_one_value_at_a_time(det: TileDetections) -> list[dict]:
    from vision.recognition.labels import split_code

    tiles = []
    for i, (code, conf) in enumerate(zip(det.codes, det.confidence, strict=True)):
        color, number, joker = split_code(code)
        tiles.append({"id": i, "color": color, "number": number, "joker": joker,
                      "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in det.corners[i]],
                      "confidence": round(float(conf), 4), "uncertain": bool(det.uncertain[i])})
    return tiles


def _flat_as_written(value) -> bool:
    if isinstance(value, list):
        return all(not isinstance(v, dict) and _flat_as_written(v) for v in value)
    if isinstance(value, dict):
        return all(_flat_as_written(v) for v in value.values())
    return True


def test_the_tiles_json_is_the_same_as_one_value_at_a_time():
    rng = np.random.default_rng(5)
    n = 60
    # corners on and around the halves where rounding to 0.1 could go either way
    corners = (rng.integers(0, 20000, (n, 4, 2)) / 20).astype(np.float32)
    corners[:5] += np.float32(0.05)
    probs = rng.dirichlet(np.ones(len(TILE_CLASSES)), n).astype(np.float32)
    det = TileDetections(corners, rng.random(n).astype(np.float32), probs,
                         probs.argmax(1).astype(np.int64), TILE_CLASSES, rng.random(n) < 0.3)
    assert det.to_json() == _tiles_json_one_value_at_a_time(det)
    assert TileDetections.empty().to_json() == []


def test_what_is_written_on_one_line_is_decided_as_before():
    from app.cli.photos import _flat, to_json_text

    values = [1, "a", None, [], {}, [1, 2.5, [3, [4]]], {"a": [1, {"b": 2}]}, [{"a": 1}],
              {"a": {"b": [1, 2]}}, [[{"x": 1}]], {"tiles": [{"corners": [[1.0, 2.0]]}]},
              [1, [2, {"c": 3}]], {"k": (1, 2)}, [True, False, None, "é"]]
    for value in values:
        assert _flat(value) == _flat_as_written(value), value
    assert to_json_text([{"photo": "é.jpg", "tiles": [{"id": 0, "corners": [[1.0, 2.5]]}],
                          "sets": []}]) == (
        '[\n {\n  "photo": "é.jpg",\n  "tiles": [\n   {"id": 0, "corners": [[1.0, 2.5]]}\n  ],\n'
        '  "sets": []\n }\n]')


# -- a find whose body is unlike the other finds' is no tile ---------------------------------
CREAM, WOOD = (200, 225, 240), (60, 110, 170)  # BGR


def tile_crop(body, ink=(30, 30, 30), text="7", light=1.0, seed=0):
    """A 44 x 32 crop like the classifier's: a body, a number, some noise, a light level."""
    rng = np.random.default_rng(seed)
    crop = np.empty((44, 32, 3), np.uint8)
    crop[:] = body
    cv2.putText(crop, text, (6, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, ink, 2)
    crop = crop * light + rng.normal(0, 3, crop.shape)
    return np.clip(crop, 0, 255).astype(np.uint8)


def test_a_find_whose_body_is_unlike_the_other_finds_is_no_tile():
    from vision.recognition.pipeline import unlike_the_other_finds

    tiles = [tile_crop(CREAM, text=str(k), seed=k) for k in range(1, 9)]
    shadowed = tile_crop(CREAM, ink=(40, 40, 200), text="12", light=0.45, seed=20)
    sunlit = tile_crop(CREAM, text="3", light=1.3, seed=21)
    sticker = tile_crop(WOOD, ink=(160, 120, 230), text="o", seed=22)  # pink on wood
    crops = np.stack([*tiles, shadowed, sunlit, sticker])
    centres = np.float32([[40 * k, 30 * (k % 3)] for k in range(len(crops))])
    # shadow and bright light change a body's brightness, not its colour
    assert unlike_the_other_finds(crops, centres).tolist() == [False] * 10 + [True]
    # too few finds to know what the tiles look like
    pick = [0, 1, 2, 3, 4, 10]
    assert not unlike_the_other_finds(crops[pick], centres[pick]).any()
    # when many finds are unlike the rest, which are the tiles is not clear: none is dropped
    many = np.stack([*tiles[:6], *(tile_crop(WOOD, seed=s) for s in range(30, 33))])
    assert not unlike_the_other_finds(many, centres[:9]).any()


def test_a_lamp_on_one_side_and_daylight_on_the_other_leave_the_tiles_tiles():
    from vision.recognition.pipeline import unlike_the_other_finds

    # 12 tiles across the table, warm (more red, less blue) on the left, cool on the right,
    # and a sticker in the middle: only the sticker is no tile
    warm, cool = np.float32([0.6, 0.95, 1.3]), np.float32([1.25, 1.0, 0.75])
    crops, centres = [], []
    for k in range(12):
        t = k / 11
        tint = (1 - t) * warm + t * cool
        body = np.float32(CREAM) * 0.75 * tint  # 0.75: the lamp's red stays under 255
        crops.append(tile_crop(tuple(body.tolist()), text=str(k + 1), seed=k))
        centres.append((80 * k, 40 * (k % 2)))
    crops.append(tile_crop(WOOD, ink=(160, 120, 230), text="o", seed=40))
    centres.append((440, 20))
    unlike = unlike_the_other_finds(np.stack(crops), np.float32(centres))
    assert unlike.tolist() == [False] * 12 + [True]


def test_the_reader_drops_a_find_whose_body_is_unlike_the_other_tiles():
    quads = [square(30 + 40 * k, 50) for k in range(9)]
    image = np.zeros((100, 400, 3), np.uint8)

    class CropsToo(FakeClassifier):
        def classify(self, image, quads):
            # the last find is a sticker on the wooden table
            self.last_crops = np.stack([tile_crop(WOOD if k == len(quads) - 1 else CREAM,
                                                  seed=k) for k in range(len(quads))])
            return super().classify(image, quads)

    codes = ["R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "J"]
    det = TileReader(FakeDetector(quads), CropsToo(codes)).read(image)
    assert det.codes == codes[:-1]


def test_the_room_lights_of_the_light_eval_tint_and_darken_as_named():
    from bench import eval_light

    gray = np.full((60, 100, 3), 150, np.uint8)
    lamp = eval_light.lamp_and_window(1.0)(gray).astype(int)
    left, right = lamp[:, 0], lamp[:, -1]
    assert (left[:, 2] > left[:, 0]).all() and (right[:, 0] > right[:, 2]).all()  # warm, cool
    shade = eval_light.arm_shadow(gray).astype(int)
    assert shade[-1].mean() < 0.5 * shade[0].mean()
    spot = eval_light.spotlight(gray).astype(int)
    assert spot[30, 50].mean() > 1.5 * spot[0, 0].mean()


@pytest.mark.parametrize("light", ["lamp one side, window other", "the same x1.5"])
def test_real_photos_lit_by_a_lamp_and_a_window_keep_every_tile(reader, real_photos_dir, light):
    # The light changes the tiles' colour across the table: the body-colour rule must fit
    # that, not take the far side's tiles for stickers.
    from bench import eval_light
    from training.real_data import load_split

    relight = dict(eval_light.LIGHTS)[light]
    photos = load_split("valid")
    for photo in photos:
        image = photo.read()
        det = reader.read(relight(image))
        pairs = match_centres(det.centers, [t.polygon for t in photo.tiles],
                              np.argsort(-det.detector_scores))
        assert len(pairs) == len(photo.tiles), photo.key
        assert all(det.codes[d] == photo.tiles[k].code for d, k in pairs), photo.key


def test_a_tile_as_json_gives_its_code_back():
    from vision.recognition.labels import TILE_CLASSES, code_from_json, split_code

    for code in TILE_CLASSES:
        color, number, joker = split_code(code)
        assert code_from_json({"color": color, "number": number, "joker": joker}) == code
    assert code_from_json({"color": "yellow", "number": 7, "joker": False}) == "O7"
