"""A photo whose tiles are small for the detector is detected again at a finer scale."""

import cv2
import numpy as np
import pytest

from vision.recognition.fine_scale import finer_long_side, tile_lengths


def tiles_of_length(length, n=8):
    w = length * 0.72
    return np.float32([[[x, 0], [x + w, 0], [x + w, length], [x, length]]
                       for x in np.arange(n) * w * 1.05])


def test_tiles_small_in_the_detectors_input_ask_for_a_longer_input_side():
    assert tile_lengths(tiles_of_length(80))[0] == pytest.approx(80)
    # 80 px tiles in a 4000 px photo are 10 px in a 512 px input: 512 * 36 / 10.24 = 1800
    assert finer_long_side(512, 32, tiles_of_length(80), 4000) == 1792
    # tiles 6 px in the input: as fine as allowed, 2048
    assert finer_long_side(512, 32, tiles_of_length(48), 4000) == 2048


def test_tiles_long_enough_or_a_photo_without_more_pixels_get_no_second_pass():
    assert finer_long_side(512, 32, tiles_of_length(60), 1000) is None  # 31 px in the input
    # 17 px in the input, but the photo has only 600 px: 600 < 1.25 x 512
    assert finer_long_side(512, 32, tiles_of_length(20), 600) is None
    assert finer_long_side(512, 32, np.zeros((0, 4, 2), np.float32), 4000) is None


def test_a_large_table_photographed_whole_is_read_at_a_finer_scale():
    # Nine rendered tables side by side: one 3000x2250 photo, its tiles a third of their
    # usual share of the frame (about 10 px long in the detector's 512 px input).
    pytest.importorskip("PIL")
    from bench.eval_vision import match_centres
    from training.render import render_scene
    from vision.recognition.pipeline import TileReader

    canvas = np.zeros((2250, 3000, 3), np.uint8)
    labels = []
    for j in range(9):
        image, tiles = render_scene(np.random.default_rng(800 + j), width=1000, height=750,
                                    kind="table")
        oy, ox = (j // 3) * 750, (j % 3) * 1000
        canvas[oy:oy + 750, ox:ox + 1000] = image
        labels += [(code, quad + np.float32([ox, oy])) for code, quad in tiles]
    data = cv2.imencode(".jpg", canvas, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()

    def score(reader):
        det = reader.read_bytes(data)
        pairs = match_centres(det.centers, [q for _c, q in labels],
                              np.argsort(-det.detector_scores))
        return len(pairs), sum(det.codes[d] == labels[k][0] for d, k in pairs)

    finer, plain = TileReader.load(), TileReader.load(fine_scale=False)
    found, right = score(finer)
    assert finer.last_finer_side is not None and finer.last_finer_side > 512
    found_plain, right_plain = score(plain)
    assert plain.last_finer_side is None
    assert found >= 0.97 * len(labels) and right >= 0.95 * len(labels)
    assert found - found_plain >= 0.25 * len(labels)
