"""A rack photo's total counts the tiles standing on the rack only: tiles lying on the
table beside or behind it are named and left out, in `read_rack`, `rummikub score` and
the server's rack answer.

The photo is the rendered rack sample with five tiles of another sample photo pasted
onto the marble around it: four lying at angles beside and below the rack, one lying
straight behind it (above its top tier), foreshortened as a tile lying flat is seen from
about 35 degrees above (0.62 of the rack's tiles' height): a tile behind the stand as tall
as its tiers' would be a third tier (`vision.game.tiers.FLAT_SHARE`)."""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache

import cv2
import numpy as np
import pytest

from vision.recognition.settings import MODELS_DIR, REPO_ROOT

SAMPLES = REPO_ROOT / "sample_images"
HAVE_MODELS = all((MODELS_DIR / n).is_file() for n in ("detector.onnx", "classifier.onnx"))
pytestmark = pytest.mark.skipif(not HAVE_MODELS, reason=f"no models in {MODELS_DIR}")

RACK = ["K13", "B12", "B6", "O9", "B1", "K2", "K4", "R11", "K12", "R4", "O2", "O10", "K8", "O1"]
# (tile of the scatter sample, centre on the rack photo, angle in degrees, height in pixels)
LYING = [(0, (150, 560), 60, 100), (1, (420, 600), 100, 100), (2, (700, 560), -35, 100),
         (3, (80, 300), 45, 100), (4, (620, 62), 0, 70)]


@lru_cache(maxsize=1)
def rack_with_tiles_beside() -> tuple[np.ndarray, list[str]]:
    """(the photo, the codes of the tiles lying off the rack)."""
    photo = cv2.imread(str(SAMPLES / "rack_marble.jpg"))
    source = cv2.imread(str(SAMPLES / "scatter_light_wood.jpg"))
    tiles = json.loads((SAMPLES / "scatter_light_wood.json").read_text())["tiles"]
    codes = []
    for k, centre, angle, h in LYING:
        a = np.radians(angle)
        right, down = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
        c, w = np.array(centre, float), 72
        quad = np.float32([c - right * w / 2 - down * h / 2, c + right * w / 2 - down * h / 2,
                           c + right * w / 2 + down * h / 2, c - right * w / 2 + down * h / 2])
        m = cv2.getPerspectiveTransform(np.float32(tiles[k]["corners"]), quad)
        warped = cv2.warpPerspective(source, m, (photo.shape[1], photo.shape[0]))
        mask = np.zeros(photo.shape[:2], np.uint8)
        cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 255)
        photo[mask > 0] = warped[mask > 0]
        codes.append(tiles[k]["code"])
    return photo, codes


def _penalty(codes):
    from referee import Tile, rack_penalty

    return rack_penalty([Tile.from_code(c) for c in codes])


def test_tiles_lying_beside_and_behind_the_rack_are_named_not_counted():
    from tests.server_helpers import reader
    from vision.game.rack import read_rack

    photo, lying = rack_with_tiles_beside()
    det = reader().read(photo)
    assert sorted(det.codes) == sorted(RACK + lying)  # every tile was found and read
    rack = read_rack(det)
    assert sorted(rack.codes) == sorted(RACK) and rack.total == _penalty(RACK)
    assert sorted(det.codes[i] for i in rack.off_rack) == sorted(lying)
    assert any(w.startswith("5 tiles lie off the rack: not counted") for w in rack.warnings)
    # the rack as photographed alone: the same rack, nothing off it
    alone = read_rack(reader().read(cv2.imread(str(SAMPLES / "rack_marble.jpg"))))
    assert alone.off_rack == [] and alone.total == rack.total


