"""Photo bytes -> BGR image, with EXIF rotation honoured and clear errors.

OpenCV's own EXIF handling differs between versions and decoders, so this module decodes
with `IMREAD_IGNORE_ORIENTATION` and applies the JPEG's EXIF Orientation tag (read by a
small parser here) itself: the same pixels on every OpenCV build. The image size is read
from the file header before decoding, so an oversized photo is refused without allocating
it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np

MAX_BYTES = 64 * 1024 * 1024


class PhotoError(ValueError):
    """The input is not a photo this program can read (empty, corrupt, not an image, too big)."""


def _jpeg_info(data: bytes) -> tuple[tuple[int, int] | None, int, int]:
    """(width, height) from the SOF marker (None if not found), the EXIF orientation (1..8)
    and the offset where the first scan starts (0 if not found)."""
    size = None
    scan = 0
    orientation = 1
    pos = 2
    n = len(data)
    while pos + 4 <= n:
        if data[pos] != 0xFF:
            break
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        if marker == 0xDA:  # start of scan: headers are over
            scan = pos
            break
        if marker == 0xD9:
            break
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        segment = data[pos + 4 : pos + 2 + length]
        if marker == 0xE1 and segment[:6] == b"Exif\x00\x00":
            orientation = _exif_orientation(segment[6:])
        elif marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if len(segment) >= 5:
                height, width = struct.unpack(">HH", segment[1:5])
                size = (width, height)
        pos += 2 + length
    return size, orientation, scan


def _exif_orientation(tiff: bytes) -> int:
    """The Orientation tag (0x0112) of IFD0 of a TIFF/EXIF block, 1 when absent or unreadable."""
    try:
        if tiff[:2] == b"II":
            endian = "<"
        elif tiff[:2] == b"MM":
            endian = ">"
        else:
            return 1
        (ifd,) = struct.unpack(endian + "I", tiff[4:8])
        (count,) = struct.unpack(endian + "H", tiff[ifd : ifd + 2])
        for i in range(count):
            entry = tiff[ifd + 2 + 12 * i : ifd + 14 + 12 * i]
            tag, kind = struct.unpack(endian + "HH", entry[:4])
            if tag == 0x0112:
                if kind == 3:  # SHORT
                    (value,) = struct.unpack(endian + "H", entry[8:10])
                else:
                    (value,) = struct.unpack(endian + "I", entry[8:12])
                return value if 1 <= value <= 8 else 1
    except struct.error:
        return 1
    return 1


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    return None


def apply_orientation(image: np.ndarray, orientation: int) -> np.ndarray:
    """Turn stored pixels upright for an EXIF Orientation value (1..8)."""
    if orientation == 2:
        return cv2.flip(image, 1)
    if orientation == 3:
        return cv2.rotate(image, cv2.ROTATE_180)
    if orientation == 4:
        return cv2.flip(image, 0)
    if orientation == 5:  # transpose
        return cv2.transpose(image)
    if orientation == 6:
        return cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    if orientation == 7:  # transverse
        return cv2.rotate(cv2.transpose(image), cv2.ROTATE_180)
    if orientation == 8:
        return cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE)
    return image


def decode_image(data: bytes, *, max_side: int = 4096) -> np.ndarray:
    """Encoded photo bytes (JPEG, PNG, WebP, BMP, ...) -> upright BGR uint8 image.

    Raises PhotoError for empty, corrupt, non-image or too-large input (a side longer than
    `max_side` pixels, or more than 64 MB of bytes).
    """
    if data is None or len(data) == 0:
        raise PhotoError("empty photo: no bytes were given")
    if len(data) > MAX_BYTES:
        raise PhotoError(f"photo too large: {len(data)} bytes (limit {MAX_BYTES})")
    data = bytes(data)
    orientation = 1
    size = None
    scan = 0
    is_jpeg = data[:2] == b"\xff\xd8"
    if is_jpeg:
        size, orientation, scan = _jpeg_info(data)
    else:
        size = _png_size(data)
    if size is not None and max(size) > max_side:
        raise PhotoError(
            f"photo too large: {size[0]}x{size[1]} pixels (longest side allowed {max_side})"
        )
    buffer = np.frombuffer(data, np.uint8)
    image = cv2.imdecode(buffer, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    if image is None:
        if is_jpeg or size is not None:
            raise PhotoError("corrupt photo: the image data could not be decoded")
        raise PhotoError("not an image: the bytes are not a photo format OpenCV can read")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise PhotoError(f"unsupported image layout {image.shape} {image.dtype}")
    if max(image.shape[:2]) > max_side:
        raise PhotoError(
            f"photo too large: {image.shape[1]}x{image.shape[0]} pixels (longest side allowed {max_side})"
        )
    if is_jpeg and not _jpeg_complete(data, scan):
        raise PhotoError("corrupt photo: the JPEG data is truncated")
    return apply_orientation(image, orientation)


def _jpeg_complete(data: bytes, scan: int) -> bool:
    """A whole JPEG has an EOI marker after its first scan (entropy-coded data stuffs every
    0xFF byte, so FF D9 there is the real end; trailing bytes after it are allowed)."""
    return data.find(b"\xff\xd9", max(scan, 2)) >= 0


def read_photo(path) -> np.ndarray:
    """Read a photo file -> upright BGR uint8 image; PhotoError naming the file on failure."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PhotoError(f"photo not found: {path}") from None
    except IsADirectoryError:
        raise PhotoError(f"not a photo file (a directory): {path}") from None
    except OSError as error:
        raise PhotoError(f"cannot read photo {path}: {error.strerror or error}") from None
    try:
        return decode_image(data)
    except PhotoError as error:
        raise PhotoError(f"{path}: {error}") from None
