"""A rack photo's tiles and penalty; the start-of-game draw."""

from __future__ import annotations

import numpy as np
import pytest

from referee import edition
from tests.table_helpers import detections_from, row, turned_round
from vision.game.rack import read_rack, rows_of, start_order
from vision.recognition.labels import TILE_CLASSES

RULES = edition("original")


def test_two_rows_top_first_left_to_right_and_the_penalty():
    codes = ["R1", "K13", "J", "B5", "O7"]
    quads = row(codes[:3], x=100, y=100) + row(codes[3:], x=100, y=180)
    order = [3, 0, 4, 2, 1]  # the detector finds them in any order
    rack = read_rack(detections_from([codes[k] for k in order], [quads[k] for k in order]),
                     RULES)
    assert rack.codes == codes
    assert rack.total == 1 + 13 + 25 + 5 + 7
    assert read_rack(detections_from(codes, quads), edition("travel-tin")).total == 56


def test_more_copies_than_a_box_are_re_read_when_another_reading_is_plausible():
    codes = ["R5", "R5", "R5", "K1"]
    rack = read_rack(detections_from(codes, row(codes), probs={2: {"R5": 0.6, "R3": 0.4}}),
                     RULES)
    assert sorted(rack.codes) == ["K1", "R3", "R5", "R5"] and rack.total == 14
    assert any("R3" in w for w in rack.warnings)


def test_a_nine_upside_down_against_the_rack_is_read_the_rack_way_as_a_six():
    # The lip hides the foot of the face: the classifier half believes the 6 is a 9
    # standing on its head.
    codes = ["B2", "B3", "R9", "K11", "O4"]
    d = turned_round(detections_from(codes, row(codes)), 2, "R9", "R6", 0.1)
    rack = read_rack(d, RULES)
    assert rack.codes == ["B2", "B3", "R6", "K11", "O4"] and rack.total == 26
    assert rack.detections.uncertain[2]
    up = rack.detections.corners[2]
    assert up[0][1] < up[3][1]  # its corners now read upright with the rest
    assert any("face one way" in w for w in rack.warnings)


def test_an_unlikely_other_way_reading_is_not_forced():
    codes = ["B2", "B3", "R9", "K11", "O4"]
    d = turned_round(detections_from(codes, row(codes)), 2, "R9", "R6", 0.00001)
    assert read_rack(d, RULES).codes == codes
    # nor a 9 read turned round at 0.001 where another tile stands turned round too: a
    # player who turns tiles may have turned this one
    d = turned_round(detections_from(codes, row(codes)), 2, "R9", "R6", 0.001)
    d = turned_round(d, 3, "K11", "K11", 0.001)
    assert read_rack(d, RULES).codes == codes


def test_a_lone_nine_turned_round_is_read_the_rack_way_on_far_less():
    # Every other tile reads the rack's way: a 9 read turned round, the classifier all
    # but sure, is a 6 whose box sits high on the stand (back-tier-crops.md)
    codes = ["B2", "B3", "R9", "K11", "O4"]
    d = turned_round(detections_from(codes, row(codes)), 2, "R9", "R6", 0.001)
    assert read_rack(d, RULES).codes == ["B2", "B3", "R6", "K11", "O4"]
    # ...but only as its swap, not as any reading the other way round
    d = turned_round(detections_from(codes, row(codes)), 2, "R9", "R3", 0.001)
    assert read_rack(d, RULES).codes == codes


def test_a_tile_on_the_table_beside_the_rack_faces_any_way():
    # It is neither turned the rack's way (still an O9, not an O6) nor counted.
    codes = ["B2", "B3", "R9", "K11", "O4"]
    quads = row(codes[:4]) + row(["O4"], x=500, y=400, angle=np.radians(100))
    d = turned_round(detections_from(codes, quads), 4, "O9", "O6", 0.3)
    d.class_ids[4] = TILE_CLASSES.index("O9")
    rack = read_rack(d, RULES)
    assert rack.codes == codes[:4] and rack.total == 2 + 3 + 9 + 11
    assert rack.off_rack == [4] and rack.detections.codes[4] == "O9"
    assert "1 tile lies off the rack: not counted (O9; ids 4)" in rack.warnings


