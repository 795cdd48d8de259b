"""Tiles lying flat seen by a low phone, detected again in the photo stretched upright.

A phone 8-45 degrees above the table (a rack photo, a phone propped on the table) sees a
tile lying flat squashed from top to bottom: nearly square or wider than tall, and often
sheared. The detector learnt tiles whose long side is their up-down axis, so it misses
most of them or boxes them across, and the plane view (`vision.recognition.plane_view`)
cannot help: the tiles it would fit the table's plane to are the ones standing on the
stand, or there are none. Stretching the photo upright by 2 and by 3 is an affine guess at
the view from above for such a camera (the table's depth comes back as height); the
detector runs again on each stretched photo, its boxes mapped back are parallelograms
around the squashed tiles, and those crop them upright (`vision.recognition.rectify`).
The readings are merged tile by tile (`merge_stretched`, or where the whole photo is
squashed `vision.recognition.plane_view.merge_readings`). The stretch by 2 looks at the
whole photo; the stretch by 3 only at the part around the signs the first left open
(`open_signs`, `sign_region`), and not at all when none are left: on a 16 MP rack photo
the two whole stretches had taken the read from 5.5x to 9x the floor.

The pass runs only when the first reading shows signs of squashed tiles
(`maybe_squashed`): heat peaks of the detector between WEAK_SCORE and its own threshold
that lie on no tile it kept (tile-like things it could not confirm), and tiles read
unsurely (a squashed tile's crop is drawn out of shape). At least MIN_SIGNS: as above;
fewer (a low table's few flat tiles, but also now and then a photo from above): the
stretch by 2 alone, over the part around the signs only (`sign_region`). The finds only
the stretched photo shows are checked harder than the first pass's
(`doubtful_new_finds`): stretched, the letters of the stand's embossed logo look like
tiles. `read_squashed(reader, ...)` is that pass, as `TileReader` runs it.
Thresholds and measurements: `docs/decisions/low-tables.md`.
"""

from __future__ import annotations

import time

import cv2
import numpy as np

from vision.recognition.body_colour import unlike_the_other_finds
from vision.recognition.detections import TileDetections
from vision.recognition.fine_scale import MAX_LONG_SIDE
from vision.recognition.plane_view import merge_readings, points_in_quads, same_tiles

# The photo is stretched upright by each of these (a flat tile seen 30 and 20 degrees up
# is squashed about 2 and 3 times); together they find more than either alone.
STRETCHES = (2.0, 3.0)
# A later stretch looks only at the part of the photo around the signs the earlier left
# open, grown by this many tile sizes each way (tiles lying flat lie in sets: the signs
# mark where). Chosen on the tuning data (docs/decisions/low-tables.md).
REGION_MARGIN = 2.0
# A heat peak at least this strong that the first pass did not keep is a maybe-tile.
WEAK_SCORE = 0.2
# A kept find read with a best class probability under this is read unsurely.
UNSURE = 0.9
# The pass runs when the first reading shows at least this many signs of squashed tiles:
# maybe-tiles on no kept tile, and kept tiles read unsurely.
MIN_SIGNS = 3
# With fewer signs, but at least this many, the photo is stretched only around them
# (`sign_region`): a low table's lone flat tiles show one or two...
FEW_SIGNS = 1
# ... by 2 only: by 3 as well found one flat tile more of the tuning data's 185 and took the
# mean read of the real train/ photos (taken from above; 35 of 179 show a few signs) from
# +10 % to +27-35 %.
FEW_STRETCHES = (2.0,)
# A tile both passes read keeps its first reading unless the first box lay across it, read
# unsurely, and the stretched reading names another tile with at most this share of its
# doubt (1 - best class probability; `merge_stretched`)...
REPLACE_DOUBT = 0.5
# ... or the whole photo is squashed: at least this share of its first reading's tiles read
# unsurely (`squashed_photo`); then the surer reading of each tile wins.
SQUASHED_PHOTO = 0.5
# A find only the stretched photo shows is kept when it is at least this sure of itself
# (detector score x best class probability; the first pass keeps from 0.134)...
NEW_FIND_SCORE = 0.3
# ... and its body is at least this share as bright as the other tiles' (the stand's
# black beam with its embossed logo measures 0.12-0.27 of them, tiles 0.50 and more).
DARK_SHARE = 0.4
# The kept finds whose bodies give `dropped_finds` its reference brightness: this many at
# most, spread over them (a median; measuring every crop cost ~1 ms of a 1000x750 read).
BODY_SAMPLE = 16
# Where the pass ran on a few signs only (fewer than MIN_SIGNS: nothing says the phone was
# low), a new find must be nearly as bright as the other tiles: on the tuning data the
# tiles it found measured 0.90-1.21 of them, its false finds 0.65-0.80.
FEW_DARK_SHARE = 0.85


