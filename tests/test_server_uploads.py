"""Big phone photos: a 50 MP upload is read from a reduced decode, never decoded whole,
and a photo whose header is fine but whose pixel data cannot be decoded is still a 400
before anything in the game changes. The server reads every photo the command line reads
(the limits are `vision.recognition.decode`'s)."""

from __future__ import annotations

import struct
import time
from functools import lru_cache

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.server_helpers import (
    GROUP_9S,
    RUN_R2_R5,
    make_app,
    new_game,
    reader,
    table_photo,
    upload,
)
from vision.recognition.decode import MAX_BYTES, MAX_PIXELS, Photo, PhotoError

PHOTO = table_photo(RUN_R2_R5, GROUP_9S)
FIFTY_MP = (8160, 6120)  # a 50-megapixel phone camera's photo


@lru_cache(maxsize=1)
def big_photo() -> bytes:
    """The table photo enlarged to 50 MP, as a JPEG (the same tiles, 8x the pixels)."""
    image = cv2.imdecode(np.frombuffer(PHOTO, np.uint8), cv2.IMREAD_COLOR)
    big = cv2.resize(image, FIFTY_MP, interpolation=cv2.INTER_LINEAR)
    ok, data = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 85])
    assert ok
    return data.tobytes()


@lru_cache(maxsize=1)
def detailed_big_photo() -> bytes:
    """The 50 MP photo with a sensor's fine grain, at quality 95: 17.7 MB, as a phone's
    50 MP photo of a detailed table can be."""
    image = cv2.imdecode(np.frombuffer(PHOTO, np.uint8), cv2.IMREAD_COLOR)
    big = cv2.resize(image, FIFTY_MP, interpolation=cv2.INTER_LINEAR)
    grain = np.random.default_rng(0).integers(-8, 9, size=(*big.shape[:2], 1), dtype=np.int8)
    big = np.clip(big.astype(np.int16) + grain, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    return data.tobytes()


def without_quantization_tables(data: bytes) -> bytes:
    """The JPEG with its DQT segments cut out: the header still gives the size and the
    data still ends with EOI, but no decoder can turn the data into pixels."""
    out, pos = bytearray(data[:2]), 2
    while data[pos + 1] != 0xDA:  # up to the start of scan
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if data[pos + 1] != 0xDB:
            out += data[pos : pos + 2 + length]
        pos += 2 + length
    return bytes(out + data[pos:])


class RecordingReader:
    """The real reader, keeping every photo it was given."""

    def __init__(self):
        self.inner = reader()
        self.detector = self.inner.detector
        self.photos = []

    def read(self, photo):
        self.photos.append(photo)
        return self.inner.read(photo)


class FailingCrops(RecordingReader):
    """A reader whose finer decode for the tile crops fails after the check passed."""

    def read(self, photo):
        raise PhotoError("corrupt photo: the JPEG image data could not be decoded")


def _game(client, app):
    game = new_game(client, app)
    client.post(f"/api/games/{game['id']}/rounds", headers={"X-Token": game["token"]})
    return game


def _codes(reading: dict) -> list:
    return sorted((t["color"], t["number"], t["joker"]) for t in reading["tiles"])


def _state(app, game):
    storage = app.state.storage
    return (storage.game(game["id"]).state, storage.turns(game["id"]),
            storage.photo_count(game["id"]))


def test_a_50_mp_photo_is_read_like_the_small_one_without_decoding_it_whole(tmp_path):
    recording = RecordingReader()
    app = make_app(tmp_path, reader=recording)
    with TestClient(app) as client:
        game = _game(client, app)
        small = upload(client, game, "photo", PHOTO)
        big = upload(client, game, "photo", big_photo())
    assert small.status_code == 200 and big.status_code == 200, big.text
    assert (big.json()["width"], big.json()["height"]) == FIFTY_MP
    assert _codes(big.json()) == _codes(small.json()) and _codes(big.json())
    photo = recording.photos[-1]
    assert isinstance(photo, Photo)
    # Every decode the photo holds: the whole 50 MP image is not among them.
    assert 1 not in photo._decoded and photo._decoded


def test_the_server_reads_what_the_command_line_reads(tmp_path):
    from app.server import ServerSettings

    assert ServerSettings().upload_limit == MAX_BYTES  # one place: vision.recognition.decode
    detailed = detailed_big_photo()
    assert len(detailed) > 15 * 2**20  # over the server's old limit
    app = make_app(tmp_path)
    with TestClient(app) as client:
        game = _game(client, app)
        small = upload(client, game, "photo", PHOTO)
        big = upload(client, game, "photo", detailed)
        assert big.status_code == 200, big.text
        assert _codes(big.json()) == _codes(small.json()) and _codes(big.json())
        # A 108 MP phone photo (12000x9000) is read too; one pixel row more than the
        # command line's limit is refused from the header alone, in the same words.
        image = cv2.imdecode(np.frombuffer(PHOTO, np.uint8), cv2.IMREAD_COLOR)
        ok, huge = cv2.imencode(".jpg", cv2.resize(image, (12000, 9000)),
                                [cv2.IMWRITE_JPEG_QUALITY, 80])
        response = upload(client, game, "photo", huge.tobytes())
        assert response.status_code == 200, response.text
        assert (response.json()["width"], response.json()["height"]) == (12000, 9000)
        rows = MAX_PIXELS // 12000 + 1
        too_big = bytearray(huge.tobytes())
        at = too_big.find(b"\xff\xc0")
        too_big[at + 5 : at + 7] = rows.to_bytes(2, "big")  # the SOF's height
        response = upload(client, game, "photo", bytes(too_big))
        assert response.status_code == 413
        with pytest.raises(PhotoError) as cli_error:
            Photo.from_bytes(bytes(too_big))
        assert response.json()["detail"] == str(cli_error.value)


def _wait(app, game, key, deadline):
    while app.state.hub.stats(game["id"])[key] < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    return app.state.hub.stats(game["id"])[key]


def test_a_50_mp_camera_frame_is_read_without_decoding_it_whole(tmp_path):
    recording = RecordingReader()
    app = make_app(tmp_path, reader=recording)
    with TestClient(app) as client:
        game = _game(client, app)
        assert client.post(f"/api/games/{game['id']}/frames", content=big_photo(),
                           headers={"X-Token": game["token"],
                                    "content-type": "image/jpeg"}).status_code == 202
        assert _wait(app, game, "read", time.monotonic() + 20) == 1
    [photo] = recording.photos
    assert (photo.width, photo.height) == FIFTY_MP
    assert 1 not in photo._decoded and photo._decoded


@pytest.mark.parametrize("route", ["photo", "start-draw", "racks"])
def test_a_jpeg_whose_data_cannot_be_decoded_is_a_400_and_changes_nothing(tmp_path, route):
    app = make_app(tmp_path)
    with TestClient(app) as client:
        game = _game(client, app)
        before = _state(app, game)
        broken = without_quantization_tables(big_photo())
        assert Photo.from_bytes(broken).width == FIFTY_MP[0]  # the header passes
        response = upload(client, game, route, broken,
                          data={"player": "Ben"} if route == "racks" else None)
        assert response.status_code == 400, response.text
        assert "could not be decoded" in response.json()["detail"]
        assert _state(app, game) == before


def test_a_photo_failing_in_the_pipeline_after_the_check_is_a_400_not_a_500(tmp_path):
    app = make_app(tmp_path, reader=FailingCrops())
    with TestClient(app) as client:
        game = new_game(client, app)  # before a round: the start draw is allowed too
        before = _state(app, game)
        for route in ("photo", "start-draw", "racks"):
            response = upload(client, game, route, PHOTO,
                              data={"player": "Ben"} if route == "racks" else None)
            assert response.status_code == 400, (route, response.text)
            assert "could not be decoded" in response.json()["detail"]
        assert _state(app, game) == before


def test_a_camera_frame_whose_data_cannot_be_decoded_is_counted_bad(tmp_path):
    app = make_app(tmp_path)
    with TestClient(app) as client:
        game = _game(client, app)
        headers = {"X-Token": game["token"], "content-type": "image/jpeg"}
        broken = without_quantization_tables(PHOTO)
        assert client.post(f"/api/games/{game['id']}/frames", content=broken,
                           headers=headers).status_code == 202
        deadline = time.monotonic() + 10
        assert _wait(app, game, "bad", deadline) == 1
        # The worker keeps reading the table's next frames.
        assert client.post(f"/api/games/{game['id']}/frames", content=PHOTO,
                           headers=headers).status_code == 202
        assert _wait(app, game, "read", deadline) == 1
