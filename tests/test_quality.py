"""The quality gate: a photo too blurred, dark or overexposed to read is refused with words
a player acts on, never judged; one fit to read is never refused.

The real photos are the held-out `valid/` ones, blurred, darkened and overexposed as
`bench.eval_quality` does (the gate's thresholds were set there)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from bench.eval_plane_view import count_tiles
from bench.eval_quality import exposure, gaussian, motion
from vision.game.tracker import TableTracker
from vision.recognition import quality
from vision.recognition.decode import PhotoError

# Photos of tables of several sizes (20, 30 and 10 tiles) the sweep reads right as taken.
PHOTOS = ("rummy-29", "rummy4-1", "rummy3-29")


def test_the_edge_width_of_a_blurred_step_is_its_sigma():
    # An ink edge blurred by a Gaussian of sigma s measures s crop pixels (a little more
    # for small s: the pixels' own width), so the gate's threshold is a width in the
    # classifier's own crop. A ring's edge runs every way, as a digit's does.
    widths = []
    for sigma in (1.0, 1.5, 2.0, 3.0):
        crop = np.full((440, 320), 220, np.float32)
        cv2.circle(crop, (160, 220), 110, 40, -1)
        blurred = cv2.GaussianBlur(crop, (0, 0), sigma * 10)
        small = cv2.resize(blurred, (32, 44), interpolation=cv2.INTER_AREA)
        widths.append(quality.crop_edge_width(small[None])[0])
    assert widths == sorted(widths)
    assert widths[1:] == pytest.approx([1.5, 2.0, 3.0], rel=0.2)


def test_ink_drawn_all_one_way_is_not_taken_for_blur():
    crop = np.full((44, 32), 220, np.float32)
    crop[:, 14:18] = 40  # a bare upright stroke: no slope up or down anywhere
    assert quality.crop_edge_width(crop[None])[0] < quality.MAX_EDGE_WIDTH
    blurred = cv2.GaussianBlur(crop, (0, 0), 2.0)
    assert quality.crop_edge_width(blurred[None])[0] > quality.MAX_EDGE_WIDTH


def test_a_shake_is_measured_along_its_own_direction():
    crop = np.full((44, 32), 220, np.uint8)
    cv2.putText(crop, "8", (6, 34), cv2.FONT_HERSHEY_SIMPLEX, 1.1, 30, 3)
    crop = crop.astype(np.float32)
    sharp = quality.crop_edge_width(crop[None])[0]
    kernel = np.zeros((7, 7), np.float32)
    kernel[3, :] = 1 / 7
    shaken = quality.crop_edge_width(cv2.filter2D(crop, -1, kernel)[None])[0]
    assert shaken > 1.5 * sharp


def test_the_words_say_what_to_do():
    error = quality.PhotoUnfit(["too blurred"])
    assert isinstance(error, PhotoError)
    assert str(error) == "too blurred: hold the phone still and take it again"
    both = str(quality.PhotoUnfit(["too dark", "too blurred"]))
    assert both.startswith("too dark: ") and "; too blurred: " in both


def test_with_no_tile_found_the_photo_itself_is_judged_for_light():
    black = np.full((600, 800, 3), 5, np.uint8)
    white = np.full((600, 800, 3), 255, np.uint8)
    grey = np.full((600, 800, 3), 120, np.uint8)
    none = np.zeros((0, 4, 2), np.float32)
    assert quality.measure(black, none).problems() == ["too dark"]
    assert quality.measure(white, none).problems() == ["overexposed"]
    assert quality.measure(grey, none).problems() == []


def _white_tiles(table: int, ink: int) -> tuple[np.ndarray, np.ndarray]:
    """A photo of ten white tiles burnt white (255) with numbers in grey `ink`, on a table
    or stand of grey `table`, and the tiles' corners."""
    image = np.full((500, 900, 3), table, np.uint8)
    corners = []
    for i in range(10):
        x, y = 40 + 82 * i, 200
        cv2.rectangle(image, (x, y), (x + 62, y + 88), (255, 255, 255), -1)
        cv2.putText(image, str(i + 1), (x + 6, y + 50), cv2.FONT_HERSHEY_SIMPLEX, 1.2,
                    (ink, ink, ink), 4)
        corners.append([(x, y), (x + 62, y), (x + 62, y + 88), (x, y + 88)])
    return image, np.float32(corners)


def test_white_faces_burnt_white_with_their_ink_and_outline_are_fit():
    # A white edition on a black stand: the phone meters on the stand and burns the faces;
    # the numbers and the tiles' outlines are still there to read.
    image, corners = _white_tiles(table=40, ink=30)
    measured = quality.measure(image, corners)
    assert measured.burnt_share > quality.MAX_BURNT_SHARE
    assert measured.problems() == []


def test_burnt_faces_are_overexposed_once_their_ink_or_outline_is_gone():
    washed = quality.measure(*_white_tiles(table=40, ink=235))
    assert washed.ink_contrast < quality.MIN_INK_CONTRAST and washed.ring_burnt == 0
    assert washed.problems() == ["overexposed"]
    no_outline = quality.measure(*_white_tiles(table=255, ink=30))
    assert no_outline.ink_contrast > quality.MIN_INK_CONTRAST
    assert no_outline.ring_burnt > quality.MAX_RING_BURNT
    assert no_outline.problems() == ["overexposed"]


