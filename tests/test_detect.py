"""vision.recognition.detect: quad ordering convention, and the shipped detector on real photos.

Runs without torch. The real-photo checks skip cleanly when ../shared/data is missing.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.recognition.detect import TileDetector, order_quad, quads_from_boxes
from vision.recognition.settings import MODELS_DIR


def _signed_area(quad):
    x, y = quad[:, 0], quad[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _check_convention(quad, long_=40.0, short=28.0):
    quad = np.asarray(quad, np.float64)
    # clockwise on screen (y down) = positive shoelace area
    assert _signed_area(quad) > 0
    # q0-q1 (top edge) and q2-q3 are the short sides, q1-q2 and q3-q0 the long ones
    assert np.linalg.norm(quad[1] - quad[0]) == pytest.approx(short, abs=1e-3)
    assert np.linalg.norm(quad[2] - quad[1]) == pytest.approx(long_, abs=1e-3)
    # "up" (bottom edge -> top edge) points towards the photo's top (-y), or sideways
    up = (quad[0] + quad[1]) / 2 - (quad[2] + quad[3]) / 2
    assert up[1] <= 1e-6


def test_upright_tile_quad():
    quad = quads_from_boxes(100, 200, 40, 28, math.pi / 2)[0]
    np.testing.assert_allclose(quad, [[86, 180], [114, 180], [114, 220], [86, 220]], atol=1e-4)
    # the long axis given the other way round gives the same quad
    np.testing.assert_allclose(quads_from_boxes(100, 200, 40, 28, -math.pi / 2)[0], quad, atol=1e-4)


def test_lying_tile_quad_is_turned_so_up_is_sideways_or_top():
    quad = quads_from_boxes(100, 200, 40, 28, 0.0)[0]  # long side horizontal
    _check_convention(quad)


@pytest.mark.parametrize("degrees", [0, 10, 30, 45, 60, 89, 91, 120, 170, 180, 200, 269, 271, 300, 350])
def test_convention_at_every_angle(degrees):
    phi = math.radians(degrees)
    quad = quads_from_boxes(300, 300, 40, 28, phi)[0]
    _check_convention(quad)
    # the top edge is the one nearer the photo's top
    assert (quad[0, 1] + quad[1, 1]) <= (quad[2, 1] + quad[3, 1]) + 1e-6
    # the same rectangle from minAreaRect in any corner order gives the same quad
    box = cv2.boxPoints(((300, 300), (40, 28), degrees))  # width 40 along `degrees`
    for shift in range(4):
        np.testing.assert_allclose(order_quad(np.roll(box, shift, axis=0)), quad, atol=1e-3)


def _detector():
    if not (MODELS_DIR / "detector.onnx").exists() or not (MODELS_DIR / "detector.json").exists():
        pytest.skip("models/detector.onnx not built (run `make train`)")
    return TileDetector.load(MODELS_DIR)


def test_detect_output_types_on_blank_image():
    detector = _detector()
    for shape in [(750, 1000, 3), (1000, 750, 3), (37, 53, 3)]:
        quads, scores = detector.detect(np.full(shape, 90, np.uint8))
        assert quads.dtype == np.float32 and scores.dtype == np.float32
        assert quads.shape[1:] == (4, 2) and len(quads) == len(scores)
        assert len(quads) == 0


def _photos(real_photos_dir, prefix):
    from training.real_data import load_split

    photos = [p for p in load_split("valid", real_photos_dir) if p.prefix == prefix]
    if not photos:
        pytest.skip(f"no valid/{prefix} photos")
    return photos


@pytest.mark.parametrize("prefix", ["rummy", "rummy2", "rummy3", "rummy4"])
def test_finds_tiles_in_real_photo(real_photos_dir, prefix):
    detector = _detector()
    photo = _photos(real_photos_dir, prefix)[0]
    image = photo.read()
    quads, scores = detector.detect(image)
    polygons = [t.polygon.astype(np.float32) for t in photo.tiles]
    found = 0
    for poly in polygons:
        inside = [cv2.pointPolygonTest(poly, tuple(map(float, q.mean(0))), False) >= 0 for q in quads]
        found += any(inside)
    assert found >= 0.95 * len(polygons), f"{photo.key}: found {found} of {len(polygons)} tiles"
    # most detections sit on a labelled tile
    on_tile = sum(
        any(cv2.pointPolygonTest(p, tuple(map(float, q.mean(0))), False) >= 0 for p in polygons)
        for q in quads
    )
    assert on_tile >= 0.95 * len(quads)
    for q in quads:
        _check_convention(q, np.linalg.norm(q[2] - q[1]), np.linalg.norm(q[1] - q[0]))
    # a tile's detected size is close to its label's
    if len(quads):
        areas = np.array([cv2.contourArea(q) for q in quads])
        label_area = np.median([cv2.contourArea(p) for p in polygons])
        assert 0.6 < np.median(areas) / label_area < 1.6


def test_rotated_photo_gives_the_same_tiles(real_photos_dir):
    detector = _detector()
    photo = _photos(real_photos_dir, "rummy2")[0]
    image = photo.read()
    quads, _ = detector.detect(image)
    turned, _ = detector.detect(cv2.rotate(image, cv2.ROTATE_180))
    assert abs(len(quads) - len(turned)) <= 1


def test_empty_background_gives_no_tiles(real_photos_dir):
    detector = _detector()
    for photo in _photos(real_photos_dir, "rummyBackground"):
        quads, scores = detector.detect(photo.read())
        assert len(quads) == 0, f"{photo.key}: {len(quads)} tiles on an empty table (scores {scores})"


SAMPLES = sorted((MODELS_DIR.parent / "sample_images").glob("*.json"))


@pytest.mark.skipif(not SAMPLES, reason="no sample_images/*.json")
def test_finds_the_tiles_of_the_rendered_samples():
    import json

    from vision.recognition.decode import read_photo

    detector = _detector()
    labelled = found = detections = on_tile = 0
    for path in SAMPLES:
        meta = json.loads(path.read_text())
        image = read_photo(path.with_name(meta["photo"]))
        h, w = image.shape[:2]
        frame = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        polygons = []
        for tile in meta["tiles"]:
            quad = np.asarray(tile["corners"], np.float32)
            area, visible = cv2.intersectConvexConvex(quad, frame)
            if visible is not None and area >= 0.6 * abs(cv2.contourArea(quad)):
                polygons.append(visible.reshape(-1, 2))
        quads, _ = detector.detect(image)
        centres = [tuple(map(float, q.mean(0))) for q in quads]
        labelled += len(polygons)
        found += sum(any(cv2.pointPolygonTest(p, c, False) >= 0 for c in centres) for p in polygons)
        detections += len(quads)
        on_tile += sum(any(cv2.pointPolygonTest(p, c, False) >= -2 for p in polygons) for c in centres)
    assert found >= 0.9 * labelled, f"found {found} of {labelled} rendered tiles"
    assert on_tile >= 0.9 * detections, f"{detections - on_tile} of {detections} detections off any tile"


# -- the detector's input array, kept per thread ------------------------------------------------
def _scene(shape, seed=3):
    """A photo-like image with edges at every scale (blurred noise + sharp rectangles)."""
    rng = np.random.default_rng(seed)
    image = cv2.GaussianBlur(rng.integers(0, 256, shape, dtype=np.uint8), (0, 0), 2.0)
    for _ in range(60):
        x, y = int(rng.integers(0, shape[1] - 40)), int(rng.integers(0, shape[0] - 50))
        cv2.rectangle(image, (x, y), (x + 30, y + 42), tuple(int(v) for v in rng.integers(0, 256, 3)), -1)
    return image


def test_a_reused_input_gives_the_same_input_and_tiles(real_photos_dir):
    detector = _detector()
    photo = _photos(real_photos_dir, "rummy")[0]
    image = photo.read()
    fresh = detector.prepare(image)[0]
    again = detector.prepare(image, reuse=True)[0]
    np.testing.assert_array_equal(fresh, again)
    assert detector.prepare(image, reuse=True)[0] is again  # the same array, kept
    assert detector.prepare(image)[0] is not again
    quads, scores = detector.detect(image)
    quads2, scores2 = detector.detect(image.copy())
    np.testing.assert_array_equal(quads, quads2)
    np.testing.assert_array_equal(scores, scores2)


def test_threads_sharing_a_detector_each_write_their_own_input():
    import threading

    detector = _detector()
    images = [_scene((750, 1000, 3), seed) for seed in (1, 2)]
    expected = [detector.prepare(image)[0] for image in images]
    errors = []

    def work(k):
        for _ in range(20):
            x = detector.prepare(images[k], reuse=True)[0]
            if not np.array_equal(x, expected[k]):
                errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


@pytest.mark.parametrize(("size", "planes", "scale"), [
    ((1000, 750), (500, 375), 0.5),  # a whole factor near 512: area averaging's fast path
    ((4032, 3024), (504, 378), 0.125),  # ... as for a 12 MP photo
    ((1200, 900), (512, 384), 512 / 1200),  # 2.34x: no whole factor is near, plain 512
    ((400, 300), (512, 384), 512 / 400),  # small photos are enlarged to 512
])
def test_the_detector_input_takes_a_whole_factor_when_one_lands_near_its_side(size, planes,
                                                                              scale):
    detector = _detector()
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    x, (sx, sy) = detector.prepare(image)
    w, h = planes
    assert (sx, sy) == pytest.approx((w / size[0], h / size[1]))
    assert sx == pytest.approx(scale, rel=0.01)
    assert x.shape[2] % 32 == 0 and x.shape[3] % 32 == 0
    assert (x[0, :, h:, :] == detector.pad_value[:, None, None]).all()
    if size[0] < 2.1 * w:  # larger photos are first halved with pyrDown (a blur of its own)
        expected = cv2.resize(image, planes, interpolation=cv2.INTER_AREA
                              if size[0] > w else cv2.INTER_LINEAR)
        np.testing.assert_array_equal(x[0, :, :h, :w], expected.transpose(2, 0, 1))
