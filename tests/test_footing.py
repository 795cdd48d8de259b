"""What a rack photo's tiles stand on (`vision.game.footing.unheld`, issue #19).

Drawn pictures: a light table, a dark stand of two tiers, white tiles standing on it and
tiles lying past the stand's end in line with a tier, boxed as tall as the tier's (too
tall for the box rules). Then the cases where nothing may be named: a light stand, a
table that looks like the stand, a strip the photo's edge cuts, a back tier whose foot
lands on the tier in front. A rendered 16 MP white stand closes it. Last, the other way
round (`stand_elsewhere`): a row lying nearer the phone that the box rules took for the
stand."""

from __future__ import annotations

import argparse

import cv2
import numpy as np
import pytest

from tests.table_helpers import detections_from, phone_processed, read_white_rack
from vision.game.footing import stand_elsewhere, unheld
from vision.game.rack import read_rack
from vision.game.stand import off_the_rack
from vision.recognition.labels import split_code

W, H = 40, 56  # a standing tile's box
TABLE, STAND, TILE = (200, 205, 210), (25, 25, 28), (235, 235, 235)


def _row(n: int, x: int, foot: int, gap: int = 3) -> list[np.ndarray]:
    return [np.float32([[x + k * (W + gap), foot - H], [x + k * (W + gap) + W, foot - H],
                        [x + k * (W + gap) + W, foot], [x + k * (W + gap), foot]])
            for k in range(n)]


def _scene(table=TABLE, stand=STAND, lying_at: int = 420, size=(640, 480)):
    """(picture, boxes, True for each box lying past the stand's end): a stand from x 60 to
    380 of two tiers (feet at y 300 and 240), its beam 30 px tall under the front tier;
    three tiles lying on the table from `lying_at` in line with the front tier."""
    img = np.zeros((size[1], size[0], 3), np.uint8)
    img[:] = table
    cv2.rectangle(img, (60, 180), (380, 330), stand, -1)
    front, back = _row(6, 80, 300), _row(6, 85, 240)
    lying = _row(3, lying_at, 300, gap=6)
    boxes = front + back + lying
    for b in boxes:
        cv2.fillConvexPoly(img, np.round(b).astype(np.int32), TILE)
    return img, boxes, np.array([False] * 12 + [True] * 3)


def _detections(boxes):
    return detections_from(["R1"] * len(boxes), boxes)


def test_tiles_lying_past_the_stands_end_in_line_with_a_tier_stand_on_nothing():
    img, boxes, lying = _scene()
    d = _detections(boxes)
    assert unheld(d, np.zeros(len(d), bool), img).tolist() == lying.tolist()
    # and read_rack leaves them out of the rack when it has the photo, not without it
    assert sorted(read_rack(d, photo=img).off_rack) == [12, 13, 14]
    assert read_rack(d).off_rack == []


def test_a_tile_named_off_already_is_not_named_again_and_holds_nothing():
    img, boxes, lying = _scene()
    d = _detections(boxes)
    off = np.zeros(len(d), bool)
    off[12] = True
    assert unheld(d, off, img).tolist() == (lying & ~off).tolist()


def test_a_light_stand_is_not_judged():
    # a white stand's faces in light and in its own shade differ more than the table
    # from either (white 700,007): nothing is named
    img, boxes, _lying = _scene(table=(90, 110, 60), stand=(215, 215, 220))
    d = _detections(boxes)
    assert not unheld(d, np.zeros(len(d), bool), img).any()


def test_a_table_as_dark_as_the_stand_names_nothing():
    img, boxes, _lying = _scene(table=(35, 30, 30))
    d = _detections(boxes)
    assert not unheld(d, np.zeros(len(d), bool), img).any()


WOOD = (30, 70, 120)  # orange wood: 74 from the stand in Lab (under `CONTRAST`), chroma 38


def test_a_black_stand_on_wood_nearer_than_the_contrast_is_told_by_hue():
    # white 780,017 / 720,018 drawn: the stand too near the table in Lab to be told by
    # colour, but grey where the wood is orange
    img, boxes, lying = _scene(table=WOOD)
    d = _detections(boxes)
    assert unheld(d, np.zeros(len(d), bool), img).tolist() == lying.tolist()


def test_a_spot_light_on_a_black_beam_does_not_make_it_table():
    # a lit stretch of the beam is as far from the stand's shade as the wood in Lab, but
    # still grey: no front-tier tile over it is named off
    img, boxes, lying = _scene(table=WOOD)
    img[300:330, 60:220] = (90, 90, 95)
    d = _detections(boxes)
    assert unheld(d, np.zeros(len(d), bool), img).tolist() == lying.tolist()