def maybe_squashed(weak_centres: np.ndarray, tiles: np.ndarray, sure: np.ndarray) -> int:
    """How many signs of squashed tiles the first reading shows: the detector's weak peaks
    (centres (P, 2)) on none of the kept tiles (corners (N, 4, 2), the same pixels), and
    the kept tiles read unsurely (best class probability `sure` (N,) under UNSURE)."""
    weak_centres = np.asarray(weak_centres, np.float64).reshape(-1, 2)
    tiles = np.asarray(tiles, np.float64).reshape(-1, 4, 2)
    unsure = int((np.asarray(sure).reshape(-1) < UNSURE).sum())
    if len(weak_centres) == 0 or len(tiles) == 0:
        return len(weak_centres) + unsure
    return int((~points_in_quads(weak_centres, tiles).any(axis=1)).sum()) + unsure


def dropped_finds(finds: np.ndarray, kept: np.ndarray,
                  crops: np.ndarray | None = None) -> np.ndarray:
    """(D, 2) the centres of the first pass's `finds` (quads (F, 4, 2)) it did not keep
    (`kept` (F,) False) that lie on none it kept: boxes the detector was sure of that the
    classifier could not read as a tile. A tile lying flat seen low gives them (boxed in
    halves, its crop drawn out of shape); so do logos, stickers and knots in the wood.
    With `crops` (F, H, W, 3), each find's crop as the classifier cut it, only those whose
    body (`body_brightness`) is at least `FEW_DARK_SHARE` as bright as the kept finds'
    (the median of up to `BODY_SAMPLE` of them): a face is the bright part of a tile, and
    a knot stretched costs a pass for nothing (valid/ rummy-36, the 1000x750 bench
    photo)."""
    finds = np.asarray(finds, np.float64).reshape(-1, 4, 2)
    kept = np.asarray(kept, bool).reshape(-1)
    dropped = np.flatnonzero(~kept)
    if len(dropped) and kept.any():  # a second box on a tile kept is no sign
        on_a_tile = points_in_quads(finds[dropped].mean(axis=1), finds[kept]).any(axis=1)
        dropped = dropped[~on_a_tile]
    if crops is not None and kept.any() and len(dropped):
        on = np.flatnonzero(kept)
        on = on[np.linspace(0, len(on) - 1, min(len(on), BODY_SAMPLE)).astype(int)]
        reference = float(np.median(body_brightness(crops[on])))
        dropped = dropped[body_brightness(crops[dropped]) >= FEW_DARK_SHARE * reference]
    return finds[dropped].mean(axis=1) if len(dropped) else np.zeros((0, 2))


def open_signs(weak_centres: np.ndarray, tiles: np.ndarray, sure: np.ndarray,
               movable: np.ndarray) -> np.ndarray:
    """(P, 2) the points where a stretched pass may still change the reading: the weak
    peaks (centres) on none of the `tiles` read (corners (N, 4, 2), the same pixels), and
    the corners of the tiles read unsurely (best class probability `sure` under UNSURE)
    whose reading a stretched one may replace (`movable`): what the pass finds on the
    others is not read at all."""
    weak_centres = np.asarray(weak_centres, np.float64).reshape(-1, 2)
    tiles = np.asarray(tiles, np.float64).reshape(-1, 4, 2)
    if len(weak_centres) and len(tiles):
        weak_centres = weak_centres[~points_in_quads(weak_centres, tiles).any(axis=1)]
    unsure = (np.asarray(sure).reshape(-1) < UNSURE) & np.asarray(movable, bool).reshape(-1)
    return np.concatenate([weak_centres, tiles[unsure].reshape(-1, 2)])


