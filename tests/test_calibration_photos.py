"""Calibration on rendered photos: layout mismatches named, a profile's effect on reading.

The photos are rendered (`bench.calibrate_bench`, needs Pillow from the dev extra) in
editions the classifier never saw in training: white bodies with teal, white bodies with
red and orange close in hue, and a green "Rummy" edition.
"""

from __future__ import annotations

import numpy as np
import pytest

from calibration import CalibrationError, Layout, calibrate, load_reader
from vision.recognition.pipeline import TileReader

pytest.importorskip("PIL")
from bench import calibrate_bench as render  # noqa: E402


@pytest.fixture(scope="module")
def reader():
    return TileReader.load()


def _photo(seed, edition, rows=None, **kwargs):
    rng = np.random.default_rng(seed)
    rows = rows if rows is not None else render.layout_rows(render.EDITIONS[edition])
    return render.render_tiles_photo(rng, render.EDITIONS[edition], rows, **kwargs)


def _rows(edition):
    return render.layout_rows(render.EDITIONS[edition])


def test_a_tile_missing_from_a_row_is_named_by_its_row(reader):
    rows = _rows("white-red-orange")
    del rows[2][8]
    with pytest.raises(CalibrationError, match=r"row 3 has 12 tiles, the layout puts 13 there"):
        calibrate(_photo(5, "white-red-orange", rows).image, Layout.builtin("rows"), reader)


def test_two_tiles_swapped_in_a_row_are_named(reader):
    rows = _rows("white-red-orange")
    rows[1][4], rows[1][5] = rows[1][5], rows[1][4]
    with pytest.raises(CalibrationError) as info:
        calibrate(_photo(5, "white-red-orange", rows).image, Layout.builtin("rows"), reader)
    assert "row 2, tile 5 reads as a 6, the layout puts a 5 there" in str(info.value)
    assert "row 2, tile 6 reads as a 5" in str(info.value)


def test_a_tile_of_another_colour_in_a_row_is_named(reader):
    rows = _rows("white-red-orange")
    rows[1][6], rows[3][6] = rows[3][6], rows[1][6]  # R7 <-> B7
    with pytest.raises(CalibrationError, match=r"row 2, tile 7 looks blue, the layout has a "
                                               r"red tile there"):
        calibrate(_photo(5, "white-red-orange", rows).image, Layout.builtin("rows"), reader)


def test_a_file_layout_that_does_not_match_names_the_tile(reader):
    rows = _rows("white-teal")
    layout = Layout.from_text("\n".join(" ".join(r) for r in rows).replace("K9", "K8", 1))
    with pytest.raises(CalibrationError, match=r"row 1, tile 9 reads as a 9, the layout puts an? 8"):
        calibrate(_photo(6, "white-teal", rows).image, layout, reader)


def _read_right(reader, photo) -> tuple[int, int]:
    found, right, total = render.read_right(reader, photo)
    assert found == total
    return right, total


@pytest.mark.parametrize("edition, seed", [("rummy-green", 11), ("white-red-orange", 12)])
def test_a_profile_from_one_photo_reads_another_photo_of_the_edition(reader, edition, seed):
    ed = render.EDITIONS[edition]
    cal = _photo(seed, edition)
    profile = calibrate(cal.image, Layout.builtin("rows"), reader)
    assert profile.slot_letters == "KRB" + ("G" if edition == "rummy-green" else "O")
    profiled = reader.with_profile(profile)
    rng = np.random.default_rng(seed + 100)
    for _ in range(2):  # other tiles, other light, another angle
        photo = render.render_tiles_photo(rng, ed, render.random_rows(rng, ed), tilt=0.15,
                                          angle=float(rng.normal(0, 0.1)))
        without, total = _read_right(reader, photo)
        with_profile, _ = _read_right(profiled, photo)
        assert with_profile >= without and with_profile >= total - 1, (without, with_profile)