def test_a_grey_table_near_a_black_stand_names_nothing():
    # no hue to tell a grey table from a black stand by, and too near in lightness
    img, boxes, _lying = _scene(table=(70, 72, 75))
    d = _detections(boxes)
    assert not unheld(d, np.zeros(len(d), bool), img).any()


def test_a_white_rack_on_a_dark_wooden_table_leaves_the_tiles_before_its_beam_out():
    # bench.eval_white_racks' seed 720,018 (16 MP): a black stand of ten tiles on dark wood
    # (40 apart in Lab), three tiles lying just before its beam were counted
    from referee import Tile, rack_penalty
    from vision.recognition.plane_view import points_in_quads

    scene, rack = read_white_rack(720_018)
    standing = np.stack([t.quad for t in scene.tiles if t.standing])
    on_stand = points_in_quads(rack.detections.centers, standing).any(axis=1)
    counted = sorted(i for row in rack.rows for i in row)
    assert counted == np.nonzero(on_stand)[0].tolist() and len(counted) == 10
    assert rack.total == rack_penalty([Tile.from_code(t.code) for t in scene.tiles
                                       if t.standing])


def test_a_front_tier_tile_boxed_past_the_beam_still_stands_where_the_stand_shows_beside_it():
    # the detector boxes a front-tier tile long now and then, its foot past the beam: the
    # strip under it sees the table, but beside it shows the stand (real rummy4-89's R4).
    # The tiles lying past the stand's end keep the table on their outer side.
    img, boxes, lying = _scene()
    boxes[5] = boxes[5] + np.float32([0, 36])  # its foot 6 px past the beam
    cv2.fillConvexPoly(img, np.round(boxes[5]).astype(np.int32), TILE)
    d = _detections(boxes)
    assert unheld(d, np.zeros(len(d), bool), img).tolist() == lying.tolist()
    # with the stand shown on neither side (it ends at that tile) it is named off as before
    img2 = img.copy()
    img2[:, 337:381] = TABLE
    cv2.fillConvexPoly(img2, np.round(boxes[5]).astype(np.int32), TILE)
    assert unheld(d, np.zeros(len(d), bool), img2)[5]


def test_two_front_tier_tiles_boxed_past_the_beam_side_by_side_hold_together():
    # each has the other's loose box on one side: judged as one, held by the tiles of the
    # tier beyond both ends (real rummy3-9 upright); the three lying past the stand's end,
    # side by side too, have the table beyond theirs
    img, boxes, lying = _scene()
    for k in (2, 3):
        boxes[k] = boxes[k] + np.float32([0, 36])
        cv2.fillConvexPoly(img, np.round(boxes[k]).astype(np.int32), TILE)
    d = _detections(boxes)
    assert unheld(d, np.zeros(len(d), bool), img).tolist() == lying.tolist()


def test_the_stand_in_its_own_shade_is_the_stand_not_the_table():
    # Lab: a stand learnt at lightness 85 (its lit lip and shaded ledge mixed), a white
    # table at 210: the ledge at 25 lies 60 below the stand, away from the table, and is
    # the stand; as far towards the table, or aside in hue, it is not
    from vision.game.footing import FAR, NEAR, _from_stand

    stand, table = np.float32([85, 128, 128]), np.float32([210, 128, 128])
    shade, lit, tinted = (np.float32(c) for c in ([25, 128, 128], [150, 128, 128], [85, 190, 128]))
    assert _from_stand(shade, stand, table) < NEAR
    assert _from_stand(lit, stand, table) > FAR
    assert _from_stand(tinted, stand, table) > FAR


def test_a_real_rack_tile_boxed_past_the_racks_edge_is_counted(real_photos_dir, tile_reader):
    # train/ rummy4-89: thirteen tiles on a black rack on a white table, the lower tier's
    # R4 boxed 1.2 as tall as its tier's, its foot past the rack's edge; it was named off
    # ("1 tile lies off the rack") and the total was 71, not 75
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.real_data import load_split
    from vision.game.cover import read_rack_photo
    from vision.recognition.decode import Photo

    photo = next(p for p in load_split("train", real_photos_dir) if p.key == "rummy4-89")
    # the file's bytes, as `rummikub score` and the server read it
    rack = read_rack_photo(tile_reader, Photo.from_bytes(photo.path.read_bytes()), DEFAULT_RULES)
    assert rack.off_rack == []
    assert rack.total == rack_penalty([Tile.from_code(t.code) for t in photo.tiles],
                                      DEFAULT_RULES) == 75


def test_a_strip_the_photos_edge_cuts_tells_nothing():
    # the lying tiles' feet at the picture's foot: under them is no pixel to judge
    img, boxes, _lying = _scene()
    img = img[:302]
    d = _detections(boxes)
    assert not unheld(d, np.zeros(len(d), bool), img)[12:].any()


