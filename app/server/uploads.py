"""Photos arriving over HTTP: size limit, content type, then `vision.recognition.decode` (header
checks before decoding, pixel limits). Every refusal is a 4xx with words a player understands.

A photo is not decoded whole: the check decodes only the image the detector reads (for a
big JPEG libjpeg's 1/2, 1/4 or 1/8 decode, `vision.recognition.pipeline.detection_reduction`), so
pixel data that cannot be decoded is a 400 here, before any game changes, and the
pipeline reuses that decode (a `Photo` keeps its decodes). A 50 MP photo then costs about
what a 12 MP one does (`python -m bench.upload_bench`)."""

from __future__ import annotations

from fastapi import HTTPException, UploadFile

from app.server.games import PhotoIn
from vision.recognition.decode import MAX_PIXELS, Photo, PhotoError
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


def check_type(content_type: str | None) -> str:
    kind = (content_type or "").split(";")[0].strip().lower()
    if not kind.startswith(IMAGE_TYPES):
        raise HTTPException(415, f"a photo must be sent as an image (image/jpeg, image/png, "
                                 f"...), not {kind or 'no content type'}")
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
    return "application/octet-stream"


def open_photo(data: bytes, detector=None) -> Photo:
    """Photo bytes checked (header, size, pixel limit) and the image `detector` reads
    decoded (kept in the Photo); PhotoError when any of that fails."""
    # The same limits as the command line's (`vision.recognition.decode.MAX_PIXELS`, 120 MP): a
    # 108 MP phone photo is read; a bigger one is refused from its header, before decoding.
    photo = Photo.from_bytes(data, max_pixels=MAX_PIXELS)
    photo.reduced(detection_reduction(photo, detector))
    return photo


def decode(data: bytes, content_type: str, limit: int, detector=None) -> PhotoIn:
    if len(data) > limit:
        raise HTTPException(413, f"photo too large: {len(data)} bytes (limit {limit})")
    try:
        photo = open_photo(data, detector)
    except PhotoError as error:
        raise HTTPException(photo_status(error), str(error)) from None
    return PhotoIn(data, sniff_type(data), photo)


def read_upload(upload: UploadFile | None, limit: int, detector=None) -> PhotoIn:
    """A multipart `photo` part -> checked photo, or the 4xx that says what is wrong.
    `detector` (the reader's) says how far the check decodes; without one, the whole
    photo is decoded."""
    if upload is None or not hasattr(upload, "file"):
        raise HTTPException(422, "send the photo as a multipart file field named 'photo'")
    kind = check_type(upload.content_type)
    data = upload.file.read(limit + 1)
    return decode(data, kind, limit, detector)
