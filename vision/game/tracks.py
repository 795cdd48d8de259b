"""The tracks under the live table (`vision.game.tracker`): one per place on the table,
holding what the recent frames saw there, and the steps that bring a frame's tiles to them.

- `camera_move` and `align`: every track follows the camera (its move found on the small
  pictures, then the tiles read alike in this frame and in the tracks' last places);
- `match`: a detection belongs to the track whose place is nearest, within `MATCH_RADIUS`
  of the two tiles' heights; a detection with no track starts one;
- `vote`: a track's reading over a set of frames (mean class probabilities, and how often
  each class was a frame's best reading);
- `table_of`: the stable table as detections, from the tracks that hold a tile;
- `moved_there`: once the tracker has decided which finds join, a find that is a table
  tile moved (its old track unseen meanwhile) is merged into that tile's track.

What the frames mean for the table (when a tile joins, leaves, is re-read) is the
tracker's: this module keeps the evidence and merges the tracks it is told to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from vision.game.camera_motion import largest_step
from vision.game.turn import _nearest_first
from vision.recognition.detections import TileDetections

MATCH_RADIUS = 0.5  # a detection belongs to a track this many tile heights away at most
# (neighbours in a set lie one tile width = 0.72 heights apart)
ALIGN_RADIUS = 3.0  # alike-read tiles this close (tile heights) may pair for the alignment
ALIGN_INLIER = 0.3  # RANSAC threshold of the alignment, in tile heights
SEEN = "seen"  # a track's place state when this frame found it
UNCERTAIN_BELOW = 0.6  # voted best probability below this: the tile stays uncertain


def height(corners: np.ndarray) -> float:
    return float(np.linalg.norm(corners[3] - corners[0]))


def extent(corners: np.ndarray) -> float:
    """sqrt(width x height) of a box: shrinks whichever side a hand hides."""
    return float(np.sqrt(np.linalg.norm(corners[1] - corners[0]) * height(corners)))


@dataclass
class Track:
    id: int
    corners: np.ndarray  # (4, 2) float64, in the latest frame's pixels
    labels_n: int
    # frame -> (class probs, detector score, flip probs or None, best class)
    seen: dict = field(default_factory=dict)
    code: int | None = None  # class id while the tile is in the stable table
    probs: np.ndarray | None = None  # voted class probabilities while stable
    committed: bool = False
    correction: int | None = None
    unseen_still: int = 0  # consecutive still frames without this tile
    last_seen: int = -1
    score: float = 0.0  # detector score when last seen: a hidden tile is no faint one
    moves: int = 0  # times it was found moved elsewhere: its sets may have changed
    look: object = None  # occlusion.PlaceLook: its place while it was seen on still frames
    state: str | None = None  # what its place shows in this frame when the frame misses it
    bare_still: int = 0  # consecutive still frames it was missing and its place was bare
    off_table: set = field(default_factory=set)  # frames a new find had no table around it
    flickered: bool = False  # a find here came and went while nothing moved: no tile yet

    def centre(self) -> np.ndarray:
        return self.corners.mean(axis=0)

    def last_code(self) -> int:
        if self.code is not None:
            return self.correction if self.correction is not None else self.code
        return self.seen[self.last_seen][3]


@dataclass
class TrackerUpdate:
    """What one frame changed. `stable` is None until the first stable table exists."""

    stable: TileDetections | None
    changed: bool
    still: bool
    frame: int
    t: float | None = None
    ids: list[int] = field(default_factory=list)  # track id of each stable tile
    votes: np.ndarray | None = None  # frames (of the last `window`) each stable tile was seen
    hidden: list[int] = field(default_factory=list)  # stable tiles not seen in this frame
    covered: list[int] = field(default_factory=list)  # of those, under something not a tile
    pending: list[dict] = field(default_factory=list)  # tiles whose reading is not yet held
    changes: list[str] = field(default_factory=list)  # what changed, in words
    motion: float | None = None  # share of the grey frame that moved
    churn: int = 0  # tracks that came or went since the previous frame
    still_frames: int = 0  # length of the run of still frames ending here
    shift: tuple[float, float] = (0.0, 0.0)  # camera shift the tiles gave (still frames), px
    refused: list[str] = field(default_factory=list)  # why the frame was not read, if it was not
    camera: dict | None = None  # the camera's move on this frame: turn (deg), shift (px), how
    blurred: bool = False  # far less sharp than the still frames before: not still


def carry(tracks: Iterable[Track], m: np.ndarray) -> None:
    """Move every track's corners by the 2x3 similarity `m`."""
    for tr in tracks:
        tr.corners = tr.corners @ m[:, :2].T + m[:, 2]


