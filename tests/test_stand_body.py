"""A hand over a rack's stand, seen against the stand's own body (`vision.game.stand_body`):
a skin-coloured piece where only the stand or a tile can be is a hand, even where it is
pale like the table beside the stand; a stand coloured like skin, or like the table,
cannot be told from a hand by colour, so nothing is measured there.

The synthetic pictures are the rule's guards; the real ones are `bench.eval_real_racks`'
painted hands over the dataset's black rack, read silently with a wrong total before."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.game import cover, stand_body

SKIN = (140, 170, 220)  # BGR: Lab chroma about 26 at hue 57 degrees, mid-way in skin's range


def _rack(stand_bgr=(40, 40, 40), hand: bool = False, table=(225, 228, 230)):
    """(a 320x240 picture of five cream tiles standing in front of a stand's back on a
    table, their quads): the stand's back rises behind the tiles as on a real rack."""
    rng = np.random.default_rng(0)
    picture = np.empty((240, 320, 3), np.float32)
    picture[:] = table
    picture += rng.normal(0, 2, picture.shape)
    cv2.rectangle(picture, (40, 90), (280, 170), stand_bgr, -1)
    quads = []
    for x in (60, 90, 120, 200, 230):
        cv2.rectangle(picture, (x, 100), (x + 22, 130), (200, 225, 235), -1)
        quads.append([[x, 100], [x + 22, 100], [x + 22, 130], [x, 130]])
    if hand:
        cv2.ellipse(picture, (165, 140), (30, 45), 0, 0, 360, SKIN, -1)
    return np.clip(picture, 0, 255).astype(np.uint8), np.array(quads, np.float32)


def _over(picture, quads) -> float:
    return stand_body.over_stand(picture, quads, np.ones(len(quads), bool))


def test_a_hand_over_a_black_stand_is_measured_there_and_a_bare_stand_is_not():
    assert _over(*_rack(hand=True)) >= stand_body.MAX_OVER
    assert _over(*_rack()) == 0.0


@pytest.mark.parametrize("stand_bgr", [(60, 110, 160), (215, 220, 222)],
                         ids=["a skin-hued stand", "a stand the table's colour"])
def test_a_stand_that_cannot_be_told_from_a_hand_or_the_table_measures_nothing(stand_bgr):
    # a brown stand's empty ledges are skin-coloured (white 780,014), and a white stand on a
    # white table has no body apart from the table: a hand there is for the other rules
    assert _over(*_rack(stand_bgr, hand=True)) == 0.0


def test_no_stand_tile_measures_nothing():
    picture, quads = _rack(hand=True)
    assert stand_body.over_stand(picture, quads, np.zeros(len(quads), bool)) == 0.0


def test_the_piece_over_the_stand_refuses_a_rack_photo_only():
    over = cover.Cover(area=0.0, tiles=5, area_over=0.0, over_stand=stand_body.MAX_OVER)
    assert over.problems(rack=True) == ["covered"] and over.doubts(rack=True) == []
    assert over.problems() == []  # a table photo is judged on its own measures
    under = cover.Cover(area=0.0, tiles=5, area_over=0.0,
                        over_stand=stand_body.MAX_OVER - 0.1)
    assert under.problems(rack=True) == []
    assert over.to_json()["over_stand"] == stand_body.MAX_OVER
    assert "over_stand" not in cover.Cover(1.0, 5).to_json()


def test_a_table_photo_measures_nothing_over_a_stand():
    picture, quads = _rack(hand=True)
    assert cover.measure(picture, quads).over_stand is None
    assert cover.measure(picture, quads, np.ones(len(quads), bool)).over_stand >= \
        stand_body.MAX_OVER


# train/ photos of the black rack with the bench's painted hand of this kind: each was read
# silently with a wrong total before (the hand over the stand between the tiles left, pale
# or dark, beyond the table-colour rules' reach), and is refused now
SILENT_BEFORE = (("rummy3-13", "palm"), ("rummy3-12", "shadowed"), ("rummy3-14", "sleeve"))


@pytest.mark.parametrize("key,kind", SILENT_BEFORE)
def test_a_hand_over_a_real_racks_body_is_refused(real_photos_dir, tile_reader, key, kind):
    from bench.eval_real_racks import RACK_PHOTOS, _hands
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.real_data import load_split

    photo = next(p for p in load_split("train", real_photos_dir) if p.key == key)
    want = rack_penalty([Tile.from_code(t.code) for t in photo.tiles], DEFAULT_RULES)
    rows = _hands(tile_reader, "train", RACK_PHOTOS["train"].index(key), key, photo.read(),
                  want, print)
    assert next(r for r in rows if r["kind"] == kind)["read"] == "refused"


def test_the_real_racks_as_taken_show_nothing_over_their_stands(real_photos_dir, tile_reader):
    # the margin on clean photos: all 24 of the dataset's rack photos measure 0 tile areas
    # (so do their 408 variants: docs/decisions/covered-photo.md)
    from bench.eval_real_racks import RACK_PHOTOS
    from training.real_data import load_split
    from vision.recognition.decode import Photo

    for split, keys in RACK_PHOTOS.items():
        photos = {p.key: p for p in load_split(split, real_photos_dir)}
        for key in keys:
            photo = Photo.from_bytes(photos[key].path.read_bytes())
            measured = cover.check(photo, tile_reader.read(photo), rack=True)
            assert measured.over_stand == 0.0, key
