"""An iPhone's own photo format: HEIC, read through pillow-heif (`vision.recognition.decode`).

The photos here are encoded by pillow-heif's own HEVC encoder (x265), as an iPhone's are
by its own: the same container, the same codec. A real iPhone file adds depth maps,
thumbnails and HDR gain maps beside the primary image, which is the one read."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest

from tests.test_photo_inputs import _corners, _quadrants
from vision.recognition.decode import Photo, PhotoError, decode_image, read_header

pillow_heif = pytest.importorskip("pillow_heif")


def _heic(image_bgr: np.ndarray, orientation: int = 1, quality: int = 90) -> bytes:
    """HEIC bytes of a BGR image; `orientation` an Exif orientation, which pillow-heif
    writes as the container's rotation (as an iPhone writes both)."""
    from PIL import Image

    h, w = image_bgr.shape[:2]
    heif = pillow_heif.from_bytes(mode="BGR", size=(w, h), data=image_bgr.tobytes())
    exif = Image.Exif()
    exif[0x0112] = orientation
    out = io.BytesIO()
    heif.save(out, quality=quality, format="HEIF", exif=exif.tobytes())
    return out.getvalue()


def test_a_heic_photo_reads_upright_as_its_container_turns_it():
    data = _heic(_quadrants(96, 48), orientation=6)  # the phone held upright
    photo = Photo.from_bytes(data)
    assert photo.format == "HEIC" and (photo.width, photo.height) == (48, 96)
    assert photo.decoded() == ()  # the size came from the container, no pixel decoded
    image = photo.image()
    assert image.shape == (96, 48, 3) and image.dtype == np.uint8
    # turned a quarter clockwise, once: the container's rotation, not the Exif tag again
    assert _corners(image) == ["blue", "red", "green", "white"]
    assert _corners(decode_image(_heic(_quadrants(96, 48)))) == ["red", "green", "white",
                                                                 "blue"]
    assert photo.reduced(2).shape == (48, 24, 3)


def test_a_heic_too_large_is_refused_before_a_pixel_is_decoded():
    data = _heic(_quadrants(96, 48))
    with pytest.raises(PhotoError, match="photo too large: 96x48 pixels"):
        Photo.from_bytes(data, max_pixels=1000)