def test_without_orientation_probabilities_nothing_is_re_read():
    codes = ["B2", "B3", "R9", "K11"]
    d = turned_round(detections_from(codes, row(codes)), 2, "R9", "R6", 0.3)
    d.flip_probs = None
    assert read_rack(d, RULES).codes == codes


def test_the_highest_number_starts_and_ties_draw_again():
    quads = [row(["R1"], x=100 + 150 * k)[0] for k in range(4)]
    draw = start_order(detections_from(["R7", "K13", "B2", "O9"], quads), ["Ann", "Ben", "Cas",
                                                                            "Dee"])
    assert draw.starter == "Ben" and draw.codes == ["R7", "K13", "B2", "O9"]
    tie = start_order(detections_from(["R7", "K13", "B13", "J"], quads),
                      ["Ann", "Ben", "Cas", "Dee"])
    assert tie.starter is None and tie.tied == ["Ben", "Cas"]
    assert any("Dee drew a joker" in w for w in tie.warnings)


def test_one_tile_per_player_or_a_clear_error():
    quads = [row(["R1"], x=100 + 150 * k)[0] for k in range(2)]
    with pytest.raises(ValueError, match="2 tile\\(s\\) for 3 player"):
        start_order(detections_from(["R7", "K13"], quads), ["Ann", "Ben", "Cas"])


def test_every_rack_photo_of_valid_is_totalled_right(real_photos_dir):
    from referee import Tile, rack_penalty
    from training.real_data import load_split
    from vision.recognition.pipeline import TileReader

    racks = ["rummy3-7", "rummy3-10", "rummy4-87", "rummy4-92", "rummy4-93"]
    photos = {p.key: p for p in load_split("valid", real_photos_dir) if p.key in racks}
    reader = TileReader.load()
    for key in racks:
        photo = photos[key]
        want = rack_penalty([Tile.from_code(t.code) for t in photo.tiles], RULES)
        assert read_rack(reader.read(photo.read()), RULES).total == want, key


@pytest.mark.parametrize("angle_deg", [-35, 0, 20, 180])
def test_rows_follow_the_rack_when_the_photo_isturned_round(angle_deg):
    a = np.radians(angle_deg)
    turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    codes = ["R1", "R2", "R3", "R4", "R5", "K6", "K7", "K8"]
    quads = row(codes[:5], x=100, y=100) + row(codes[5:], x=100, y=175)
    turned = [(q - 300) @ turn.T + 300 for q in quads]
    rack = read_rack(detections_from(codes, turned), RULES)
    assert [[rack.detections.codes[i] for i in r] for r in rack.rows] == [codes[:5], codes[5:]]


@pytest.mark.parametrize("elevation,yaw", [(60, 0.5), (45, 0.3), (45, 0.5)])
def test_rows_follow_a_rack_seen_from_the_side(elevation, yaw):
    # Two rows of standing tiles filmed by a pinhole camera from one side: the rows slant
    # towards each other and the far tiles shrink. Split on the rack's plane (from the
    # tiles' own shapes) they come out right; on the photo alone they do not.
    from bench.eval_geometry import as_detector_boxes, pinhole, rack_outlines

    rng = np.random.default_rng(7)
    face, rows = rack_outlines(rng)
    quads = as_detector_boxes(pinhole(face, elevation, yaw))
    codes = [TILE_CLASSES[i % 52] for i in range(len(quads))]
    rack = read_rack(detections_from(codes, list(quads)), RULES)
    assert rack.rows == rows
    assert rows_of(rack.detections, plane=False) != rows


def test_a_rack_tile_at_the_photos_edge_is_named_with_the_total():
    codes = ["R1", "K13", "B5", "O7"]
    rack = read_rack(detections_from(codes, row(codes, x=100)), RULES, frame=(240, 400))
    assert rack.edge == [3] and rack.to_json()["edge_tiles"] == [3]
    assert any("(ids 3)" in w and "photograph the whole rack" in w for w in rack.warnings)
    assert read_rack(detections_from(codes, row(codes, x=100)), RULES, frame=(800, 600)).edge == []