def test_a_back_tier_past_the_front_tiers_end_stands_on_the_ledge():
    # the front tier holds four tiles, the back tier six: the back tier's two end tiles
    # have the stand's ledge under their feet, not a tile
    img, boxes, _lying = _scene()
    img[:] = TABLE
    cv2.rectangle(img, (60, 180), (380, 330), STAND, -1)
    boxes = boxes[:4] + boxes[6:12]
    for b in boxes:
        cv2.fillConvexPoly(img, np.round(b).astype(np.int32), TILE)
    d = _detections(boxes)
    assert not unheld(d, np.zeros(len(d), bool), img).any()


def test_tiles_lying_past_a_white_editions_stand_in_line_with_its_tiers_are_not_counted():
    # bench.eval_white_racks' seed 760,008 (16 MP, seen from about 40 degrees): a two-tier
    # stand, and two rows of tiles lying on the table past its right end, in line with its
    # tiers and boxed 0.8-0.9 as tall: the box rules kept all seven
    from vision.recognition.plane_view import points_in_quads

    scene, rack = read_white_rack(760_008)
    standing = np.stack([t.quad for t in scene.tiles if t.standing])
    top, foot = standing[:, :, 1].min(), standing[:, :, 1].max()
    past = [t for t in scene.tiles if not t.standing
            and t.quad[:, 0].min() > standing[:, :, 0].max()
            and top - 0.5 * (foot - top) < t.quad[:, 1].mean() < foot]
    on_past = points_in_quads(rack.detections.centers, np.stack([t.quad for t in past]))
    found = np.nonzero(on_past.any(axis=1))[0]
    assert len(found) >= 6 and set(found.tolist()) <= set(rack.off_rack)
    # and no tile standing on the stand is named off with them
    on_stand = np.nonzero(points_in_quads(rack.detections.centers, standing).any(axis=1))[0]
    assert len(on_stand) >= 20 and not set(on_stand.tolist()) & set(rack.off_rack)


def _nearer_row_scene():
    """(picture, boxes): a dark stand of one tier of five tiles (boxes 56 tall, feet on
    the beam at y 200) and, nearer the phone, five tiles lying on the table boxed taller
    (70: seen from high above, a tile lying near the phone outgrows one standing
    further)."""
    img = np.zeros((480, 640, 3), np.uint8)
    img[:] = TABLE
    cv2.rectangle(img, (60, 130), (380, 240), STAND, -1)
    standing = _row(5, 90, 200)
    lying = [np.float32([[x, 300], [x + 50, 300], [x + 50, 370], [x, 370]])
             for x in range(120, 120 + 5 * 56, 56)]
    for b in standing + lying:
        cv2.fillConvexPoly(img, np.round(b).astype(np.int32), TILE)
    return img, standing + lying


def test_a_row_lying_nearer_the_phone_is_not_taken_for_the_stand():
    # white 780,038 drawn: the box rules keep the taller row lying on the table; under
    # its feet lies the table, under the named-off row's the stand
    img, boxes = _nearer_row_scene()
    d = _detections(boxes)
    assert off_the_rack(d).tolist() == [True] * 5 + [False] * 5  # the box rules' choice
    assert stand_elsewhere(d, off_the_rack(d), img).tolist() == [False] * 5 + [True] * 5
    assert sorted(read_rack(d, photo=img).off_rack) == [5, 6, 7, 8, 9]


def test_tiles_the_box_rules_name_off_on_a_dark_mat_stay_off_where_the_stand_shows():
    # the stand's row kept (its tiles the taller) and four shorter tiles lying on a dark
    # mat: the kept tiles show their stand, so the mat's tiles do not take the rack
    img = np.zeros((480, 640, 3), np.uint8)
    img[:] = TABLE
    cv2.rectangle(img, (60, 130), (380, 240), STAND, -1)
    cv2.rectangle(img, (80, 300), (420, 420), (30, 30, 30), -1)
    standing = _row(5, 90, 200)
    lying = [np.float32([[x, 320], [x + 38, 320], [x + 38, 350], [x, 350]])
             for x in range(100, 100 + 4 * 44, 44)]
    for b in standing + lying:
        cv2.fillConvexPoly(img, np.round(b).astype(np.int32), TILE)
    d = _detections(standing + lying)
    off = off_the_rack(d)
    assert off.tolist() == [False] * 5 + [True] * 4
    assert stand_elsewhere(d, off, img).tolist() == off.tolist()