def test_a_cut_short_or_damaged_heic_is_a_photo_error_never_a_traceback():
    # noise, so that the image data is most of the file: a cut lands in it
    data = _heic(np.random.default_rng(0).integers(0, 256, (120, 160, 3), np.uint8))
    for n in (12, 40, 200, len(data) // 2, len(data) * 9 // 10):
        with pytest.raises(PhotoError, match="corrupt photo: the HEIC"):
            decode_image(data[:n])
    damaged = bytearray(data)
    damaged[len(data) // 3: len(data) // 3 + 64] = bytes(64)
    try:
        image = decode_image(bytes(damaged))  # HEVC may decode damaged data as pixels...
        assert image.shape == (120, 160, 3)
    except PhotoError as error:  # ...or the container says it is broken
        assert "corrupt photo" in str(error)


def test_an_avif_in_a_generic_heif_container_is_refused_by_name():
    ftyp = b"ftypmif1\x00\x00\x00\x00mif1avifmiaf"
    data = (8 + len(ftyp)).to_bytes(4, "big") + ftyp + bytes(64)
    with pytest.raises(PhotoError, match="AVIF is not read: send the photo as JPEG"):
        read_header(data)


def test_a_real_table_as_heic_reads_the_tiles_its_jpeg_reads(real_photos_dir, tile_reader):
    from training.real_data import load_split

    photo = load_split("valid", real_photos_dir)[0]
    jpeg = Photo.from_bytes(photo.path.read_bytes())
    heic = Photo.from_bytes(_heic(jpeg.image()))
    assert (heic.width, heic.height) == (jpeg.width, jpeg.height)
    # the same pixels within HEVC's loss
    assert float(np.abs(heic.image().astype(int) - jpeg.image()).mean()) < 3.0
    from_jpeg, from_heic = tile_reader.read(jpeg), tile_reader.read(heic)
    assert len(from_jpeg) == len(photo.tiles)
    assert sorted(from_heic.codes) == sorted(from_jpeg.codes)
    centres = cv2.norm(np.sort(from_heic.centers, axis=0) - np.sort(from_jpeg.centers, axis=0),
                       cv2.NORM_INF)
    assert centres < 3.0


def test_a_rack_photo_sent_as_heic_is_scored_as_its_jpeg_and_kept_as_sent(client, app):
    from tests.server_helpers import new_game, sample_bytes, upload

    jpeg = sample_bytes("rack_marble.jpg")
    game = new_game(client, app)
    as_jpeg = upload(client, game, "racks", jpeg, data={"player": "Ben"}).json()
    heic = _heic(Photo.from_bytes(jpeg).image())
    as_heic = upload(client, game, "racks", heic, data={"player": "Ann"},
                     content_type="image/heic").json()
    assert len(as_jpeg["tiles"]) == 14
    assert sorted(as_heic["tiles"]) == sorted(as_jpeg["tiles"])
    assert as_heic["total"] == as_jpeg["total"]
    url = f"/api/games/{game['id']}/photos/{as_heic['photo_id']}"
    # kept as sent, and given as sent to a browser that shows HEIC (Safari asks for it)
    kept = client.get(url, headers={"X-Token": game["token"],
                                    "Accept": "image/webp,image/heic,image/*;q=0.8"})
    assert kept.status_code == 200 and kept.content == heic
    assert kept.headers["content-type"] == "image/heic"
    # ...and as a JPEG of the same size to one that does not (Chrome's img Accept)
    shown = client.get(url, headers={"X-Token": game["token"],
                                     "Accept": "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"})
    assert shown.status_code == 200 and shown.headers["content-type"] == "image/jpeg"
    assert "Accept" in shown.headers["vary"]
    assert Photo.from_bytes(shown.content).shape == Photo.from_bytes(heic).shape


def test_rummikub_score_reads_a_heic_rack_photo_as_its_jpeg(tmp_path):
    from tests.server_helpers import sample_bytes
    from tests.test_cli_process import run

    jpeg = sample_bytes("rack_marble.jpg")
    (tmp_path / "rack.jpg").write_bytes(jpeg)
    (tmp_path / "rack.heic").write_bytes(_heic(Photo.from_bytes(jpeg).image()))
    as_jpeg, as_heic = run("score", tmp_path / "rack.jpg"), run("score", tmp_path / "rack.heic")
    assert as_jpeg.returncode == as_heic.returncode == 0, as_heic.stderr
    # "...rack.jpg: 14 tiles, penalty 95" and its rows, the same from either file
    said = [out.stdout.split(": ", 1)[1] for out in (as_jpeg, as_heic)]
    assert "14 tiles, penalty" in said[0] and said[1] == said[0]


def test_the_page_shows_a_rack_photo_sent_as_heic(tmp_path):
    # Chrome shows no HEIC: the rack card's photo comes as a JPEG, its marks over it
    from playwright.sync_api import sync_playwright

    from tests.page_helpers import Server, chromium_path, launch
    from tests.server_helpers import sample_bytes
    from tests.test_page_family import _ann_rack_photo

    chromium_path()
    photo = tmp_path / "rack.heic"
    photo.write_bytes(_heic(Photo.from_bytes(sample_bytes("rack_marble.jpg")).image()))
    server = Server(tmp_path / "data").start()
    try:
        with sync_playwright() as pw:
            browser = launch(pw)
            page, errors, card, reading = _ann_rack_photo(server, browser, photo)
            assert len(reading["tiles"]) == 14 and not errors
            shown = card.locator(".rack-view img")
            page.wait_for_function("(img) => img.complete && img.naturalWidth > 0",
                                   arg=shown.element_handle(), timeout=30_000)
            assert shown.evaluate("(img) => [img.naturalWidth, img.naturalHeight]") == [1000, 750]
            browser.close()
    finally:
        server.stop()
