"""Every input a photo path can be: phone-sized photos are read; bombs, devices, pipes,
directories, huge files and formats whose size cannot be checked get one clear error, in
bounded time and memory."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import zlib

import cv2
import numpy as np
import pytest

from vision.recognition.decode import (
    MAX_BYTES,
    MAX_PIXELS,
    Photo,
    PhotoError,
    decode_image,
    open_photo,
    read_file,
    read_header,
    read_photo,
)
from vision.recognition.settings import REPO_ROOT


def _quadrants(w: int, h: int) -> np.ndarray:
    """Top-left red, top-right green, bottom-left blue, bottom-right white (BGR)."""
    img = np.zeros((h, w, 3), np.uint8)
    img[: h // 2, : w // 2] = (0, 0, 255)
    img[: h // 2, w // 2 :] = (0, 255, 0)
    img[h // 2 :, : w // 2] = (255, 0, 0)
    img[h // 2 :, w // 2 :] = (255, 255, 255)
    return img


def _corners(img) -> list[str]:
    names = {(0, 0, 1): "red", (0, 1, 0): "green", (1, 0, 0): "blue", (1, 1, 1): "white"}
    h, w = img.shape[:2]
    spots = [(h // 8, w // 8), (h // 8, w - 1 - w // 8), (h - 1 - h // 8, w - 1 - w // 8),
             (h - 1 - h // 8, w // 8)]
    return [names[tuple(int(v > 128) for v in img[y, x])] for y, x in spots]


def _encode(ext: str, img: np.ndarray, *params) -> bytes:
    ok, data = cv2.imencode(ext, img, list(params))
    assert ok
    return data.tobytes()


def _with_orientation(jpeg: bytes, orientation: int) -> bytes:
    tiff = b"II" + struct.pack("<HI", 42, 8) + struct.pack("<H", 1)
    tiff += struct.pack("<HHI", 0x0112, 3, 1) + struct.pack("<HH", orientation, 0)
    tiff += struct.pack("<I", 0)
    payload = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + jpeg[2:]


def deflate_tiff(width: int, height: int) -> bytes:
    """A real RGB TIFF of black pixels whose every one-row strip points at the same
    deflated row: a few hundred kB on disk that decode to width*height*3 bytes."""
    row = zlib.compress(bytes(3 * width), 9)
    entries = 10
    ifd_size = 2 + 12 * entries + 4
    bits_at = 8 + ifd_size
    offsets_at = bits_at + 6
    counts_at = offsets_at + 4 * height
    row_at = counts_at + 4 * height
    ifd = struct.pack("<H", entries)
    for tag, kind, count, value in [
        (256, 4, 1, width), (257, 4, 1, height), (258, 3, 3, bits_at),
        (259, 3, 1, 8),  # deflate
        (262, 3, 1, 2),  # RGB
        (273, 4, height, offsets_at), (277, 3, 1, 3), (278, 4, 1, 1),
        (279, 4, height, counts_at), (284, 3, 1, 1),
    ]:
        if kind == 3 and count == 1:
            ifd += struct.pack("<HHIHH", tag, kind, count, value, 0)
        else:
            ifd += struct.pack("<HHII", tag, kind, count, value)
    ifd += struct.pack("<I", 0)
    body = struct.pack("<HHH", 8, 8, 8)
    body += struct.pack(f"<{height}I", *([row_at] * height))
    body += struct.pack(f"<{height}I", *([len(row)] * height))
    return b"II*\x00" + struct.pack("<I", 8) + ifd + body + row


def webp_claiming(width: int, height: int, kind: str) -> bytes:
    """A small WebP whose header says it is width x height (the bytes of a bomb's header)."""
    img = _quadrants(64, 32)
    if kind == "VP8 ":
        data = bytearray(_encode(".webp", img, cv2.IMWRITE_WEBP_QUALITY, 80))
        assert data[12:16] == b"VP8 "
        data[26:30] = struct.pack("<HH", width, height)
        return bytes(data)
    data = bytearray(_encode(".webp", img, cv2.IMWRITE_WEBP_QUALITY, 101))
    assert data[12:16] == b"VP8L"
    if kind == "VP8L":
        bits = int.from_bytes(data[21:25], "little")
        bits = (bits & ~((1 << 28) - 1)) | (width - 1) | ((height - 1) << 14)
        data[21:25] = bits.to_bytes(4, "little")
        return bytes(data)
    chunk = b"VP8X" + struct.pack("<I", 10) + bytes(4) + (width - 1).to_bytes(3, "little") \
        + (height - 1).to_bytes(3, "little")
    rest = chunk + bytes(data[12:])
    return b"RIFF" + struct.pack("<I", 4 + len(rest)) + b"WEBP" + rest


# -- formats ---------------------------------------------------------------------------------
@pytest.mark.parametrize("ext, params", [
    (".png", ()), (".webp", (cv2.IMWRITE_WEBP_QUALITY, 90)), (".webp", (cv2.IMWRITE_WEBP_QUALITY, 101)),
    (".tiff", ()), (".bmp", ()), (".jpg", (cv2.IMWRITE_JPEG_QUALITY, 95)),
])
def test_accepted_formats_are_sized_from_their_header_and_read(ext, params):
    data = _encode(ext, _quadrants(96, 48), *params)
    header = read_header(data)
    assert (header.width, header.height) == (96, 48)
    img = decode_image(data)
    assert img.shape == (48, 96, 3)
    assert _corners(img) == ["red", "green", "white", "blue"]


def test_a_real_deflate_tiff_of_this_kind_decodes():
    # the bomb below is a real image: small, it decodes to black pixels
    img = decode_image(deflate_tiff(300, 200))
    assert img.shape == (200, 300, 3) and not img.any()


def test_gif_is_refused_saying_why():
    data = _encode(".gif", _quadrants(64, 32))
    with pytest.raises(PhotoError, match="GIF is not read: its 256-colour palette"):
        decode_image(data)


@pytest.mark.parametrize("ext, name", [(".ppm", "PNM"), (".jp2", "JPEG 2000"), (".hdr", "HDR"),
                                       (".avif", "AVIF")])
def test_formats_whose_size_is_not_checked_are_refused_by_name(ext, name):
    try:
        data = _encode(ext, _quadrants(64, 32))
    except cv2.error:
        pytest.skip(f"this OpenCV cannot write {ext}")
    with pytest.raises(PhotoError, match=f"{name}.*is not read: send the photo as JPEG"):
        decode_image(data)


@pytest.mark.parametrize("ext", [".jpg", ".png", ".webp", ".tiff", ".bmp"])
def test_every_cut_short_header_is_a_photo_error(ext):
    data = _encode(ext, _quadrants(64, 32))
    for n in range(1, min(len(data), 400)):
        try:
            read_header(data[:n])
        except PhotoError:
            pass


# -- bombs and things that are not photo files ----------------------------------------------
@pytest.mark.parametrize("data, size", [
    (deflate_tiff(20000, 20000), "20000x20000 pixels, 400 megapixels"),
    (webp_claiming(16000, 16000, "VP8 "), "16000x16000 pixels, 256 megapixels"),
    (webp_claiming(16000, 16000, "VP8L"), "16000x16000 pixels, 256 megapixels"),
    (webp_claiming(16000, 16000, "VP8X"), "16000x16000 pixels, 256 megapixels"),
])
def test_bombs_are_refused_from_the_header(data, size):
    with pytest.raises(PhotoError, match=f"too large: {size} \\(at most 120 allowed\\)"):
        Photo.from_bytes(data)


def test_refused_inputs_take_bounded_time_and_memory(tmp_path):
    """In a child process (its peak memory is its own): bombs, a 2 GB file, /dev/zero and
    a FIFO are refused; the peak grows by less than 100 MB over the imports."""
    cases = {
        "tiff_bomb.tif": deflate_tiff(20000, 20000),
        "webp_bomb.webp": webp_claiming(16000, 16000, "VP8L"),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    huge = tmp_path / "huge.jpg"
    with open(huge, "wb") as f:
        f.write(_encode(".jpg", _quadrants(64, 32)))
        f.truncate(2 * 1024**3)  # sparse: 2 GB that take no disk
    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    paths = [str(tmp_path / n) for n in cases] + [str(huge), "/dev/zero", str(fifo)]
    child = (
        "import json, resource, sys\n"
        "from vision.recognition.decode import PhotoError, read_photo\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "out = {}\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        out[path] = 'read ' + str(read_photo(path).shape)\n"
        "    except PhotoError as error:\n"
        "        out[path] = str(error)\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps({'messages': out, 'growth_mb': (peak - base) / 1024}))\n"
    )
    result = subprocess.run([sys.executable, "-c", child, *paths], capture_output=True, text=True,
                            timeout=60, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    messages = report["messages"]
    assert "too large: 20000x20000 pixels" in messages[paths[0]]
    assert "too large: 16000x16000 pixels" in messages[paths[1]]
    assert f"too large: {2 * 1024**3} bytes" in messages[str(huge)]
    assert "not a photo file (a device, pipe or socket): /dev/zero" in messages["/dev/zero"]
    assert f"not a photo file (a device, pipe or socket): {fifo}" in messages[str(fifo)]
    assert report["growth_mb"] < 100


def test_a_directory_is_not_a_photo(tmp_path):
    with pytest.raises(PhotoError, match=f"not a photo file \\(a directory\\): {tmp_path}"):
        read_photo(tmp_path)


def test_at_most_the_limit_is_read(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(5000))
    assert len(read_file(path, max_bytes=5000)) == 5000
    with pytest.raises(PhotoError, match="big.bin: photo too large: 5000 bytes"):
        read_file(path, max_bytes=4999)
    assert MAX_BYTES >= 64 * 1024**2 and MAX_PIXELS >= 108_000_000  # a 108 MP phone photo


# -- phone photos ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample():
    return cv2.imread(str(REPO_ROOT / "sample_images" / "table_runs_groups.jpg"))


@pytest.mark.parametrize("width, height", [(4624, 3468), (8160, 6120)])  # 16 MP, 50 MP
def test_phone_photos_are_read(tmp_path, sample, width, height):
    big = cv2.resize(sample, (width, height), interpolation=cv2.INTER_LINEAR)
    path = tmp_path / "phone.jpg"
    path.write_bytes(_with_orientation(_encode(".jpg", big, cv2.IMWRITE_JPEG_QUALITY, 85), 6))
    photo = open_photo(path)
    assert (photo.width, photo.height) == (height, width)  # stored sideways, read upright
    small = photo.reduced(8)
    assert small.shape == (-(-width // 8), -(-height // 8), 3)
    whole = photo.image()
    assert whole.shape == (width, height, 3)
    # the reduced decode is the whole photo shrunk: same picture, same way up
    shrunk = cv2.resize(whole, small.shape[1::-1], interpolation=cv2.INTER_AREA)
    assert np.abs(shrunk.astype(np.int16) - small).mean() < 3


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("factor", [2, 4, 8])
def test_reduced_decodes_keep_the_exif_orientation(orientation, factor):
    data = _with_orientation(_encode(".jpg", _quadrants(256, 128), cv2.IMWRITE_JPEG_QUALITY, 95),
                             orientation)
    photo = Photo.from_bytes(data)
    whole, small = photo.image(), photo.reduced(factor)
    assert small.shape[:2] == tuple(-(-n // factor) for n in whole.shape[:2])
    assert _corners(small) == _corners(whole)


def test_reduction_for_keeps_the_detector_input_full():
    photo = Photo.from_bytes(_encode(".jpg", _quadrants(4032, 3024)))
    assert photo.reduction_for(512) == 4  # 1008 px; at 1/8 only 504 would be left
    assert photo.reduction_for(4032) == 1


@pytest.mark.skipif(not (REPO_ROOT / ".venv" / "bin" / "rummikub").exists(),
                    reason="console script not installed")
@pytest.mark.skipif(not (REPO_ROOT / "models" / "detector.onnx").is_file(), reason="no models")
def test_scan_says_one_line_for_each_input_it_cannot_read(tmp_path):
    gif = tmp_path / "table.gif"
    gif.write_bytes(_encode(".gif", _quadrants(64, 32)))
    bomb = tmp_path / "bomb.tif"
    bomb.write_bytes(deflate_tiff(20000, 20000))
    result = subprocess.run(
        [str(REPO_ROOT / ".venv" / "bin" / "rummikub"), "scan", "--json", str(gif), str(bomb),
         "/dev/zero", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 4 and "Traceback" not in result.stderr
    for line, name in zip(lines, ["table.gif", "bomb.tif", "/dev/zero", str(tmp_path)], strict=True):
        assert name in line
    assert "GIF is not read" in lines[0] and "too large" in lines[1]
    assert [photo["error"] for photo in json.loads(result.stdout)]


# -- damaged PNGs: one line, ours -------------------------------------------------------------
def _damaged_pngs() -> dict[str, bytes]:
    good = _encode(".png", _quadrants(96, 48))
    at = good.find(b"IDAT") + 20
    flipped = good[:at] + bytes([good[at] ^ 0xFF]) + good[at + 1 :]
    return {"flipped.png": flipped, "cut.png": good[: len(good) // 2],
            "no_end.png": good[:-12], "header_only.png": good[:30]}


@pytest.mark.parametrize("name, words", [
    ("flipped.png", "the PNG chunk IDAT is damaged (its checksum does not match)"),
    ("cut.png", "the PNG data is truncated"),
    ("no_end.png", "the PNG data is truncated"),
    ("header_only.png", "the PNG data is truncated"),
])
def test_a_damaged_png_is_found_from_its_chunks_before_decoding(name, words):
    with pytest.raises(PhotoError, match=re.escape(f"corrupt photo: {words}")):
        Photo.from_bytes(_damaged_pngs()[name])


@pytest.mark.skipif(not (REPO_ROOT / "models" / "detector.onnx").is_file(), reason="no models")
def test_scan_of_a_damaged_png_says_one_line_and_libpng_says_nothing(tmp_path):
    paths = []
    for name, data in _damaged_pngs().items():
        paths.append(tmp_path / name)
        paths[-1].write_bytes(data)
    result = subprocess.run([sys.executable, "-m", "app", "scan", *map(str, paths)],
                            capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(paths), result.stderr  # libpng printed nothing of its own
    for line, path in zip(lines, paths, strict=True):
        assert str(path) in line and "corrupt photo: the PNG" in line
