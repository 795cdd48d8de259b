"""Photo bytes -> BGR image, with EXIF rotation honoured, bounded memory and clear errors.

Every accepted format's image size is read from its header BEFORE anything is decoded, so
a decompression bomb (a small file that decodes to gigabytes) is refused without
allocating it; formats whose size cannot be checked that way are refused. The limits are
on total pixels (`MAX_PIXELS`, so any phone photo up to 108 MP is read) and on file size
(`MAX_BYTES`); a file is read only when it is a regular file, and never past the limit.

Accepted: JPEG, PNG, WebP, TIFF, BMP, and HEIC (an iPhone's own format, read through
pillow-heif: libheif with its HEVC decoder; the container's size is read before a pixel is
decoded, and the pixels come turned as the container's rotation and mirror say, which is
what the iPhone's Exif orientation says too, so that tag is not applied again). GIF is
refused: its 256-colour palette turns red, orange and the tile cream into other colours,
so a GIF reads differently from the same photo as JPEG. AVIF is refused by name (no
decoder here).

OpenCV's own EXIF handling differs between versions and decoders, so this module decodes
with `IMREAD_IGNORE_ORIENTATION` and applies the Orientation tag (read by a small parser
here) itself: the same pixels on every OpenCV build.

A damaged PNG is found here before libpng sees it: libpng reports its errors by printing
"libpng error: ..." to stderr itself (OpenCV gives it no error handler), which would put a
second, cryptic line beside this module's one. Damage in storage or transfer (a changed
byte, a cut-off file) breaks a chunk's CRC or its length, so the header check walks the
chunks and compares their checksums. Not checked: compressed data that a faulty program
wrote wrong with correct checksums (libpng's line still shows then); finding that means
inflating the pixel data a second time: +65 % on the decode of a 12 MP PNG (135 ms on top
of 208 ms, medians of 7), against 2 % (4 ms) for the checksums.

`Photo` holds the checked bytes and decodes on demand: `image()` at full size, and
`reduced(k)` at 1/2, 1/4 or 1/8 of each side, which for a JPEG is libjpeg's scaled
decode (the inverse DCT at the smaller size: a 12 MP photo decodes at 1/4 in a fifth of
the time of the whole). The photo pipeline detects on a reduced decode and crops tiles
from the smallest decode that still holds them in full detail.
"""

from __future__ import annotations

import os
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

MAX_BYTES = 64 * 1024 * 1024
# 120 million pixels: a 108 MP phone photo (12000x9000) is read; decoded it takes 324 MB.
MAX_PIXELS = 120_000_000
ACCEPTED = "JPEG, PNG, WebP, TIFF, BMP or HEIC"
REDUCTIONS = (1, 2, 4, 8)
_REDUCED_FLAG = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2,
                 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}


class PhotoError(ValueError):
    """The input is not a photo this program can read (empty, corrupt, not an image, too big)."""


@dataclass(frozen=True)
class Header:
    """What a photo's header says: format, stored size, EXIF orientation (1..8)."""

    format: str
    width: int  # as stored, before the orientation is applied
    height: int
    orientation: int = 1
    scan: int = 0  # JPEG: where the first scan (the compressed pixels) starts


# -- headers ---------------------------------------------------------------------------------
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


def _tiff_tags(tiff: bytes, wanted: set[int]) -> dict[int, int]:
    """Values of the wanted SHORT/LONG tags of IFD0 of a TIFF (or EXIF) block."""
    endian = "<" if tiff[:2] == b"II" else ">"
    (ifd,) = struct.unpack(endian + "I", tiff[4:8])
    (count,) = struct.unpack(endian + "H", tiff[ifd : ifd + 2])
    found = {}
    for i in range(count):
        entry = tiff[ifd + 2 + 12 * i : ifd + 14 + 12 * i]
        tag, kind = struct.unpack(endian + "HH", entry[:4])
        if tag in wanted:
            if kind == 3:  # SHORT
                (found[tag],) = struct.unpack(endian + "H", entry[8:10])
            elif kind == 4:  # LONG
                (found[tag],) = struct.unpack(endian + "I", entry[8:12])
    return found


def _exif_orientation(tiff: bytes) -> int:
    """The Orientation tag (0x0112) of IFD0 of a TIFF/EXIF block, 1 when absent or unreadable."""
    if tiff[:2] not in (b"II", b"MM"):
        return 1
    try:
        value = _tiff_tags(tiff, {0x0112}).get(0x0112, 1)
    except struct.error:
        return 1
    return value if 1 <= value <= 8 else 1