def test_score_counts_the_rack_and_names_the_tiles_beside_it(tmp_path):
    photo, lying = rack_with_tiles_beside()
    path = tmp_path / "rack.jpg"
    cv2.imwrite(str(path), photo, [cv2.IMWRITE_JPEG_QUALITY, 95])
    script = REPO_ROOT / ".venv" / "bin" / "rummikub"
    run = subprocess.run([str(script), "score", str(path), "--json"], capture_output=True,
                         text=True, timeout=300, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["total"] == _penalty(RACK)
    in_rows = {i for row in out["rows"] for i in row}
    assert len(out["off_rack"]) == len(lying) and not in_rows & set(out["off_rack"])
    assert len(in_rows) == len(RACK)
    assert any("off the rack: not counted" in w for w in out["warnings"])
    text = subprocess.run([str(script), "score", str(path)], capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT).stdout
    assert f": {len(RACK)} tiles, penalty {_penalty(RACK)}" in text
    assert "warning: 5 tiles lie off the rack: not counted" in text


def _rack_answer(client, app, image: np.ndarray) -> tuple[dict, dict, bytes]:
    """(the game, the server's answer to `image` as Ben's rack photo, the JPEG sent)."""
    from tests.server_helpers import new_game, upload

    game = new_game(client, app)
    data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    answer = upload(client, game, "racks", data, data={"player": "Ben"})
    assert answer.status_code == 200, answer.text
    return game, answer.json(), data


def test_the_servers_rack_answer_leaves_the_tiles_beside_it_out(client, app):
    photo, lying = rack_with_tiles_beside()
    _game, body, _data = _rack_answer(client, app, photo)
    assert sorted(body["tiles"]) == sorted(RACK) and body["total"] == _penalty(RACK)
    assert sorted(body["off_rack"]) == sorted(lying)
    assert any("off the rack: not counted" in w for w in body["warnings"])


def test_round_scores_the_rack_without_the_tiles_beside_it(tmp_path):
    photo, lying = rack_with_tiles_beside()
    path = tmp_path / "ben.jpg"
    cv2.imwrite(str(path), photo, [cv2.IMWRITE_JPEG_QUALITY, 95])
    script = REPO_ROOT / ".venv" / "bin" / "rummikub"
    run = subprocess.run([str(script), "round", "-", str(path), "--players", "Ann,Ben",
                          "--winner", "Ann", "--json"], capture_output=True, text=True,
                         timeout=300, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
    ann, ben = json.loads(run.stdout)["players"]
    assert ben["total"] == _penalty(RACK) and ben["score"] == -_penalty(RACK)
    assert ann["score"] == _penalty(RACK)
    assert len(ben["off_rack"]) == len(lying)
    assert any("off the rack: not counted" in w for w in ben["warnings"])


def _stand_beside_plain_wood() -> tuple[np.ndarray, int]:
    """(the white Original stand of seed 540,011 on a plain wooden table, its total): a
    rack photo the covered-photo gate reads with a doubt (tests/test_cover.py)."""
    pytest.importorskip("PIL")
    from training.render3d.scene import original_edition, render_depth_scene

    rng = np.random.default_rng(540_011)
    scene = render_depth_scene(rng, original_edition(rng), kind="rack")
    return scene.image, _penalty([t.code for t in scene.tiles if t.standing])


def test_the_servers_rack_answer_says_a_doubt_beside_the_total(client, app):
    from tests.server_helpers import upload

    image, total = _stand_beside_plain_wood()
    game, body, data = _rack_answer(client, app, image)
    assert body["total"] == total
    assert {"id": "rack.maybe_covered", "params": {}} in body["warning_ids"]
    # the same photo as a table photo is still refused: the gate's table rule
    refused = upload(client, game, "photo", data)
    assert refused.status_code == 422 and refused.json()["message_id"]["id"] == "photo.covered"


def test_score_prints_the_doubt_and_the_total(tmp_path):
    image, total = _stand_beside_plain_wood()
    path = tmp_path / "rack.jpg"
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    script = REPO_ROOT / ".venv" / "bin" / "rummikub"
    run = subprocess.run([str(script), "score", str(path)], capture_output=True, text=True,
                         timeout=300, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
    assert f"penalty {total}" in run.stdout
    assert "warning: something skin-coloured lies beside the rack (a hand?)" in run.stdout


def test_a_white_stand_among_tiles_lying_all_round_on_plain_wood_is_read(tmp_path):
    # bench.eval_white_racks' seed 710,001 (16 MP): 13 tiles on a one-tier stand, 21 more
    # lying all round it on a plain wooden table. The hull of every tile found spans the
    # table, whose smooth skin-coloured wood was taken for a hand over the rack (21.6
    # tile areas of it); the hull of the stand's own tiles holds none of it
    # (docs/decisions/covered-photo.md, "The stand's hull").
    pytest.importorskip("PIL")
    from bench.eval_white_racks import scenes
    from referee import DEFAULT_RULES
    from vision.game import cover
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader

    seed, scene, data = list(scenes(710_000, 2, None))[1]
    assert seed == 710_001
    reader = TileReader.load()
    photo = Photo.from_bytes(data)
    found = reader.read(photo)
    everything = cover.check(photo, found)
    assert everything.problems(rack=True)  # over every tile's hull: refused
    rack = cover.read_rack_photo(reader, photo, DEFAULT_RULES)  # over the stand's: read
    standing = [t.code for t in scene.tiles if t.standing]
    assert rack.total == _penalty(standing)


def test_a_white_stand_holding_one_tile_among_tiles_far_round_it_is_read(tmp_path):
    # bench.eval_white_racks' seed 720,012 (16 MP): one tile on a one-tier stand, 8 lying
    # far round it on orange wood. Judged by every tile's colours the wood near the stand
    # is a foreign piece of 13 tile areas, outlined by the stand; it reaches nowhere near
    # the stand's own tile, so the rack is read and the doubt said
    # (docs/decisions/covered-photo.md, "A foreign piece beside the stand").
    pytest.importorskip("PIL")
    from bench.eval_white_racks import KINDS, render
    from referee import DEFAULT_RULES
    from vision.game import cover
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader

    _seed, scene, data = render(720_012, KINDS[12 % len(KINDS)])
    reader = TileReader.load()
    photo = Photo.from_bytes(data)
    assert cover.check(photo, reader.read(photo)).problems(rack=True)  # the table's rule
    rack = cover.read_rack_photo(reader, photo, DEFAULT_RULES)
    assert rack.total == _penalty([t.code for t in scene.tiles if t.standing])
    assert cover.DOUBT_WORDS in rack.warnings


def test_tiles_lying_past_a_white_stands_end_in_line_with_its_tier_are_not_counted():
    # bench.eval_white_racks' seed 710,013 (16 MP): a two-tier stand, and five tiles lying
    # in a row on the table past its left end, in line with its back tier and boxed 0.7
    # as tall; the plane of box heights fit over the row bent to them, and all five were
    # counted (`vision.game.stand._flat_beyond_a_gap`)
    pytest.importorskip("PIL")
    from bench.eval_white_racks import KINDS, render
    from referee import DEFAULT_RULES
    from vision.game import cover
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader
    from vision.recognition.plane_view import points_in_quads

    _seed, scene, data = render(710_013, KINDS[13 % len(KINDS)])
    rack = cover.read_rack_photo(TileReader.load(), Photo.from_bytes(data), DEFAULT_RULES)
    standing = np.stack([t.quad for t in scene.tiles if t.standing])
    left = [t for t in scene.tiles if not t.standing
            and t.quad[:, 0].max() < standing[:, :, 0].min()
            and t.quad[:, 1].min() < standing[:, :, 1].max()]
    assert len(left) == 5
    on_left = points_in_quads(rack.detections.centers, np.stack([t.quad for t in left]))
    found = np.nonzero(on_left.any(axis=1))[0]
    assert len(found) == 5 and set(found.tolist()) <= set(rack.off_rack)


def test_tiles_lying_just_behind_a_low_white_stand_are_not_its_third_tier():
    # bench.eval_white_racks' seed 750,005 (16 MP): a two-tier stand seen low, and a row
    # of six tiles lying flat just behind it. In the photo their feet meet the top tier's
    # tops, as a hidden tier's would, but they are boxed a third as tall as the tiers; a
    # tier hides at most half of the one behind (`vision.game.tiers.HIDDEN_SHOWS`)
    pytest.importorskip("PIL")
    from bench.eval_white_racks import KINDS, render
    from referee import DEFAULT_RULES
    from vision.game import cover
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader

    _seed, scene, data = render(750_005, KINDS[5 % len(KINDS)])
    rack = cover.read_rack_photo(TileReader.load(), Photo.from_bytes(data), DEFAULT_RULES)
    standing = [t.code for t in scene.tiles if t.standing]
    assert sorted(rack.codes) == sorted(standing)
    assert rack.total == _penalty(standing)


def _palm_over_a_stand() -> np.ndarray:
    """A held-out rendered stand (bench.rack_totals' set C, 800,109) with a palm painted
    over the middle of its tier: refused as a rack photo and as a table photo."""
    pytest.importorskip("PIL")
    from bench.eval_cover import tile_height
    from bench.hands import paint
    from tests.server_helpers import reader
    from training.editions import HELD_OUT
    from training.render3d.scene import render_depth_scene

    scene = render_depth_scene(np.random.default_rng(800_109), HELD_OUT["white_teal"],
                               kind="rack", tiers=1)
    found = reader().read(scene.image)
    stand = [t.quad for t in scene.tiles if t.standing]
    return paint(scene.image, stand[len(stand) // 2], tile_height(found), "palm",
                 np.random.default_rng(800_109), found.corners, tone=1).image


def test_a_hand_over_a_rack_is_refused_in_the_racks_words(client, app, tmp_path):
    from tests.server_helpers import new_game, upload

    image = _palm_over_a_stand()
    data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    game = new_game(client, app)
    refused = upload(client, game, "racks", data, data={"player": "Ben"})
    assert refused.status_code == 422
    assert refused.json()["message_id"] == {"id": "rack.covered", "params": {}}
    assert "covers part of the rack (a hand?)" in refused.json()["detail"]
    # the same photo as a table photo: the table's words
    as_table = upload(client, game, "photo", data)
    assert as_table.status_code == 422
    assert as_table.json()["message_id"]["id"] == "photo.covered"
    path = tmp_path / "rack.jpg"
    path.write_bytes(data)
    run = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "rummikub"), "score", str(path)],
                         capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert run.returncode != 0 and "covers part of the rack (a hand?)" in run.stderr