def test_green_tiles_read_as_green_with_a_rummy_profile(reader, tmp_path):
    cal = _photo(21, "rummy-green")
    path = tmp_path / "rummy.json"
    calibrate(cal.image, Layout.builtin("rows"), reader).save(path)
    profiled = load_reader(profile=path)
    rows = [["G7", "G8", "G9", "R1"], ["J", "K13", "B2", "G1"]]
    photo = _photo(22, "rummy-green", rows)
    codes = profiled.read(photo.image).codes
    assert sorted(codes) == sorted(c for row in rows for c in row)
    assert "G7" in codes and "G1" in codes
    tiles = profiled.read(photo.image).to_json()
    assert {t["color"] for t in tiles} == {"green", "red", "black", "blue", None}


def test_a_layout_photo_taken_turned_and_at_an_angle_still_calibrates(reader):
    cal = _photo(31, "white-teal", angle=0.5, tilt=0.2)
    profile = calibrate(cal.image, Layout.builtin("rows"), reader)
    assert profile.stats["rows"] == ["K", "R", "B", "O", "J"]
    assert profile.stats["network_numbers_right"] >= 50


def test_the_calibrate_command_learns_green_and_scan_reads_through_the_profile(tmp_path, capsys):
    import json

    import cv2

    from app.cli import main

    photo, profile = tmp_path / "layout.jpg", tmp_path / "rummy.json"
    cv2.imwrite(str(photo), _photo(41, "rummy-green").image)
    assert main(["calibrate", str(photo), "--out", str(profile)]) == 0
    out = capsys.readouterr().out
    assert "4 green" in out and "how sure: sure" in out and profile.is_file()

    table = tmp_path / "table.jpg"
    rows = [["G4", "G5", "G6"], ["K9", "R9", "B9", "G9"]]
    cv2.imwrite(str(table), _photo(42, "rummy-green", rows).image)
    assert main(["scan", str(table), "--json", "--profile", str(profile),
                 "--edition", "rummy"]) == 0
    result = json.loads(capsys.readouterr().out)[0]
    assert sorted((t["color"], t["number"]) for t in result["tiles"]) == sorted(
        ({"G": "green", "K": "black", "R": "red", "B": "blue"}[c[0]], int(c[1:]))
        for row in rows for c in row)
    assert result["table_valid"]


