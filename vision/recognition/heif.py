"""HEIC, an iPhone's own photo format, for `vision.recognition.decode`: which bytes are one
(by their ftyp box), their size from the container, and their pixels, through pillow-heif
(libheif and its HEVC decoder; OpenCV reads no HEIC). Why and what was measured:
docs/decisions/heic-photos.md."""

from __future__ import annotations

import cv2
import numpy as np

from vision.recognition.decode import ACCEPTED, Header, PhotoError

# HEIF brands whose images are HEVC (an iPhone's photo: heic; mif1 its generic brand)
_HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs",
                b"mif1", b"msf1")


def ftyp_brands(data: bytes) -> list[bytes]:
    """The major and compatible brands of an ISO media file's ftyp box ([] if none)."""
    if data[4:8] != b"ftyp" or len(data) < 12:
        return []
    size = min(int.from_bytes(data[:4], "big"), len(data), 256)
    return [data[8:12]] + [data[i:i + 4] for i in range(16, size - 3, 4)]


def heif_brand(data: bytes) -> bool:
    """A HEIF file whose images are HEVC (not AVIF: a mif1 file may hold either)."""
    brands = ftyp_brands(data)
    return bool(brands) and brands[0] in _HEIF_BRANDS and b"avif" not in brands \
        and b"avis" not in brands


def _open_heif(data: bytes):
    """pillow-heif's lazy view of HEIF bytes (nothing decoded yet), or PhotoError."""
    try:
        import pillow_heif
    except ImportError:
        raise PhotoError(f"HEIC is not read here (pillow-heif is not installed): send the "
                         f"photo as {ACCEPTED.replace(' or HEIC', '')}") from None
    try:
        return pillow_heif.open_heif(data, convert_hdr_to_8bit=True, bgr_mode=True)
    except (ValueError, RuntimeError, OSError, SyntaxError, EOFError) as error:
        raise PhotoError("corrupt photo: the HEIC data could not be read "
                         f"({_first_line(error)})") from None


def heif_header(data: bytes) -> Header:
    """A HEIC's upright size, from its container (the primary image's, turned as its
    rotation says): no pixel is decoded."""
    width, height = _open_heif(data).size
    return Header("HEIC", int(width), int(height))


def decode_heif(data: bytes) -> np.ndarray:
    """The HEIC's primary image, upright, BGR uint8."""
    try:
        image = np.asarray(_open_heif(data))
    except PhotoError:
        raise
    except (ValueError, RuntimeError, OSError, MemoryError) as error:
        raise PhotoError("corrupt photo: the HEIC image data could not be decoded "
                         f"({_first_line(error)})") from None
    if image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    return np.ascontiguousarray(image)


def _first_line(error: Exception) -> str:
    """An error's words on one line (libheif's end with a newline)."""
    return " ".join(str(error).split())
