"""vision.recognition.decode: EXIF rotation, size limits and clear errors for bad input."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest

from vision.recognition.decode import PhotoError, decode_image, read_photo


def _quadrant_image(w: int = 64, h: int = 32) -> np.ndarray:
    """Top-left red, top-right green, bottom-left blue, bottom-right white (BGR)."""
    img = np.zeros((h, w, 3), np.uint8)
    img[: h // 2, : w // 2] = (0, 0, 255)
    img[: h // 2, w // 2 :] = (0, 255, 0)
    img[h // 2 :, : w // 2] = (255, 0, 0)
    img[h // 2 :, w // 2 :] = (255, 255, 255)
    return img


def _jpeg(img: np.ndarray, quality: int = 95) -> bytes:
    ok, enc = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return enc.tobytes()


def _exif_app1(orientation: int, big_endian: bool = False) -> bytes:
    """A hand-built APP1 segment: 'Exif\\0\\0' + TIFF header + IFD0 with one Orientation entry."""
    e = ">" if big_endian else "<"
    tiff = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8)
    tiff += struct.pack(e + "H", 1)  # one entry
    tiff += struct.pack(e + "HHI", 0x0112, 3, 1) + struct.pack(e + "HH", orientation, 0)
    tiff += struct.pack(e + "I", 0)  # no next IFD
    payload = b"Exif\x00\x00" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def _with_exif(jpeg: bytes, orientation: int, big_endian: bool = False) -> bytes:
    assert jpeg[:2] == b"\xff\xd8"
    return jpeg[:2] + _exif_app1(orientation, big_endian) + jpeg[2:]


def _colour_at(img, y, x):
    b, g, r = (int(v) for v in img[y, x])
    return {(0, 0, 255): "red", (0, 255, 0): "green", (255, 0, 0): "blue", (255, 255, 255): "white"}[
        tuple(255 if v > 128 else 0 for v in (b, g, r))
    ]


def _corners(img):
    h, w = img.shape[:2]
    return [_colour_at(img, 4, 4), _colour_at(img, 4, w - 5), _colour_at(img, h - 5, w - 5), _colour_at(img, h - 5, 4)]


def test_plain_jpeg_decodes_as_stored():
    img = decode_image(_jpeg(_quadrant_image()))
    assert img.shape == (32, 64, 3) and img.dtype == np.uint8
    assert _corners(img) == ["red", "green", "white", "blue"]


@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize(
    "orientation, shape, corners",
    [
        (1, (32, 64), ["red", "green", "white", "blue"]),
        (2, (32, 64), ["green", "red", "blue", "white"]),  # mirrored left-right
        (3, (32, 64), ["white", "blue", "red", "green"]),  # 180
        (4, (32, 64), ["blue", "white", "green", "red"]),  # mirrored top-bottom
        (5, (64, 32), ["red", "blue", "white", "green"]),  # transpose
        (6, (64, 32), ["blue", "red", "green", "white"]),  # stored rotated: turn 90 clockwise
        (7, (64, 32), ["white", "green", "red", "blue"]),  # transverse
        (8, (64, 32), ["green", "white", "blue", "red"]),  # turn 90 counter-clockwise
    ],
)
def test_exif_orientation_is_honoured(orientation, shape, corners, big_endian):
    data = _with_exif(_jpeg(_quadrant_image()), orientation, big_endian)
    img = decode_image(data)
    assert img.shape[:2] == shape
    assert _corners(img) == corners


def test_png_decodes():
    ok, enc = cv2.imencode(".png", _quadrant_image())
    img = decode_image(enc.tobytes())
    assert _corners(img) == ["red", "green", "white", "blue"]


def test_empty_bytes():
    with pytest.raises(PhotoError, match="empty"):
        decode_image(b"")


def test_text_is_not_an_image():
    with pytest.raises(PhotoError, match="not an image"):
        decode_image(b"hello, this is a text file\n" * 20)


def test_truncated_jpeg():
    data = _jpeg(np.random.default_rng(0).integers(0, 255, (200, 300, 3), dtype=np.uint8))
    with pytest.raises(PhotoError, match="corrupt|truncated"):
        decode_image(data[: len(data) // 2])


def test_garbage_after_jpeg_header():
    data = _jpeg(_quadrant_image())
    with pytest.raises(PhotoError):
        decode_image(data[:200] + b"\x00" * 50)


def test_the_limit_is_on_total_pixels_not_on_a_side():
    data = _jpeg(np.zeros((10, 300, 3), np.uint8))
    with pytest.raises(PhotoError, match="too large: 300x10 pixels"):
        decode_image(data, max_pixels=2999)
    assert decode_image(data, max_pixels=3000).shape == (10, 300, 3)
    # a long thin panorama is fine as long as its pixels are
    assert decode_image(_jpeg(np.zeros((8, 6000, 3), np.uint8))).shape == (8, 6000, 3)


def test_photo_error_is_a_value_error():
    assert issubclass(PhotoError, ValueError)


def test_read_photo(tmp_path):
    path = tmp_path / "p.jpg"
    path.write_bytes(_with_exif(_jpeg(_quadrant_image()), 6))
    assert read_photo(path).shape[:2] == (64, 32)
    missing = tmp_path / "missing.jpg"
    with pytest.raises(PhotoError, match="missing.jpg"):
        read_photo(missing)
    text = tmp_path / "notes.txt"
    text.write_text("not a photo")
    with pytest.raises(PhotoError, match="notes.txt"):
        read_photo(text)