def sign_region(points: np.ndarray, tiles: np.ndarray, shape) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the part of the photo (of `shape`) worth stretching, the box around
    the `points` (`open_signs`) grown each way by REGION_MARGIN of the tile size (the
    median long side of the `tiles`' boxes, the first reading's); the whole photo where no
    tile was read to give a size."""
    h, w = shape[:2]
    tiles = np.asarray(tiles, np.float64).reshape(-1, 4, 2)
    points = np.asarray(points, np.float64).reshape(-1, 2)
    if len(tiles) == 0 or len(points) == 0:
        return 0, 0, w, h
    sides = np.linalg.norm(tiles - np.roll(tiles, 1, axis=1), axis=2).max(axis=1)
    margin = REGION_MARGIN * float(np.median(sides))
    x0, y0 = np.floor(points.min(axis=0) - margin)
    x1, y1 = np.ceil(points.max(axis=0) + margin)
    x0, y0 = int(np.clip(x0, 0, w - 1)), int(np.clip(y0, 0, h - 1))
    return x0, y0, int(np.clip(x1, x0 + 1, w)), int(np.clip(y1, y0 + 1, h))


def few_sign_regions(points: np.ndarray, dropped: np.ndarray, tiles: np.ndarray,
                     shape) -> list[tuple[int, int, int, int]]:
    """The parts of the photo a stretch over a few signs looks at: the `sign_region` of
    the open signs `points`, as before, and apart from it that of the first pass's
    `dropped` finds (`dropped_finds`) outside it. Apart, because one box around both
    is another part at another scale, and reads the tiles the signs alone found otherwise
    (tuning seed 643,002: a flat K3 boxed with its shadow, then left out as too dark)."""
    regions = []
    points = np.asarray(points, np.float64).reshape(-1, 2)
    dropped = np.asarray(dropped, np.float64).reshape(-1, 2)
    if len(points):
        regions.append(sign_region(points, tiles, shape))
    if len(dropped) and regions:
        x0, y0, x1, y1 = regions[0]
        dropped = dropped[~((dropped[:, 0] >= x0) & (dropped[:, 0] < x1)
                            & (dropped[:, 1] >= y0) & (dropped[:, 1] < y1))]
    if len(dropped):
        regions.append(sign_region(dropped, tiles, shape))
    return regions


def stretched(image: np.ndarray, factor: float) -> np.ndarray:
    """`image` stretched upright by `factor` (its width kept)."""
    h, w = image.shape[:2]
    return cv2.resize(image, (w, max(1, round(h * factor))), interpolation=cv2.INTER_LINEAR)


def from_stretched(quads: np.ndarray, factor: float, height: int) -> np.ndarray:
    """Quads (N, 4, 2) in the photo stretched by `factor` -> the photo's pixels (its
    height `height`; pixel centres map to pixel centres, as `stretched` resizes)."""
    quads = np.array(quads, np.float32).reshape(-1, 4, 2)
    scale = height / max(1, round(height * factor))
    quads[..., 1] = (quads[..., 1] + 0.5) * scale - 0.5
    return quads


def to_stretched(quads: np.ndarray, factor: float, height: int) -> np.ndarray:
    """Quads (N, 4, 2) in the photo (its height `height`) -> the photo stretched by
    `factor` (`stretched`): the inverse of `from_stretched`. Training cuts tiles lying
    flat where the squashed view sees them (`training.classifier.flat_tiles`)."""
    quads = np.array(quads, np.float32).reshape(-1, 4, 2)
    scale = height / max(1, round(height * factor))
    quads[..., 1] = (quads[..., 1] + 0.5) / scale - 0.5
    return quads


def stretched_side(long_side: int, multiple: int, shape, factor: float, part=None) -> int:
    """The detector input's long side for the photo of `shape` (or its `part` of that
    shape) stretched by `factor`: its width shrunk as much as the first pass's input (of
    `long_side`) shrank the photo, so a tile's width stays what the detector saw; at most
    MAX_LONG_SIDE."""
    h, w = shape[:2]
    scale = long_side / max(h, w)
    ph, pw = (part or shape)[:2]
    side = max(pw, ph * factor) * scale
    return int(max(multiple, min(side, MAX_LONG_SIDE) // multiple * multiple))


def body_brightness(crops: np.ndarray) -> np.ndarray:
    """(N,) the grey level of each (N, H, W, 3) crop's body: the middle value of every
    third pixel each way, its channels averaged (most of a face is body)."""
    crops = np.asarray(crops)
    if len(crops) == 0:
        return np.zeros(0)
    sample = crops[:, 1::3, 1::3].reshape(len(crops), -1, 3)
    return np.median(sample, axis=1).mean(axis=1)


def doubtful_new_finds(crops: np.ndarray, scores: np.ndarray, new: np.ndarray,
                       dark_share: float = DARK_SHARE) -> np.ndarray:
    """(N,) True for each find the stretched passes added (`new`) that is no tile: less sure
    of itself than NEW_FIND_SCORE (detector score x best class probability, `scores`), or
    with a body under `dark_share` as bright as the other finds' (`crops`, all N): the
    stand's embossed logo, stretched, reads as tiles; a tile's face is its bright part."""
    new = np.asarray(new, bool)
    doubtful = new & (np.asarray(scores) < NEW_FIND_SCORE)
    if new.all() or not new.any():
        return doubtful
    brightness = body_brightness(crops)
    reference = float(np.median(brightness[~new]))
    return doubtful | (new & (brightness < dark_share * reference))


def squashed_photo(sure: np.ndarray) -> bool:
    """Whether the whole photo is squashed (not a few flat tiles beside a stand): at least
    SQUASHED_PHOTO of its first reading's tiles (best class probabilities `sure`) are read
    unsurely (under UNSURE)."""
    sure = np.asarray(sure).reshape(-1)
    return bool(len(sure)) and float((sure < UNSURE).mean()) >= SQUASHED_PHOTO


def replaceable(first: TileDetections) -> np.ndarray:
    """(N,) the first reading's tiles a stretched reading may replace (`merge_stretched`):
    boxed across (the up axis nearer the photo's horizontal) and read unsurely."""
    if len(first) == 0:
        return np.zeros(0, bool)
    up = first.up_vectors
    return (np.abs(up[:, 0]) > np.abs(up[:, 1])) & (first.class_probs.max(axis=1) < UNSURE)


def on_tiles(quads: np.ndarray, tiles: np.ndarray) -> np.ndarray:
    """(Q,) whether each quad (Q, 4, 2) is one of `tiles` (N, 4, 2): its centre inside one,
    or one's centre inside it (as `merge_readings` pairs readings)."""
    quads = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    tiles = np.asarray(tiles, np.float64).reshape(-1, 4, 2)
    if len(quads) == 0 or len(tiles) == 0:
        return np.zeros(len(quads), bool)
    return same_tiles(quads, tiles).any(axis=1)


def merge_stretched(first: TileDetections, seen: TileDetections,
                    added: np.ndarray | None = None) -> TileDetections:
    """The tiles of `first` and of a stretched pass's reading `seen` (corners in the same
    pixels), each tile once: a tile only `seen` shows is added. One both show takes the
    stretched reading only where the first pass's box lies across the tile (its up axis
    nearer the photo's horizontal: a flat tile seen low is wider than tall), the first
    reading was unsure (best class probability under UNSURE), and the stretched one names
    another tile with at most REPLACE_DOUBT of the first's doubt (1 - best probability).
    Otherwise the first reading stays, box and all: a standing tile, stretched, is drawn
    out of shape and now and then read surer as another tile (a 6 as a 9), and so is a
    tile lying sideways on a table seen from above.

    `added` (N,) marks the tiles of `first` an earlier stretch added (found in no other
    pass): two stretched readings of one such tile are merged as the other passes merge,
    the surer one winning (`merge_readings`), not the earlier one kept."""
    if len(seen) == 0:
        return first
    if len(first) == 0:
        return seen
    if added is not None and np.asarray(added, bool).any():
        added = np.asarray(added, bool)
        return merge_stretched(first[~added], merge_readings(first[added], seen))
    same = same_tiles(seen.corners, first.corners)  # (seen, first)
    doubt_first = 1 - first.class_probs.max(axis=1)
    doubt_seen = 1 - seen.class_probs.max(axis=1)
    surer = (replaceable(first)[None, :]
             & (doubt_seen[:, None] <= REPLACE_DOUBT * doubt_first[None, :])
             & (seen.class_ids[:, None] != first.class_ids[None, :]))
    take = (surer | ~same).all(axis=1)
    replaced = (same & take[:, None]).any(axis=0)
    return TileDetections.concat([seen[take], first[~replaced]])


# ----------------------------------------------------------------------------- the pass
def read_squashed(reader, image_bgr: np.ndarray, detections: TileDetections, weak,
                  timings: dict, read_finds, to_image=lambda corners: corners,
                  dropped=None) -> TileDetections:
    """`detections`, or where the reading shows signs of squashed tiles (the first
    pass's weak peaks `weak`, centres in `image_bgr`'s pixels, on none of the tiles read,
    whose corners `to_image` maps there; tiles read unsurely), merged with a pass over
    the photo stretched upright by each of STRETCHES: tiles lying flat seen by a low
    phone, as `reader` (a `TileReader`) reads them. With
    fewer than MIN_SIGNS signs (at least FEW_SIGNS), only the part around them, by each
    of FEW_STRETCHES. The first pass's `dropped` finds (`dropped_finds`, centres there)
    are signs of that few kind only, stretched around apart (`few_sign_regions`):
    counted towards MIN_SIGNS, they had the whole photo stretched, whose logos and
    stickers then read as jokers (docs/decisions/low-tables.md)."""
    reader.last_stretched, reader.last_stretched_regions = False, None
    if not reader.squashed_view or weak is None:
        return detections
    signs = maybe_squashed(weak, to_image(detections.corners),
                           detections.class_probs.max(axis=1) if len(detections) else [])
    # Fewer than MIN_SIGNS (a photo from above shows one or two now and then): the
    # FEW_STRETCHES look only around the signs, a small part of the photo; none: no pass.
    few = signs < MIN_SIGNS
    dropped = np.zeros((0, 2)) if dropped is None or not few else np.asarray(
        dropped, np.float64).reshape(-1, 2)
    if signs + len(dropped) < FEW_SIGNS:
        return detections
    long_side = reader.last_finer_side or getattr(reader.detector, "long_side", None)
    multiple = getattr(reader.detector, "multiple", 32)
    first = detections
    merge, fixed = merge_readings, np.zeros((0, 4, 2), np.float32)
    if not squashed_photo(first.class_probs.max(axis=1)):
        # The tiles whose first reading stays whatever the stretched photo reads: what
        # it finds on them is not read at all.
        fixed = to_image(first.corners[~replaceable(first)])

        def merge(now, seen):
            # a tile an earlier stretch added takes the surer of the stretched readings
            return merge_stretched(now, seen, ~on_tiles(now.corners, first.corners))
    reader.last_stretched_regions = []
    for index, factor in enumerate(FEW_STRETCHES if few else STRETCHES):
        # The first stretch looks at the whole photo (cut to the first reading's signs
        # it lost flat tiles that showed none), but for a few signs; each later one only
        # around the signs the earlier left open (weak peaks on no tile, unsure readings
        # it may replace).
        now = to_image(detections.corners)
        points = open_signs(weak, now, detections.class_probs.max(axis=1),
                            ~on_tiles(now, fixed))
        if few:
            regions = few_sign_regions(points, dropped, to_image(first.corners),
                                       image_bgr.shape)
        elif index:
            regions = [sign_region(points, to_image(first.corners), image_bgr.shape)
                       ] if len(points) else []
        else:
            regions = [(0, 0, image_bgr.shape[1], image_bgr.shape[0])]
        if not regions:
            break
        for x0, y0, x1, y1 in regions:
            part = image_bgr[y0:y1, x0:x1]
            reader.last_stretched_regions.append((x0, y0, x1, y1))

            def detect(factor=factor, part=part, x0=x0, y0=y0):
                side = stretched_side(long_side, multiple, image_bgr.shape, factor,
                                      part.shape) if long_side else None
                found, scores = reader.detector.detect(stretched(part, factor), long_side=side)
                found = from_stretched(found, factor, part.shape[0]) + np.float32([x0, y0])
                other = ~on_tiles(found, fixed)
                return found[other], np.asarray(scores)[other]

            detections = reader._second_pass(detections, timings,
                                             f"detect.stretched_{factor:g}",
                                             time.perf_counter(), detect, read_finds, merge)
    # (a few signs may all lie on tiles whose first reading stays: nothing stretched)
    reader.last_stretched = bool(reader.last_stretched_regions)
    if not reader.last_stretched:
        return first
    return checked_new_finds(reader, image_bgr, first, detections, to_image,
                             FEW_DARK_SHARE if few else DARK_SHARE)


def checked_new_finds(reader, image_bgr: np.ndarray, first: TileDetections,
                      merged: TileDetections, to_image,
                      dark_share: float = DARK_SHARE) -> TileDetections:
    """`merged` without the finds the stretched passes added (on none of `first`'s
    tiles) that are no tile: unsure, darker than the tiles (under `dark_share` of them,
    `doubtful_new_finds`) or of another colour (`unlike_the_other_finds`
    over all finds: a pass of a few finds cannot judge its own). `to_image` maps
    corners to `image_bgr`'s pixels."""
    new = np.ones(len(merged), bool)
    if len(first):
        new = ~same_tiles(merged.corners, first.corners).any(axis=1)
    if not new.any():
        return merged
    from vision.recognition.rectify import rectify_tiles

    corners = np.asarray(to_image(merged.corners), np.float32)
    crops = rectify_tiles(image_bgr, corners, getattr(reader.classifier, "size", None))
    drop = doubtful_new_finds(crops, merged.tile_scores, new, dark_share)
    drop |= new & unlike_the_other_finds(crops, corners.mean(axis=1))
    return merged[~drop]