def camera_move(tracks: Iterable[Track], move, picture: np.ndarray | None, frame_size,
                size: float, det: TileDetections | None = None) -> dict | None:
    """Carry every track by the camera's `move` since the previous picture (found on the
    small `picture`; `size`: a tile's height in the frame's pixels); what it was. Not when
    the frame's tiles (`det`) deny it (`_denied`): then nothing is carried, and None."""
    if move is None or frame_size is None or move.is_none(np.shape(picture)):
        return None
    tracks = list(tracks)
    h, w = np.shape(picture)[:2]
    m = move.scaled(frame_size[0] / w, frame_size[1] / h)
    if det is not None and _denied(tracks, det, m, size):
        return None
    carry(tracks, m)
    step = largest_step(m, (frame_size[1], frame_size[0])) / max(size, 1e-9)
    return {"turn_deg": round(move.turn_deg, 2), "shift": [round(float(m[0, 2]), 1),
            round(float(m[1, 2]), 1)], "step": round(step, 2), "how": move.method}


def _denied(tracks: list[Track], det: TileDetections, m: np.ndarray, size: float) -> bool:
    """Whether the tiles found in this frame deny the camera move `m`: stable tiles are
    found, read alike, where they lay, and fewer than half as many where `m` would carry
    them (none, with one or two). A hand sweeping over a close-up fills the
    small picture and pulls the picture's move along with it; the tiles it does not
    cover have stayed put (docs/decisions/hidden-tiles-from-pixels.md)."""
    stable = [tr for tr in tracks if tr.code is not None]
    if not stable or not len(det):
        return False
    here = np.array([tr.centre() for tr in stable])
    there = here @ m[:, :2].T + m[:, 2]
    codes = np.array([tr.last_code() for tr in stable])
    found = det.centers.astype(np.float64)
    alike = codes[:, None] == det.class_ids[None, :]

    def matched(places: np.ndarray) -> int:
        d = np.linalg.norm(places[:, None] - found[None], axis=2) / max(size, 1e-9)
        return int(((d < MATCH_RADIUS) & alike).any(axis=1).sum())

    stayed = matched(here)
    return stayed > 0 and 2 * matched(there) < stayed


def align(tracks: list[Track], det: TileDetections, since: int, size: float
          ) -> tuple[float, float]:
    """Move every track by the camera's motion since the tracks were last placed (tiles
    read alike in `det` and in the tracks seen since frame `since`); the shift, px."""
    import cv2

    recent = [tr for tr in tracks if tr.last_seen >= since]
    if len(recent) < 3 or len(det) < 3:
        return (0.0, 0.0)
    src_c = np.array([tr.centre() for tr in recent])
    codes = np.array([tr.last_code() for tr in recent])
    dst_c = det.centers.astype(np.float64)
    d = np.linalg.norm(src_c[:, None] - dst_c[None], axis=2) / size
    ok = (codes[:, None] == det.class_ids[None, :]) & (d < ALIGN_RADIUS)
    ii, jj = np.nonzero(ok)
    if len(ii) < 3:
        return (0.0, 0.0)
    m, inliers = cv2.estimateAffinePartial2D(
        src_c[ii].astype(np.float32), dst_c[jj].astype(np.float32), method=cv2.RANSAC,
        ransacReprojThreshold=ALIGN_INLIER * size)
    if m is None or inliers is None or int(inliers.sum()) < 3:
        return (0.0, 0.0)
    scale = float(np.sqrt(abs(np.linalg.det(m[:, :2]))))
    if not 0.8 < scale < 1.25:
        return (0.0, 0.0)  # not a shake: leave the tracks where they were
    carry(tracks, m)
    return (float(m[0, 2]), float(m[1, 2]))


def match(tracks: dict[int, Track], det: TileDetections, frame: int, moved: bool,
          next_id: int) -> tuple[set[int], int]:
    """Each detection to its track (new tracks, numbered from `next_id`, for the others);
    (the ids of the tracks seen in this frame, the next free id)."""
    known = list(tracks.values())
    used_t: set[int] = set()
    used_d: set[int] = set()
    pairs = []
    if known and len(det):
        tc = np.array([tr.centre() for tr in known])
        dist = np.linalg.norm(tc[:, None] - det.centers[None].astype(np.float64), axis=2)
        # In each pair's own tile heights: in an oblique view far tiles look small, and
        # their neighbours lie fewer pixels away than near tiles' do.
        th = np.array([height(tr.corners) for tr in known])
        dh = np.linalg.norm(det.corners[:, 3] - det.corners[:, 0], axis=1).astype(np.float64)
        dist = dist / np.maximum((th[:, None] + dh[None, :]) / 2, 1e-9)
        pairs = list(_nearest_first(dist < MATCH_RADIUS, dist, used_t, used_d))
    seen = set()
    for ti, di in pairs:
        tr = known[ti]
        # While a hand moves over the table, a find on the hand next to a tile would
        # drag the tile's place along frame by frame: tiles on the table stay put.
        observe(tr, det, di, frame, place=not (moved and tr.code is not None))
        seen.add(tr.id)
    for di in range(len(det)):
        if di in used_d:
            continue
        tr = Track(next_id, det.corners[di].astype(np.float64), len(det.labels))
        next_id += 1
        tracks[tr.id] = tr
        observe(tr, det, di, frame)
        seen.add(tr.id)
    return seen, next_id


