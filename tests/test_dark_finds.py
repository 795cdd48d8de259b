"""Finds far darker and smaller than the surest of them are no tiles
(`vision.recognition.body_colour.dark_small_finds`, issue #19): the letters of a stand's
embossed logo seen close, found beside the few tiles a close-up holds."""

from __future__ import annotations

import numpy as np

from tests.table_helpers import read_white_rack
from tests.test_pipeline import FakeClassifier, FakeDetector
from vision.recognition.body_colour import dark_small_finds, face_brightness
from vision.recognition.pipeline import TileReader


def test_dark_small_finds_beside_the_surest_are_named():
    # two tiles, sure and bright; five logo letters, dark, a quarter as tall, less sure
    brightness = np.array([220, 230, 40, 45, 38, 50, 42.0])
    heights = np.array([800, 750, 180, 190, 170, 200, 185.0])
    sure = np.array([0.95, 0.94, 0.6, 0.55, 0.5, 0.7, 0.5])
    assert dark_small_finds(brightness, heights, sure).tolist() == [False] * 2 + [True] * 5


def test_a_tile_in_deep_shade_or_far_away_is_still_a_tile():
    sure = np.array([0.95, 0.94, 0.9, 0.6])
    # in deep shade but as tall as the others
    assert not dark_small_finds(np.array([220, 230, 225, 60.0]),
                                np.array([200, 210, 205, 190.0]), sure).any()
    # far away (a third as tall) but as bright
    assert not dark_small_finds(np.array([220, 230, 225, 200.0]),
                                np.array([200, 210, 205, 70.0]), sure).any()
    # one find alone has nothing to be compared with
    assert not dark_small_finds(np.array([10.0]), np.array([5.0]), np.array([0.9])).any()


def test_face_brightness_reads_the_middle_of_each_box():
    image = np.zeros((100, 200, 3), np.uint8)
    image[10:90, 10:70] = 230  # a white face...
    image[12:20, 12:68] = 0  # ...with a dark band along its top edge (outside the middle)
    quads = np.float32([[[10, 10], [70, 10], [70, 90], [10, 90]],
                        [[120, 40], [140, 40], [140, 60], [120, 60]]])
    assert face_brightness(image, quads).tolist() == [230.0, 0.0]


def test_the_reader_leaves_out_a_logos_letters_found_beside_two_tiles():
    image = np.zeros((400, 600, 3), np.uint8)
    image[:] = 30  # the black stand's beam
    tiles = [np.float32([[x, 40], [x + 120, 40], [x + 120, 200], [x, 200]]) for x in (40, 180)]
    image[40:200, 40:300] = 225
    letters = [np.float32([[x, 260], [x + 30, 260], [x + 30, 300], [x, 300]])
               for x in range(60, 400, 50)]
    codes = ["K12", "B12"] + ["K8", "K6"] * 4

    class LettersUnsure(FakeClassifier):
        def classify(self, image, quads):
            upright, probs = super().classify(image, quads)
            probs[2:] = np.where(probs[2:] == probs[2:].max(axis=1, keepdims=True), 0.6,
                                 0.4 / (probs.shape[1] - 1))
            return upright, probs

    det = TileReader(FakeDetector(tiles + letters), LettersUnsure(codes),
                     plane_view=False).read(image)
    assert det.codes == ["K12", "B12"]
    # as bright as the tiles, the same small finds stay
    image[250:310] = 225
    det = TileReader(FakeDetector(tiles + letters), LettersUnsure(codes),
                     plane_view=False).read(image)
    assert len(det) == 2 + len(letters)


def test_a_close_up_of_a_stand_is_not_refused_for_its_logos_letters():
    # bench.eval_white_racks' seed 770,039 (16 MP): a close-up of two tiles at the left end
    # of a black stand, its embossed logo big below them. The logo's letters were found as
    # eight tiles, and the quality gate, measuring them, refused the photo as too blurred.
    from vision.recognition.plane_view import points_in_quads

    scene, rack = read_white_rack(770_039)
    standing = np.stack([t.quad for t in scene.tiles if t.standing])
    on = points_in_quads(rack.detections.centers, standing).any(axis=1)
    assert on.all() and sorted(rack.codes) == ["B12", "K12"]