def test_the_calibrate_command_names_the_row_that_does_not_match(tmp_path, capsys):
    import cv2

    from app.cli import main

    rows = _rows("white-teal")
    del rows[3][0]
    photo = tmp_path / "layout.jpg"
    cv2.imwrite(str(photo), _photo(43, "white-teal", rows).image)
    assert main(["calibrate", str(photo), "--out", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "row 4 has 12 tiles" in err[0]
    assert not (tmp_path / "p.json").exists()


def test_any_photo_whose_tiles_are_known_calibrates_from_a_layout_file(reader, tmp_path):
    ed = render.EDITIONS["rummy-green"]
    rng = np.random.default_rng(51)
    rows = render.random_rows(rng, ed, n_rows=4, per_row=10)
    photo = render.render_tiles_photo(rng, ed, rows)
    path = tmp_path / "corrected.txt"
    path.write_text("\n".join(" ".join(row) for row in rows) + "\n")
    profile = calibrate(photo.image, Layout.from_file(path), reader)
    assert profile.slot_letters == "KRBG"
    assert sorted(set(profile.codes)) == sorted({c for row in rows for c in row})
    other = render.render_tiles_photo(rng, ed, render.random_rows(rng, ed), tilt=0.15)
    right, total = _read_right(reader.with_profile(profile), other)
    assert right >= total - 1


def test_a_16_megapixel_phone_photo_calibrates_like_its_small_copy(reader, tmp_path):
    import cv2

    from vision.recognition.decode import open_photo

    photo = _photo(61, "white-red-orange", width=1600, height=1200)
    big = tmp_path / "phone.jpg"
    cv2.imwrite(str(big), cv2.resize(photo.image, (4624, 3468), interpolation=cv2.INTER_CUBIC),
                [cv2.IMWRITE_JPEG_QUALITY, 90])
    profile = calibrate(open_photo(big), Layout.builtin("rows"), reader)
    small = calibrate(photo.image, Layout.builtin("rows"), reader)
    assert profile.slot_letters == small.slot_letters == "KRBO"
    assert profile.stats["rows"] == small.stats["rows"] == ["K", "R", "O", "B", "J"]


def test_a_box_turned_a_quarter_off_its_tile_is_read_in_the_tiles_own_way(reader):
    # On a rack or a low table a tile can look nearly square, and the detector's box may
    # then run its long side along the tile's width: the crop shows the number on its side.
    # Through a profile such a crop is read again in the box turned a quarter round.
    from calibration.head import ProfileHead, quarter_turned

    cal = _photo(41, "white-teal")
    head = ProfileHead(calibrate(cal.image, Layout.builtin("rows"), reader), reader.classifier)
    ed = render.EDITIONS["white-teal"]
    rng = np.random.default_rng(42)
    photo = render.render_tiles_photo(rng, ed, render.random_rows(rng, ed, 3, 8), tilt=0.1)
    sideways = quarter_turned(photo.quads)
    upright, probs, _flip = head.classify_both_ways(photo.image, sideways)
    right = sum(head.labels[k] == c for k, c in zip(probs.argmax(axis=1), photo.codes,
                                                    strict=True))
    _u, once, _f = head.read_crops(reader.classifier.crops(photo.image, sideways), sideways)
    right_once = sum(head.labels[k] == c for k, c in zip(once.argmax(axis=1), photo.codes,
                                                         strict=True))
    assert right >= 0.9 * len(photo.codes) > right_once + 5, (right, right_once)
    # The corners returned follow the tile: its top edge where the tile's top is.
    tops = (upright[:, 0] + upright[:, 1]) / 2
    true_tops = (photo.quads[:, 0] + photo.quads[:, 1]) / 2
    heights = np.linalg.norm(photo.quads[:, 3] - photo.quads[:, 0], axis=1)
    near = np.linalg.norm(tops - true_tops, axis=1) < 0.3 * heights
    assert near.sum() >= 0.9 * len(near)
    # Boxes that fit their tiles are read as before.
    _u, plain, _f = head.read_crops(reader.classifier.crops(photo.image, photo.quads), photo.quads)
    _u, both, _f = head.classify_both_ways(photo.image, photo.quads)
    assert (plain.argmax(axis=1) == both.argmax(axis=1)).all()


def test_the_editions_eval_reads_each_held_out_edition_with_and_without_a_profile():
    # `make eval`'s table: one photo per edition and scene is enough to see every cell
    # filled, with a profile calibrated from that edition's own layout photo.
    from bench.eval_editions import evaluate, report

    results = evaluate(photos=1, log=lambda *_: None)
    assert len(results) == 6
    for key, row in results.items():
        assert row["with"] is not None, (key, row["why_no_profile"])
        assert row["with"]["tiles"] == row["without"]["tiles"] > 0
        assert 0 <= row["with"]["read_right_whole"] <= row["with"]["found"]
        # tiles wholly inside the photo are a part of the tiles, found among the found
        assert 0 < row["with"]["in_frame"] <= row["with"]["tiles"]
        assert row["with"]["in_frame_found"] <= min(row["with"]["in_frame"], row["with"]["found"])
        # and so are the tiles whose number lies in the photo
        assert row["with"]["in_frame"] <= row["with"]["number_in"] <= row["with"]["tiles"]
        assert row["with"]["number_in_read_right_whole"] <= row["with"]["number_in_found"]
    text = report(results, 1)
    assert "with a profile, all: found" in text and "a rack by `read_rack`" in text
    assert "tiles wholly inside the photo: found" in text and "cut by its edge" in text
    assert "tiles whose number lies in the photo: found" in text