def _tiff_header(data: bytes) -> Header:
    try:
        tags = _tiff_tags(data, {256, 257, 274, 322, 323})
    except struct.error:
        raise PhotoError("corrupt photo: the TIFF header is cut short") from None
    if 256 not in tags or 257 not in tags:
        raise PhotoError("corrupt photo: the TIFF header gives no image size")
    # libtiff allocates a whole tile at once: a tile may not be a bomb either
    tile = tags.get(322, 0) * tags.get(323, 0)
    if tile > MAX_PIXELS:
        raise PhotoError(f"photo too large: TIFF tiles of {tags[322]}x{tags[323]} pixels")
    orientation = tags.get(274, 1)
    return Header("TIFF", tags[256], tags[257], orientation if 1 <= orientation <= 8 else 1)


def _webp_header(data: bytes) -> Header:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a" and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return Header("WebP", width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return Header("WebP", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        return Header("WebP", int.from_bytes(data[24:27], "little") + 1,
                      int.from_bytes(data[27:30], "little") + 1)
    raise PhotoError("corrupt photo: the WebP header gives no image size")


def _bmp_header(data: bytes) -> Header:
    if len(data) < 26:
        raise PhotoError("corrupt photo: the BMP header is cut short")
    (dib,) = struct.unpack("<I", data[14:18])
    if dib == 12:  # OS/2 BITMAPCOREHEADER
        width, height = struct.unpack("<HH", data[18:22])
    else:
        width, height = struct.unpack("<ii", data[18:26])
    return Header("BMP", width, abs(height))


def read_header(data: bytes) -> Header:
    """The format and stored size of encoded photo bytes, from the header alone.

    Raises PhotoError for a format that is not accepted (naming it where it is known) and
    for a header that gives no usable size.
    """
    if data[:3] == b"\xff\xd8\xff":
        size, orientation, scan = _jpeg_info(data)
        if size is None or 0 in size:
            raise PhotoError("corrupt photo: the JPEG header gives no image size")
        header = Header("JPEG", size[0], size[1], orientation, scan)
    elif data[:8] == b"\x89PNG\r\n\x1a\n":
        if len(data) < 24 or data[12:16] != b"IHDR":
            raise PhotoError("corrupt photo: the PNG header is cut short")
        header = Header("PNG", *struct.unpack(">II", data[16:24]))
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        header = _webp_header(data)
    elif data[:4] in (b"II*\x00", b"MM\x00*"):
        header = _tiff_header(data)
    elif data[:2] == b"BM":
        header = _bmp_header(data)
    elif heif.heif_brand(data):
        header = heif.heif_header(data)
    elif data[:6] in (b"GIF87a", b"GIF89a"):
        raise PhotoError("GIF is not read: its 256-colour palette changes the tiles' colours; "
                         f"send the photo as {ACCEPTED}")
    else:
        kind = _other_format(data)
        if kind:
            raise PhotoError(f"{kind} is not read: send the photo as {ACCEPTED}")
        raise PhotoError(f"not an image: the bytes are not a {ACCEPTED} photo")
    if header.width <= 0 or header.height <= 0:
        raise PhotoError(f"corrupt photo: the {header.format} header gives a size of "
                         f"{header.width}x{header.height}")
    return header


def _other_format(data: bytes) -> str | None:
    """The name of an image format OpenCV might read but whose size is not checked here."""
    if data[4:8] == b"ftyp":
        brands = heif.ftyp_brands(data)
        if b"avif" in brands or b"avis" in brands:
            return "AVIF"
    if data[:4] in (b"II+\x00", b"MM\x00+"):
        return "BigTIFF"
    if data[:12] == b"\x00\x00\x00\x0cjP  \r\n\x87\n" or data[:4] == b"\xff\x4f\xff\x51":
        return "JPEG 2000"
    if data[:2] in (b"P1", b"P2", b"P3", b"P4", b"P5", b"P6", b"P7", b"Pf", b"PF"):
        return "PNM/PFM"
    if data[:4] == b"\x76\x2f\x31\x01":
        return "OpenEXR"
    if data[:10] in (b"#?RADIANCE", b"#?RGBE\n\n\n\n"[:10]):
        return "Radiance HDR"
    if data[:4] == b"\x59\xa6\x6a\x95":
        return "Sun raster"
    return None


# -- PNG integrity -------------------------------------------------------------------------
_PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def _png_damaged(what: str) -> PhotoError:
    return PhotoError(f"corrupt photo: the PNG {what}")


