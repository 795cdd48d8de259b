"""A stand's tiles read again in their boxes moved down to the face (issue #19).

On a stand seen from 20-45 degrees above, the detector's box of a standing tile reaches
above the face (rendered stands: its top a median 0.07 of the tile's height above the
face's top, 0.12 on a tier partly hidden by the tier in front, up to 0.3), so the number
lands low in the crop, which is what a tile turned round looks like: a 6 is read as a 9.
A rack's tiles all face the rack's way, so the box is turned that way, moved down its own
axis by `RECROP_SHIFT` of its height and read again (the crop code of the first reading,
`TileReader.classify_at`). See docs/decisions/back-tier-crops.md.
"""

from __future__ import annotations

import numpy as np

from vision.recognition.detections import TileDetections
from vision.recognition.rectify import rotate_quad_180

# How far down a stand tile's box is moved before it is read again, in its heights.
# Chosen on rendered stands, seeds 600,000+ (docs/decisions/back-tier-crops.md).
RECROP_SHIFT = 0.15
COS_ALONG = np.cos(np.radians(25))  # a tile within 25 degrees of the rack's way lies on it
# A box whose foot reaches over the top of a box in front of it by more than this share of
# its height stands in a tier partly hidden by the tier in front (rendered stands: about
# 0.25; the flat renderer's two rows, which do not hide each other: at most 0).
HIDDEN_OVERLAP = 0.05
SWAPPED_TURNED = {"6": "9", "9": "6"}  # numbers that read as each other turned round


def rack_way(d: TileDetections, ids: np.ndarray) -> np.ndarray | None:
    """The rack's up direction (2,) from the up vectors of its tiles `ids`, or None where
    they do not agree on one at three to one (a turned tile's up vector lies on the same
    line). A 6 or a 9 has no say: its box reaching above the face is what turns it round
    (the way a 5 or a joker reads is seen in its print)."""
    codes = d.codes
    ids = [i for i in ids if codes[i][1:] not in SWAPPED_TURNED]
    if len(ids) < 3:
        return None
    up = d.up_vectors[ids]
    axis = np.linalg.eigh(up.T @ up)[1][:, -1]
    along = up @ axis
    ahead, behind = int((along >= COS_ALONG).sum()), int((along <= -COS_ALONG).sum())
    if behind > ahead:
        axis, ahead, behind = -axis, behind, ahead
    return axis if ahead >= max(2, 3 * behind) else None