def _tier_before_a_burnt_table() -> tuple[np.ndarray, np.ndarray]:
    """Ten white tiles burnt white side by side in a black stand (its beam below their
    feet, dark gaps between them), the table behind them burnt white, and their corners."""
    image = np.full((500, 900, 3), 255, np.uint8)
    cv2.rectangle(image, (20, 240), (880, 330), (25, 25, 25), -1)  # the stand
    corners = []
    for i in range(10):
        x, y = 40 + 64 * i, 200
        cv2.rectangle(image, (x, y), (x + 62, y + 88), (255, 255, 255), -1)
        cv2.putText(image, str(i + 1), (x + 6, y + 50), cv2.FONT_HERSHEY_SIMPLEX, 1.2,
                    (30, 30, 30), 4)
        corners.append([(x, y), (x + 62, y), (x + 62, y + 88), (x, y + 88)])
    return image, np.float32(corners)


def test_a_racks_tiles_before_a_table_burnt_white_keep_the_outline_the_stand_gives():
    # white 770,015: a black stand before a white table in strong light. As a table photo
    # the burnt table above the tier is the ring; as a rack photo the ring is the stand
    # round the tiles standing on it, beside and below them.
    image, corners = _tier_before_a_burnt_table()
    table = quality.measure(image, corners)
    assert table.ring_burnt > quality.MAX_RING_BURNT and table.problems() == ["overexposed"]
    rack = quality.measure(image, corners, stand=np.ones(len(corners), bool))
    assert rack.ring_burnt < quality.MAX_RING_BURNT and rack.problems() == []
    # a white stand burnt white too has no outline left, rack or not
    image[240:331, 20:881] = 255
    assert quality.measure(image, corners, stand=np.ones(len(corners), bool)).problems() == [
        "overexposed"]


def test_a_black_stand_before_a_bright_white_table_is_read_as_a_rack():
    # bench.eval_white_racks' seed 770,015 (16 MP close-up), refused as overexposed
    # before the rack's own ring
    from tests.table_helpers import read_white_rack
    from vision.recognition.plane_view import points_in_quads

    scene, rack = read_white_rack(770_015)
    standing = np.stack([t.quad for t in scene.tiles if t.standing])
    counted = sorted({i for row in rack.rows for i in row})
    on = points_in_quads(rack.detections.centers[counted], standing).any(axis=1)
    assert on.all() and len(counted) == len(standing)


# ----------------------------------------------------------------------------- real photos
def _reading(tile_reader, photo, image):
    det = tile_reader.read(image)
    counts = count_tiles(det, [(t.code, t.polygon) for t in photo.tiles])
    return counts, quality.check(image, det).problems()


def test_no_clean_valid_photo_is_refused(tile_reader, valid_by_key):
    for key, photo in valid_by_key.items():
        image = photo.read()
        assert quality.check(image, tile_reader.read(image)).problems() == [], key


@pytest.mark.parametrize("key", PHOTOS)
@pytest.mark.parametrize(("below", "past"), [
    (gaussian(1.0), gaussian(4.0)),
    (motion(5, 0), motion(19, 0)),
    (motion(5, 90), motion(19, 90)),
], ids=["gaussian", "motion-across", "motion-down"])
def test_blur_is_read_right_below_the_gate_and_refused_past_it(tile_reader, valid_by_key, key,
                                                               below, past):
    photo = valid_by_key[key]
    image = photo.read()
    clean, _ = _reading(tile_reader, photo, image)
    mild, mild_problems = _reading(tile_reader, photo, below(image))
    assert mild_problems == [] and mild == clean
    _, problems = _reading(tile_reader, photo, past(image))
    assert problems == ["too blurred"]


@pytest.mark.parametrize("key", PHOTOS)
def test_dark_and_overexposed_photos_are_refused(tile_reader, valid_by_key, key):
    photo = valid_by_key[key]
    image = photo.read()
    clean, _ = _reading(tile_reader, photo, image)
    dim, dim_problems = _reading(tile_reader, photo, exposure(0.3, noise=2.0)(image))
    assert dim_problems == [] and dim == clean
    assert _reading(tile_reader, photo, exposure(0.1, noise=2.0)(image))[1] == ["too dark"]
    assert _reading(tile_reader, photo, exposure(2.5)(image))[1] == ["overexposed"]


@pytest.mark.parametrize("key", PHOTOS)
def test_a_brighter_photo_whose_faces_burn_white_is_read_and_not_refused(tile_reader,
                                                                         valid_by_key, key):
    # x1.3 burns most of a cream face white (burnt share 0.79 at the median) and reads
    # every tile right: the gate refused 22 of 31 such photos before it looked at the ink.
    photo = valid_by_key[key]
    image = photo.read()
    clean, _ = _reading(tile_reader, photo, image)
    bright, problems = _reading(tile_reader, photo, exposure(1.3)(image))
    assert problems == [] and bright == clean


