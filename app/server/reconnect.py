"""Where a camera's new tracker starts: from the table stored last, not from nothing.

A phone whose server process died (or that the proxy sent elsewhere) reconnects to another
process, whose tracker for the game is new. Started empty, it would read the table afresh:
the tiles a hand hides at that moment would be missing from its first stable table, which
would be stored, and the next turn would say they left the table. So a new tracker starts
from the reading stored last (`TableTracker.seed`): its tiles, corners, codes, and the
corrections made in its view; the tiles of the turn's accepted table are committed, and
the stored frame's picture tells what each tile's place looked like.

Only when the first frame shows the same view: a camera reading (not a hand-held photo),
a frame of the same size, and at least a third of its tiles found again at their places
with the same codes (a hand may hide the rest). Another phone, or the same one moved,
starts empty as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from app.server.games import GameError, detections_from_bytes
from vision.recognition.decode import Photo, PhotoError
from vision.recognition.detections import TileDetections
from vision.recognition.pipeline import detection_reduction

log = logging.getLogger("rummikub.server")

SAME_PLACE = 0.5  # a tile found again within this many tile heights of its stored place
AGREE_SHARE = 1 / 3  # of the stored tiles found again: the same view


@dataclass(frozen=True)
class StoredTable:
    """The reading stored last, as a new tracker of the camera that read it starts from."""

    reading: dict  # as `GameService.latest_reading` gives it (photo_id, view, reading_id)
    detections: TileDetections
    committed: list[bool]  # per tile: on the table at the last accepted turn
    picture: np.ndarray | None  # the small picture of the frame it was read from
    corrections: list[dict]  # the game's corrections made in its view


def small_picture(photo: Photo, reader, width: int) -> np.ndarray:
    """The small colour picture the tracker measures a frame on (as `FrameHub` makes it)."""
    import cv2

    image = photo.reduced(detection_reduction(photo, getattr(reader, "detector", None)))
    scale = width / max(1, image.shape[1])
    return cv2.resize(image, (width, max(1, int(round(image.shape[0] * scale)))),
                      interpolation=cv2.INTER_AREA)


def _found_again(stored: TileDetections, found: TileDetections) -> np.ndarray:
    """Per stored tile: whether `found` has a tile of its code near its place."""
    if not len(stored) or not len(found):
        return np.zeros(len(stored), bool)
    size = np.linalg.norm(stored.corners[:, 3] - stored.corners[:, 0], axis=1)
    dist = np.linalg.norm(stored.centers[:, None].astype(np.float64)
                          - found.centers[None].astype(np.float64), axis=2)
    same = stored.class_ids[:, None] == found.class_ids[None, :]
    return ((dist < SAME_PLACE * size[:, None]) & same).any(axis=1)


def same_view(stored: TileDetections, frame: TileDetections) -> bool:
    """Whether a frame's tiles show the stored table where it was stored: at least
    AGREE_SHARE of its tiles found again at their places, with the same codes."""
    if not len(stored) or tuple(stored.labels) != tuple(frame.labels):
        return False
    return int(_found_again(stored, frame).sum()) >= max(1.0, AGREE_SHARE * len(stored))


def stored_table(service, game_id: str, reader, picture_width: int) -> StoredTable | None:
    """The game's latest reading, if a camera read it (None for none, or a photo's)."""
    try:
        row = service.row(game_id)
        reading = service.latest_reading(game_id)
    except GameError:
        return None
    if not str(reading.get("view") or "").startswith("camera:"):
        return None  # a hand-held photo: its pixels are no camera's view
    stored = service.storage.reading(game_id, reading["reading_id"])
    if stored is None:
        return None
    detections = detections_from_bytes(stored.detections)
    table_id = (row.state.get("round") or {}).get("table_reading")
    if table_id == stored.id:
        committed = [True] * len(detections)
    else:
        accepted = service.storage.reading(game_id, table_id) if table_id else None
        committed = ([False] * len(detections) if accepted is None else
                     _found_again(detections, detections_from_bytes(accepted.detections))
                     .tolist())
    picture = None
    if stored.photo_id:
        found = service.storage.photo(game_id, stored.photo_id)
        try:
            picture = small_picture(Photo.from_bytes(found[0]), reader, picture_width) \
                if found else None
        except PhotoError:
            log.warning("the stored frame of reading %s does not decode", stored.id)
    view = reading["view"]
    corrections = [c for c in row.state.get("corrections", []) if c.get("view") == view]
    return StoredTable(reading, detections, committed, picture, corrections)