def _check_png(data: bytes) -> None:
    """The checks libpng would otherwise fail loudly: an IHDR it accepts, every chunk whole
    with a matching checksum, the image data one run of IDAT chunks, a palette where the
    colour type needs one, and IEND at the end. Costs a CRC over the file (4 ms for a
    12 MP PNG), no inflating."""
    if len(data) < 33:  # the signature and a whole IHDR chunk
        raise _png_damaged("data is truncated")
    depth, color, compression, filtering, interlace = data[24:29]
    if color not in _PNG_DEPTHS or depth not in _PNG_DEPTHS[color] or compression \
            or filtering or interlace > 1:
        raise _png_damaged(f"header is damaged (bit depth {depth}, colour type {color})")
    view = memoryview(data)
    pos, n = 8, len(data)
    idat = after_idat = palette = False
    while True:
        if pos + 12 > n:
            raise _png_damaged("data is truncated")
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = bytes(data[pos + 4 : pos + 8])
        end = pos + 12 + length
        if length > 0x7FFFFFFF or end > n:
            raise _png_damaged("data is truncated")
        if zlib.crc32(view[pos + 4 : end - 4]) != int.from_bytes(data[end - 4 : end], "big"):
            name = kind.decode("latin-1") if kind.isalpha() else "?"
            raise _png_damaged(f"chunk {name} is damaged (its checksum does not match)")
        if kind == b"IDAT":
            if after_idat:
                raise _png_damaged("image data is split by other chunks")
            idat = True
        elif idat:
            after_idat = True
        if kind == b"PLTE":
            palette = True
            if length % 3 or not 3 <= length <= 768:
                raise _png_damaged("palette is damaged")
        if kind == b"IEND":
            break
        pos = end
    if not idat:
        raise _png_damaged("holds no image data")
    if color == 3 and not palette:
        raise _png_damaged("palette is missing")


# -- orientation -----------------------------------------------------------------------------
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


def _jpeg_complete(data: bytes, scan: int) -> bool:
    """A whole JPEG has an EOI marker after its first scan (entropy-coded data stuffs every
    0xFF byte, so FF D9 there is the real end; trailing bytes after it are allowed)."""
    # rfind: the same answer, found at the file's end at once (find walked the whole scan).
    return data.rfind(b"\xff\xd9", max(scan, 2)) >= 0