def upright_boxes(quads: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Boxes (N, 4, 2) about the same centres, their up along `axis`, as tall as each box's
    longer side and as wide as its shorter (a tile stands taller than wide)."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if not len(q):
        return q.astype(np.float32)
    centre = q.mean(axis=1)
    sides = np.stack([np.linalg.norm(q[:, 1] - q[:, 0], axis=1),
                      np.linalg.norm(q[:, 2] - q[:, 1], axis=1)], axis=1)
    half_h, half_w = sides.max(axis=1) / 2, sides.min(axis=1) / 2
    up = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    right = np.array([-up[1], up[0]])  # a tile's right, its up turned clockwise
    corners = [(-1, 1), (1, 1), (1, -1), (-1, -1)]  # (right, up): top-left first, clockwise
    out = np.stack([centre + (sx * half_w)[:, None] * right + (sy * half_h)[:, None] * up
                    for sx, sy in corners], axis=1)
    return out.astype(np.float32)


def moved_down(quads: np.ndarray, share: float) -> np.ndarray:
    """Each upright box (N, 4, 2) moved down its own axis by `share` of its height."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    down = ((q[:, 3] + q[:, 2]) - (q[:, 0] + q[:, 1])) / 2
    return (q + share * down[:, None, :]).astype(np.float32)


def behind_a_tier(boxes: np.ndarray, axis: np.ndarray, share: float) -> np.ndarray:
    """(N,) True for each box (upright the rack's way) whose foot reaches over the top of
    a box in front of it (further down the rack, beside it along the rack) by more than
    `share` of its height: a tile of a tier partly hidden by the tier in front."""
    q = np.asarray(boxes, np.float64)
    depth_of = -(q @ axis)  # (N, 4): down the rack is deeper
    top, foot = depth_of.min(axis=1), depth_of.max(axis=1)
    height = foot - top
    across = np.array([axis[1], -axis[0]])
    along = q.mean(axis=1) @ across
    width = np.linalg.norm(q[:, 1] - q[:, 0], axis=1)
    beside = np.abs(along[:, None] - along[None, :]) < 0.5 * (width[:, None] + width[None, :])
    below = top[None, :] > top[:, None] + 0.5 * height[:, None]
    over = (foot[:, None] - top[None, :]) / np.maximum(height[:, None], 1e-9)
    return (beside & below & (over > share)).any(axis=1)


def recrop_stand(d: TileDetections, on: np.ndarray, photo, reader) -> tuple[
        TileDetections, list[int]]:
    """`d` with each tile standing on the stand (`on`, (N,) bool) read again in its box
    turned the rack's way and moved down (`moved_down`), and the ids whose reading changed.

    The re-crop's probabilities replace the first look's (`read_rack` then turns a tile
    read against the rack's way as before) where they are surer or the first look read a
    6 or a 9 (elsewhere the first look's stay, on the re-crop's outline), except for a
    tile first read turned round against the rack outside a tier partly hidden by the tier
    in front (`behind_a_tier`), which may really stand so. Tiles off the stand keep their
    reading, and so does every tile where `reader` reads through a calibration profile."""
    ids = np.nonzero(on)[0]
    # A calibration profile's head reads a crop by its likeness to the calibration's own
    # crops, cut where the detector boxes a tile; a box moved down is cut otherwise (held-
    # out editions' racks with a profile: 5 tiles fewer read right), so it is left alone.
    if len(ids) < 3 or d.flip_probs is None or getattr(reader, "profile_head", None):
        return d, []
    axis = rack_way(d, ids)
    if axis is None:
        return d, []
    boxes = d.corners[ids].astype(np.float32)
    along = d.up_vectors[ids] @ axis
    against = along < 0
    boxes[against] = rotate_quad_180(boxes[against])
    # A box far askew of the rack's way (a joker's face has no up, and its box may come a
    # quarter turned, its sides swapped) is boxed again upright the rack's way.
    askew = np.abs(along) < COS_ALONG
    boxes[askew] = upright_boxes(boxes[askew], axis)
    against &= ~askew
    shifted = moved_down(boxes, RECROP_SHIFT)
    upright, probs, flip = reader.classify_at(photo, shifted)
    if flip is None:
        return d, []
    upright = np.asarray(upright, np.float32).reshape(-1, 4, 2)
    # Where the classifier took the crop as turned round, the outline is turned with it
    # (the rack's way is then `read_rack`'s to judge, with this crop's probabilities).
    turned = np.abs(upright - shifted).max(axis=(1, 2)) >= 1e-3
    outline = np.where(turned[:, None, None], rotate_quad_180(boxes), boxes)
    corners, class_probs = d.corners.copy(), d.class_probs.copy()
    flip_probs, class_ids = d.flip_probs.copy(), d.class_ids.copy()
    uncertain = d.uncertain.copy()
    # A tile read turned round against the rack may stand so (players do turn tiles), and
    # its box is then not known to sit high: only one of a tier partly hidden by the tier
    # in front, whose box does, is read again (docs/decisions/back-tier-crops.md).
    # An askew tile's upright box is taken where it reads surer than the detector's
    # (the flat racks' tiles lie askew on purpose, and their boxes read them well).
    surer = probs.max(axis=1) > d.class_probs[ids].max(axis=1)
    take = ((~against | behind_a_tier(boxes, axis, HIDDEN_OVERLAP)) & ~askew) | (askew & surer)
    # The re-crop's reading is taken where it reads surer, or where the first look read a 6
    # or a 9, the turned-round failure it is for; elsewhere the first look's reading stays
    # (the outline the rack's way still the re-crop's): a box that already fits a face,
    # moved down, cuts off the top of a numeral printed high (the white Original's 11 read
    # as a 1; back-tier-crops.md, "The re-crop where it reads surer").
    six_nine = np.array([d.labels[k][1:] in SWAPPED_TURNED for k in d.class_ids[ids]], bool)
    probs = np.where((surer | six_nine)[:, None], probs, d.class_probs[ids])
    ids, outline, probs, flip = ids[take], outline[take], probs[take], flip[take]
    corners[ids], class_probs[ids], flip_probs[ids] = outline, probs, flip
    class_ids[ids] = probs.argmax(axis=1)
    uncertain[ids] = probs.max(axis=1) < getattr(reader, "uncertain_below", 0.0)
    changed = [int(i) for i in ids[class_ids[ids] != d.class_ids[ids]]]
    out = TileDetections(corners, d.detector_scores, class_probs, class_ids, d.labels,
                         uncertain, flip_probs=flip_probs)
    return out, changed
