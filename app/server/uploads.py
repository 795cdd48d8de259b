"""Photos arriving over HTTP: size limit, content type, then `vision.recognition.decode` (header
checks before decoding, pixel limits). Every refusal is a 4xx with words a player understands.

A photo is not decoded whole: the check decodes only the image the detector reads (for a
big JPEG libjpeg's 1/2, 1/4 or 1/8 decode, `vision.recognition.pipeline.detection_reduction`), so
pixel data that cannot be decoded is a 400 here, before any game changes, and the
pipeline reuses that decode (a `Photo` keeps its decodes). A 50 MP photo then costs about
what a 12 MP one does (`python -m bench.upload_bench`)."""

from __future__ import annotations

import contextlib

import cv2
from fastapi import UploadFile

from app.server.games import PhotoIn
from app.server.limits import ServerBusy, TooMuchToDecode
from app.server.messages import photo_message, say
from app.server.refusals import Refused
from vision.recognition.decode import MAX_PIXELS, Photo, PhotoError
from vision.recognition.heif import heif_brand
from vision.recognition.pipeline import detection_reduction

IMAGE_TYPES = ("image/",)


def photo_status(error: PhotoError) -> int:
    """413 for a photo too big, 415 for bytes that are no image, 400 for a broken one."""
    text = str(error).lower()
    if "too large" in text or "too many pixels" in text or "too big" in text:
        return 413
    if "not an image" in text:
        return 415
    return 400


def photo_refusal(error: PhotoError) -> Refused:
    return Refused(photo_status(error), photo_message(str(error)))


def check_type(content_type: str | None) -> str:
    kind = (content_type or "").split(";")[0].strip().lower()
    if not kind.startswith(IMAGE_TYPES):
        raise Refused(415, say("upload.not_image", kind=kind or "no content type"))
    return kind


def sniff_type(data: bytes) -> str:
    """The image type the bytes themselves show, whatever the sender claimed: a stored
    photo is served back with this type only."""
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:2] == b"BM":
        return "image/bmp"
    if data[:4] in (b"II*\x00", b"MM\x00*"):
        return "image/tiff"
    if heif_brand(data):
        return "image/heic"  # an iPhone's; Safari shows it, the page's other browsers not
    return "application/octet-stream"


# A stored photo shown as a JPEG has at most this long side: the page shows it at a phone's
# width, and its marks are placed in the photo's own pixels, scaled with it.
SHOWN_SIDE = 2048


def shown_as_jpeg(data: bytes, content_type: str, budget) -> tuple[bytes, str]:
    """(JPEG bytes, "image/jpeg") of a stored photo for a browser that cannot show its own
    format (a HEIC: only Safari shows one), at most `SHOWN_SIDE` long, decoded within the
    server's decode `budget` as an upload is; the photo as stored where it cannot be."""
    try:
        photo = check_photo(data)
        held = budget.acquire(decode_bytes(photo))
    except (PhotoError, TooMuchToDecode, ServerBusy):
        return data, content_type
    try:
        image = photo.reduced(photo.reduction_for(SHOWN_SIDE))
        scale = SHOWN_SIDE / max(image.shape[:2])
        if scale < 1:
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    except PhotoError:
        return data, content_type
    finally:
        budget.release(held)
    return (jpeg.tobytes(), "image/jpeg") if ok else (data, content_type)


def progressive(data: bytes) -> bool:
    """Whether a JPEG's frame is progressive (SOF2/6/10/14): libjpeg then holds every
    coefficient of the whole image whatever the scale it decodes at."""
    pos, n = 2, len(data)
    while pos + 4 <= n and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        if marker in (0xDA, 0xD9):
            return False
        if marker in (0xC2, 0xC6, 0xCA, 0xCE):
            return True
        pos += 2 + int.from_bytes(data[pos + 2:pos + 4], "big")
    return False


def decoded_whole(photo: Photo) -> bool:
    """Formats whose every decode, even a reduced one, makes the whole image first."""
    return photo.format != "JPEG" or progressive(photo.data)