# -- the photo -------------------------------------------------------------------------------
class Photo:
    """Encoded photo bytes whose header passed the limits; pixels are decoded on demand.

    `width`/`height`/`shape` are the upright full size (EXIF orientation applied), so a
    Photo answers the size questions an image array would without decoding it.
    """

    def __init__(self, data: bytes, header: Header, name: str | None = None) -> None:
        self.data = data
        self.header = header
        self.name = name
        turned = header.orientation in (5, 6, 7, 8)
        self.width = header.height if turned else header.width
        self.height = header.width if turned else header.height
        self._decoded: dict[int, np.ndarray] = {}

    def __repr__(self) -> str:
        name = f", name={self.name!r}" if self.name else ""
        return (f"Photo(format={self.header.format!r}, width={self.width}, height={self.height}, "
                f"orientation={self.header.orientation}{name})")

    @property
    def format(self) -> str:
        return self.header.format

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.height, self.width, 3)

    @classmethod
    def from_bytes(cls, data: bytes, *, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES,
                   name: str | None = None) -> Photo:
        """Check encoded photo bytes from their header; PhotoError for empty, corrupt,
        non-image, refused-format or too-large input. Nothing is decoded yet."""
        if data is None or len(data) == 0:
            raise PhotoError("empty photo: no bytes were given")
        if len(data) > max_bytes:
            raise PhotoError(f"photo too large: {len(data)} bytes (at most {_mb(max_bytes)} read)")
        data = bytes(data)
        header = read_header(data)
        pixels = header.width * header.height
        if pixels > max_pixels:
            raise PhotoError(
                f"photo too large: {header.width}x{header.height} pixels, "
                f"{pixels / 1e6:.0f} megapixels (at most {max_pixels / 1e6:.0f} allowed)")
        if header.format == "JPEG" and not _jpeg_complete(data, header.scan):
            raise PhotoError("corrupt photo: the JPEG data is truncated")
        if header.format == "PNG":
            _check_png(data)
        return cls(data, header, name)

    @classmethod
    def from_file(cls, path, *, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES) -> Photo:
        """Read and check a photo file; PhotoError naming the file on failure."""
        data = read_file(path, max_bytes)
        try:
            return cls.from_bytes(data, max_pixels=max_pixels, max_bytes=max_bytes,
                                  name=str(path))
        except PhotoError as error:
            raise PhotoError(f"{path}: {error}") from None

    def image(self) -> np.ndarray:
        """The whole photo, upright, BGR uint8 (decoded once, then kept)."""
        return self.reduced(1)

    def reduced(self, factor: int) -> np.ndarray:
        """The photo upright at 1/`factor` of each side (1, 2, 4 or 8; a side of n pixels
        becomes ceil(n / factor)), decoded once and kept. A JPEG is decoded at that size
        directly; other formats are decoded whole and shrunk by area averaging."""
        if factor not in REDUCTIONS:
            raise ValueError(f"reduction {factor} is not one of {REDUCTIONS}")
        image = self._decoded.get(factor)
        if image is not None:
            return image
        if factor == 1 or self.header.format == "JPEG":
            stored = self._decode(_REDUCED_FLAG[factor])
            image = apply_orientation(stored, self.header.orientation)
        else:
            full = self.image()
            size = (-(-full.shape[1] // factor), -(-full.shape[0] // factor))
            image = cv2.resize(full, size, interpolation=cv2.INTER_AREA)
        self._decoded[factor] = image
        return image

    def decoded(self) -> tuple[int, ...]:
        """The reductions decoded so far (kept: `reduced` of one of them costs nothing)."""
        return tuple(sorted(self._decoded))

    def reduction_for(self, long_side: int) -> int:
        """The largest reduction whose image still has a long side of `long_side` pixels."""
        longest = max(self.width, self.height)
        return max(f for f in REDUCTIONS if f == 1 or -(-longest // f) >= long_side)

    def _decode(self, flag: int) -> np.ndarray:
        if self.header.format == "HEIC":
            return heif.decode_heif(self.data)  # upright already; `reduced` shrinks it
        buffer = np.frombuffer(self.data, np.uint8)
        image = cv2.imdecode(buffer, flag | cv2.IMREAD_IGNORE_ORIENTATION)
        if image is None:
            raise PhotoError(f"corrupt photo: the {self.header.format} image data could not be "
                             "decoded")
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise PhotoError(f"unsupported image layout {image.shape} {image.dtype}")
        return image


def _mb(n: int) -> str:
    return f"{n / 2**20:.0f} MB"


def read_file(path, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes` bytes; PhotoError naming the file
    for anything else (missing, a directory, a device or pipe, too big, unreadable).

    Only regular files are read (`/dev/zero` or a FIFO would never end), the file is opened
    without blocking (opening a FIFO waits for a writer), and at most `max_bytes` + 1 bytes
    are read, so a file that grows while it is read cannot take more memory than that.
    """
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise PhotoError(f"photo not found: {path}") from None
    except IsADirectoryError:
        raise PhotoError(f"not a photo file (a directory): {path}") from None
    except OSError as error:
        raise PhotoError(f"cannot read photo {path}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise PhotoError(f"not a photo file (a directory): {path}")
        if not stat.S_ISREG(info.st_mode):
            raise PhotoError(f"not a photo file (a device, pipe or socket): {path}")
        size = info.st_size
        if size > max_bytes:
            raise PhotoError(f"{path}: photo too large: {size} bytes (at most {_mb(max_bytes)} read)")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise PhotoError(f"cannot read photo {path}: {error.strerror or error}") from None
    finally:
        os.close(fd)
    if total > max_bytes:
        raise PhotoError(f"{path}: photo too large: more than {_mb(max_bytes)}")
    return b"".join(chunks)


# -- the old one-call forms ------------------------------------------------------------------
def decode_image(data: bytes, *, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Encoded photo bytes (JPEG, PNG, WebP, TIFF, BMP) -> upright BGR uint8 image.

    Raises PhotoError for empty, corrupt, non-image, refused-format or too-large input
    (more than `max_pixels` pixels, or more than `MAX_BYTES` bytes).
    """
    return Photo.from_bytes(data, max_pixels=max_pixels).image()


def open_photo(path, *, max_pixels: int = MAX_PIXELS) -> Photo:
    """A photo file checked and ready to decode (see `Photo`); PhotoError naming the file."""
    return Photo.from_file(path, max_pixels=max_pixels)


def read_photo(path) -> np.ndarray:
    """Read a photo file -> upright BGR uint8 image; PhotoError naming the file on failure."""
    photo = open_photo(path)
    try:
        return photo.image()
    except PhotoError as error:
        raise PhotoError(f"{path}: {error}") from None


# HEIC: its own module (pillow-heif's glue), which takes PhotoError and Header from here.
from vision.recognition import heif  # noqa: E402