def test_a_white_rack_seen_from_high_above_counts_its_stand_not_the_row_before_it():
    # bench.eval_white_racks' seed 780,038 (16 MP): six tiles on a black stand, five lying
    # on the table nearer the phone, boxed taller; the box rules counted the five
    from referee import Tile, rack_penalty
    from vision.recognition.plane_view import points_in_quads

    scene, rack = read_white_rack(780_038)
    standing = np.stack([t.quad for t in scene.tiles if t.standing])
    centres = rack.detections.centers
    on_stand = np.nonzero(points_in_quads(centres, standing).any(axis=1))[0]
    assert len(on_stand) == 6 and not set(on_stand.tolist()) & set(rack.off_rack)
    counted = sorted(i for row in rack.rows for i in row)
    assert counted == sorted(on_stand.tolist())
    assert rack.total == rack_penalty([Tile.from_code(t.code) for t in scene.tiles
                                       if t.standing])


def test_the_beams_logo_read_as_tiles_is_not_taken_for_the_stand():
    # bench.eval_white_racks' 3,500,016 as a phone's processing leaves it (sharpened): a
    # stand holding two tiles, the letters of its beam's embossed logo boxed as eight small
    # tiles standing on the stand. They box 0.18 as tall as the two: no stand farther off
    scene, rack = read_white_rack(3_500_016, change=phone_processed)
    standing = sorted(t.code for t in scene.tiles if t.standing)
    counted = sorted(rack.detections.codes[i] for row in rack.rows for i in row)
    assert standing == ["O9", "R9"] and counted == standing


def test_the_gates_judge_the_stand_that_is_counted(monkeypatch):
    # the quality and cover gates of a rack photo look at the stand's tiles: on 780,038
    # the tiles counted, not the row lying before them that the box rules kept
    pytest.importorskip("PIL")
    from bench.eval_white_racks import BASE, KINDS, render
    from vision.game import cover
    from vision.recognition import quality
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader
    from vision.recognition.settings import MODELS_DIR

    if not (MODELS_DIR / "detector.onnx").is_file():
        pytest.skip(f"no models in {MODELS_DIR}")
    seen = {}
    real = quality.refuse_unfit

    def keep_stand(photo, detections, stand=None):
        seen["stand"] = stand
        return real(photo, detections, stand=stand)

    monkeypatch.setattr(quality, "refuse_unfit", keep_stand)
    _seed, _scene, data = render(780_038, KINDS[(780_038 - BASE) % len(KINDS)])
    photo, reader = Photo.from_bytes(data), TileReader.load()
    detections, _cover = cover.read_checked(reader, photo, rack=True)
    rack = read_rack(detections, photo=photo, reader=reader)
    counted = sorted(i for row in rack.rows for i in row)
    assert len(counted) == 6
    assert np.nonzero(seen["stand"])[0].tolist() == counted


def test_rummikub_score_counts_what_the_server_counts(tmp_path, monkeypatch, capsys):
    # the command reads a rack on the stand its gates judged, as `read_rack_photo` does:
    # 780,038's six stand tiles, not the row the box rules keep (`read_rack` is handed
    # the gates' stand and does not judge the boxes again)
    import json

    pytest.importorskip("PIL")
    from app.cli import game
    from bench.eval_white_racks import BASE, KINDS, render
    from referee import DEFAULT_RULES
    from vision.game import cover
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader
    from vision.recognition.settings import MODELS_DIR

    if not (MODELS_DIR / "detector.onnx").is_file():
        pytest.skip(f"no models in {MODELS_DIR}")
    _seed, _scene, data = render(780_038, KINDS[(780_038 - BASE) % len(KINDS)])
    served = cover.read_rack_photo(TileReader.load(), Photo.from_bytes(data), DEFAULT_RULES)
    path = tmp_path / "rack.jpg"
    path.write_bytes(data)
    judged = []

    def counted_off_the_rack(d):
        judged.append(len(d))
        return off_the_rack(d)

    from vision.game import rack as rack_module
    monkeypatch.setattr(cover, "off_the_rack", counted_off_the_rack)
    monkeypatch.setattr(rack_module, "off_the_rack", counted_off_the_rack)
    assert game.score_photo(argparse.Namespace(photo=str(path), json=True, models=None,
                                               edition=None)) == 0
    out = json.loads(capsys.readouterr().out)
    counted = sorted(i for row in out["rows"] for i in row)
    served_ids = sorted(i for row in served.rows for i in row)
    assert counted == served_ids
    assert [(out["tiles"][i]["color"], out["tiles"][i]["number"]) for i in counted] == \
        [split_code(served.detections.codes[i])[:2] for i in served_ids]
    assert len(counted) == 6 and out["total"] == served.total
    assert judged == [len(out["tiles"])]  # once, for the gates; `read_rack` takes theirs