# Bytes one photo may hold decoded, per pixel of the photo, measured as peak RSS over an
# idle server (`python -m bench.upload_bench --memory`): a baseline JPEG holds at most its
# whole decode (the tiles of a far-off corner are cropped from it), 3 bytes a pixel; a PNG
# (and WebP, TIFF, BMP) the whole decode and its copy, about 6, and a HEIC as much (5.98
# against a PNG's 6.15 for one 12 MP photo: peak RSS of `Photo.image()` then `reduced(4)`
# in a fresh process); a progressive JPEG the coefficients of the whole image (2 bytes
# each, 3 per pixel at 4:4:4) and the image.
JPEG_BYTES_PER_PIXEL = 3
WHOLE_BYTES_PER_PIXEL = 6
# A format decoded whole may have at most this many pixels: 50 MP of PNG is 300 MB at its
# peak. A phone's big photos are baseline JPEGs (up to vision.recognition.decode.MAX_PIXELS, 120 MP,
# which decode at 1/2 to 1/8 for the detector).
WHOLE_MAX_PIXELS = 50_000_000


def decode_bytes(photo: Photo) -> int:
    """What reading `photo` may hold decoded at its peak (see the constants above)."""
    per = WHOLE_BYTES_PER_PIXEL if decoded_whole(photo) else JPEG_BYTES_PER_PIXEL
    return photo.width * photo.height * per


def check_photo(data: bytes, max_pixels: int = MAX_PIXELS) -> Photo:
    """Photo bytes checked from their header (size, pixel limits), nothing decoded yet;
    PhotoError when they fail."""
    # The same limits as the command line's (`vision.recognition.decode.MAX_PIXELS`, 120 MP): a
    # 108 MP phone photo is read; a bigger one is refused from its header, before decoding.
    photo = Photo.from_bytes(data, max_pixels=max_pixels)
    if decoded_whole(photo) and photo.width * photo.height > min(max_pixels,
                                                                 WHOLE_MAX_PIXELS):
        kind = "progressive JPEG" if photo.format == "JPEG" else photo.format
        raise PhotoError(f"photo too large: a {kind} of {photo.width}x{photo.height} pixels "
                         f"({photo.width * photo.height / 1e6:.0f} megapixels) is decoded "
                         f"whole; at most {WHOLE_MAX_PIXELS / 1e6:.0f} are read (a phone's "
                         f"own JPEG may have up to {max_pixels / 1e6:.0f})")
    return photo


def open_photo(data: bytes, detector=None) -> Photo:
    """Photo bytes checked (header, size, pixel limit) and the image `detector` reads
    decoded (kept in the Photo); PhotoError when any of that fails."""
    photo = check_photo(data)
    photo.reduced(detection_reduction(photo, detector))
    return photo


def decode(data: bytes, content_type: str, limit: int, detector=None) -> PhotoIn:
    if len(data) > limit:
        raise Refused(413, say("upload.too_large", size=len(data), limit=limit))
    try:
        photo = open_photo(data, detector)
    except PhotoError as error:
        raise photo_refusal(error) from None
    return PhotoIn(data, sniff_type(data), photo)


def read_upload(upload: UploadFile | None, limit: int, detector=None) -> PhotoIn:
    """A multipart `photo` part -> checked photo, or the 4xx that says what is wrong.
    `detector` (the reader's) says how far the check decodes; without one, the whole
    photo is decoded."""
    return decode(upload_bytes(upload, limit), "", limit, detector)


def upload_bytes(upload: UploadFile | None, limit: int) -> bytes:
    """The bytes of a multipart `photo` part, or the 4xx that says what is wrong."""
    if upload is None or not hasattr(upload, "file"):
        raise Refused(422, say("upload.no_field"))
    check_type(upload.content_type)
    data = upload.file.read(limit + 1)
    if len(data) > limit:
        raise Refused(413, say("upload.too_large", size=len(data), limit=limit))
    return data


@contextlib.contextmanager
def budgeted_photo(data: bytes, budget, detector=None):
    """The photo checked from its header, then decoded as far as `detector` needs while
    its decode memory is held in the server's `budget` (a `limits.DecodeBudget`) for as
    long as the caller reads it: a burst of big photos waits instead of exhausting memory.
    The 4xx (or 503) that says what is wrong otherwise."""
    try:
        photo = check_photo(data)
    except PhotoError as error:
        raise photo_refusal(error) from None
    try:
        held = budget.acquire(decode_bytes(photo))
    except TooMuchToDecode as error:
        raise Refused(413, say("upload.too_many_pixels", error=str(error))) from None
    except ServerBusy:
        raise Refused(503, say("server.busy")) from None
    try:
        try:
            photo.reduced(detection_reduction(photo, detector))
        except PhotoError as error:
            raise photo_refusal(error) from None
        yield PhotoIn(data, sniff_type(data), photo)
    finally:
        budget.release(held)
