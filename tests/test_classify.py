"""vision.recognition.classify on labelled tiles: rendered samples and (when present) real
valid/ photos."""

import json

import numpy as np
import pytest

from vision.recognition.rectify import canonical_quad, rotate_quad_180
from vision.recognition.settings import MODELS_DIR, REPO_ROOT

HAVE_MODEL = (MODELS_DIR / "classifier.onnx").is_file()
pytestmark = pytest.mark.skipif(not HAVE_MODEL, reason=f"no classifier in {MODELS_DIR}")
SAMPLES = sorted((REPO_ROOT / "sample_images").glob("*.json"))


@pytest.fixture(scope="module")
def clf():
    from vision.recognition.classify import TileClassifier

    return TileClassifier.load()


def _sample(path):
    import cv2

    meta = json.loads(path.read_text())
    image = cv2.imread(str(path.with_name(meta["photo"])), cv2.IMREAD_COLOR)
    codes = [t["code"] for t in meta["tiles"]]
    quads = np.float32([t["corners"] for t in meta["tiles"]]).reshape(-1, 4, 2)
    return image, codes, quads


def test_sidecar_describes_the_model(clf):
    assert len(clf.labels) == 53 and clf.labels[-1] == "J"
    assert clf.size[0] < clf.size[1], "crops are portrait (width < height)"


@pytest.mark.skipif(not SAMPLES, reason="no sample_images/*.json")
def test_reads_the_sample_tiles_and_their_orientation(clf):
    right = total = upright_ok = 0
    for path in SAMPLES:
        image, codes, quads = _sample(path)
        if not codes:
            continue
        detector_order = np.stack([canonical_quad(q) for q in quads])
        upright, probs = clf.classify(image, detector_order)
        assert upright.shape == quads.shape and probs.shape == (len(codes), 53)
        assert np.allclose(probs.sum(1), 1, atol=1e-3)
        read = [clf.labels[i] for i in probs.argmax(1)]
        right += sum(a == b for a, b in zip(read, codes, strict=True))
        total += len(codes)
        # the returned top-left is the label's top-left (up to a pixel)
        upright_ok += int((np.abs(upright - quads).max(axis=(1, 2)) < 1.5).sum())
    assert right >= 0.95 * total, f"{right}/{total} sample tiles read right"
    assert upright_ok >= 0.95 * total, f"{upright_ok}/{total} orientations right"


@pytest.mark.skipif(not SAMPLES, reason="no sample_images/*.json")
def test_a_tile_turned_round_reads_the_same(clf):
    image, codes, quads = _sample(SAMPLES[0])
    up_a, p_a = clf.classify(image, quads)
    up_b, p_b = clf.classify(image, rotate_quad_180(quads))
    assert (p_a.argmax(1) == p_b.argmax(1)).mean() >= 0.95
    assert (np.abs(up_a - up_b).max(axis=(1, 2)) < 1e-3).mean() >= 0.95


def test_no_quads_gives_empty_arrays(clf):
    up, probs = clf.classify(np.zeros((100, 100, 3), np.uint8), np.zeros((0, 4, 2), np.float32))
    assert up.shape == (0, 4, 2) and probs.shape == (0, 53)


def test_real_valid_photos_with_label_quads(clf, real_photos_dir):
    from training.real_data import load_split, oriented_quad

    photos = [p for p in load_split("valid", real_photos_dir) if p.tiles][:6]
    right = total = 0
    for photo in photos:
        image = photo.read()
        quads = np.stack([canonical_quad(oriented_quad(t.polygon)) for t in photo.tiles])
        _, probs = clf.classify(image, quads)
        right += sum(clf.labels[i] == t.code for i, t in zip(probs.argmax(1), photo.tiles,
                                                              strict=True))
        total += len(photo.tiles)
    assert right >= 0.95 * total, f"{right}/{total} real tiles read right"