def test_a_refused_photo_of_a_big_file_is_measured_on_its_reduced_decode(tile_reader, valid_by_key):
    # A Photo (the command line's and the server's) is judged as its pixels are.
    from vision.recognition.decode import Photo

    image = gaussian(4.0)(valid_by_key["rummy4-1"].read())
    big = cv2.resize(image, None, fx=3, fy=3, interpolation=cv2.INTER_CUBIC)
    ok, data = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 95])
    photo = Photo.from_bytes(data.tobytes())
    with pytest.raises(quality.PhotoUnfit, match="too blurred"):
        quality.refuse_unfit(photo, tile_reader.read(photo))


# ----------------------------------------------------------------------------- the tracker
def test_a_refused_frame_never_becomes_the_table(tile_reader, valid_by_key):
    image = valid_by_key["rummy-29"].read()
    det = tile_reader.read(image)
    tracker = TableTracker(hold=2, window=4)
    for _ in range(3):
        update = tracker.push(det, t=0.0)
    stable = update.stable
    assert stable is not None and len(stable) == len(det)
    blurred = tile_reader.read(gaussian(4.0)(image))
    unfit = quality.check(gaussian(4.0)(image), blurred).problems()
    assert unfit == ["too blurred"]
    for _ in range(5):
        refused = tracker.push(blurred, t=1.0, unfit=unfit)
        assert refused.refused == ["too blurred"] and not refused.changed
        assert refused.stable.codes == stable.codes
    assert tracker.refused == 5
    assert tracker.push(det, t=2.0).stable.codes == stable.codes


# ----------------------------------------------------------------------------- where it is wired
def _sample_unfit(change) -> bytes:
    from vision.recognition.settings import REPO_ROOT

    image = cv2.imread(str(REPO_ROOT / "sample_images" / "table_runs_groups.jpg"))
    ok, data = cv2.imencode(".jpg", change(image), [cv2.IMWRITE_JPEG_QUALITY, 95])
    return data.tobytes()


BLURRED = (gaussian(8.0), "too blurred: hold the phone still and take it again")
DARK = (exposure(0.05, noise=2.0), "too dark: ")


@pytest.mark.parametrize(("command", "unfit"), [("scan", BLURRED), ("score", DARK),
                                                 ("turn", BLURRED)])
def test_a_command_refuses_an_unfit_photo_in_one_line(tmp_path, command, unfit):
    import subprocess

    from vision.recognition.settings import REPO_ROOT

    change, words = unfit
    path = tmp_path / "photo.jpg"
    path.write_bytes(_sample_unfit(change))
    good = REPO_ROOT / "sample_images" / "table_runs_groups.jpg"
    args = {"scan": [path], "score": [path], "turn": [good, path]}[command]
    run = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "rummikub"), command, *map(str, args)],
                         capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert run.returncode == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and words in lines[0], run.stderr
    assert "Traceback" not in run.stderr


def test_the_server_refuses_an_unfit_photo_with_422_and_the_words(client, app):
    from tests.server_helpers import new_game, start_round, upload

    game = new_game(client, app)
    blurred = _sample_unfit(BLURRED[0])
    rack = upload(client, game, "racks", blurred, data={"player": "Ben"})
    assert rack.status_code == 422 and rack.json()["detail"] == BLURRED[1]
    # beside the words, the id the page words in its language (app/server/messages.py)
    assert rack.json()["message_id"]["params"]["problems"] == [{"id": "quality.too_blurred",
                                                               "params": {}}]
    start_round(client, game)
    table = upload(client, game, "photo", _sample_unfit(DARK[0]))
    assert table.status_code == 422 and table.json()["detail"].startswith(DARK[1])
    # nothing was judged: there is no reading yet
    reading = client.get(f"/api/games/{game['id']}/reading", headers={"X-Token": game["token"]})
    assert reading.status_code == 404


def test_a_blurred_live_frame_is_refused_and_counted_and_the_table_stays(client, app):
    from tests.server_helpers import new_game, sample_bytes, start_round

    game = new_game(client, app)
    start_round(client, game)
    url = f"/api/games/{game['id']}/live?token={game['token']}"
    with client.websocket_connect(url) as ws:
        assert ws.receive_json()["type"] == "game"
        sharp = sample_bytes("table_runs_groups.jpg")
        for _ in range(4):  # the tracker holds a table after a few still frames
            ws.send_bytes(sharp)
            while (message := ws.receive_json())["type"] != "reading":
                assert message["type"] != "error", message
        table = message["reading"]
        assert table is not None
        ws.send_bytes(_sample_unfit(BLURRED[0]))
        while (message := ws.receive_json())["type"] not in ("reading", "refused"):
            assert message["type"] != "error", message
        assert message["type"] == "refused" and message["detail"] == BLURRED[1]
        assert message["problems"] == ["too blurred"]
        assert message["reading"]["reading_id"] == table["reading_id"]  # the table as it stood
    stats = client.get(f"/api/games/{game['id']}/frames/stats",
                       headers={"X-Token": game["token"]}).json()
    assert stats["refused"] == 1 and stats["read"] == 4