def observe(tr: Track, det: TileDetections, di: int, frame: int, place: bool = True) -> None:
    """Detection `di` of `frame` is a sighting of `tr`."""
    corners = det.corners[di].astype(np.float64)
    # A box much smaller or larger than the tile's is a tile half hidden (by a hand
    # resting on the table) or boxed together with something: it does not move the
    # tile, and what it reads (half a number) is no vote on the tile's reading.
    partial = tr.code is not None and not 0.8 < extent(corners) / max(
        extent(tr.corners), 1e-9) < 1.25
    if partial:
        place = False
    if place:
        tr.corners = corners
    flip = None if det.flip_probs is None else det.flip_probs[di].astype(np.float64)
    probs = det.class_probs[di].astype(np.float64)
    tr.score = float(det.detector_scores[di])
    tr.seen[frame] = (probs, float(det.detector_scores[di]), flip, int(np.argmax(probs)),
                      partial)
    tr.last_seen = frame


def vote(tr: Track, frames) -> tuple[np.ndarray | None, int, Counter]:
    """(mean class probabilities over the frames it was seen whole in, frames seen,
    how often each class was such a frame's best reading)."""
    seen = [f for f in frames if f in tr.seen]
    whole = [tr.seen[f] for f in seen if not tr.seen[f][4]]
    if not whole:
        return None, len(seen), Counter()
    best = Counter(o[3] for o in whole)
    return np.mean([o[0] for o in whole], axis=0), len(seen), best


def latest_best(tr: Track, frames: list[int], hold: int) -> int | None:
    """The frames' best reading when the latest `hold` frames that saw the tile agree."""
    latest = [tr.seen[f][3] for f in frames
              if f in tr.seen and not tr.seen[f][4]][-hold:]
    if len(latest) < hold or len(set(latest)) != 1:
        return None
    return latest[0]


def table_of(tracks: list[Track], labels) -> TileDetections:
    """The stable table: the tiles of `tracks` (each with its reading, or its correction),
    where they lie now, scored over the frames that saw them."""
    if not tracks:
        return TileDetections.empty(labels)
    n_cls = len(labels)
    probs = np.zeros((len(tracks), n_cls), np.float32)
    ids = np.zeros(len(tracks), np.int64)
    scores = np.zeros(len(tracks), np.float32)
    uncertain = np.zeros(len(tracks), bool)
    flips = []
    for i, tr in enumerate(tracks):
        code = tr.correction if tr.correction is not None else tr.code
        if tr.correction is not None:
            p = np.zeros(n_cls)
            p[code] = 1.0
        else:
            p = tr.probs if tr.probs is not None else np.eye(n_cls)[code]
        probs[i] = p
        ids[i] = code
        obs = list(tr.seen.values())
        scores[i] = float(np.mean([o[1] for o in obs])) if obs else tr.score
        uncertain[i] = tr.correction is None and float(p[code]) < UNCERTAIN_BELOW
        fl = [o[2] for o in obs if o[2] is not None]
        flips.append(np.mean(fl, axis=0) if fl else None)
    flip_probs = None
    if all(f is not None for f in flips):
        flip_probs = np.array(flips, np.float32)
    corners = np.array([tr.corners for tr in tracks], np.float32)
    return TileDetections(corners, scores, probs, ids, labels, uncertain, flip_probs)


def moved_there(tracks: dict[int, Track], added: list[Track], joined: dict[int, list[int]],
                labels, code_of) -> list[str]:
    """A table tile that no frame has shown since a new find of its reading appeared
    elsewhere was moved there (by the turn, or its box shifted while a hand half hid it):
    the new find is that tile, which keeps its id, commitment and correction. `added`: the
    finds joining now (those taken over are removed from it and from `tracks`);
    `joined[id]`: the still frames each was seen in; `code_of(track)`: its reading, a
    player's correction first. Returns the changes ("tile 4 (K7) moved")."""
    changes = []
    for tr in list(added):
        code = tr.code
        moved = [old for old in tracks.values()
                 if old.code is not None and old is not tr and old not in added
                 and code in (old.code, code_of(old))
                 and not any(f in old.seen for f in joined[tr.id])]
        if not moved:
            continue
        old = min(moved, key=lambda o: float(np.linalg.norm(o.centre() - tr.centre())))
        step = float(np.linalg.norm(old.centre() - tr.centre())) / max(height(tr.corners), 1e-9)
        if step >= 1.0:  # less is the same place, found again: no set changed
            old.moves += 1
            changes.append(f"tile {old.id} ({labels[code_of(old)]}) moved")
        old.corners = tr.corners
        old.seen.update(tr.seen)
        old.last_seen = tr.last_seen
        old.score = tr.score
        old.unseen_still = 0
        old.code = code
        old.probs = tr.probs
        added.remove(tr)
        del tracks[tr.id]
    return changes
