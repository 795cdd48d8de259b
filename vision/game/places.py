"""What the places of the live table's tiles show (`vision.game.tracker`): for each tile of
the stable table the frame misses, whether its place shows the table (it left), a hand (it
is hidden), the frame's edge (out of view) or still the tile (the detector missed it).

The judgement of one place is `vision.game.occlusion`'s; this module keeps each track's
look and place state up to date over the frames, which the tracker's decisions then read
(`Track.state`, `Track.bare_still`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from vision.game import occlusion
from vision.game.tracks import SEEN, Track, height

# Missing tiles whose centres lie this close (tile heights), chained, are under one thing
# when one of them is seen covered: a palm is ~2.3 tile heights across, its fingers reach
# further (docs/decisions/hidden-tiles-from-pixels.md).
SAME_COVER = 3.0
# A new find's surroundings out to this many tile heights must look as the table did
# there (occlusion's RING_TOL, RING_CHANGED): a find on a resting hand has the hand
# around it (docs/decisions/hidden-tiles-from-pixels.md, "What a resting palm brings").
AROUND = 0.5


def judge(tracks: Iterable[Track], picture: np.ndarray | None,
          frame_size: tuple[int, int] | None, frame: int, still: bool, *, hold: int,
          window: int) -> bool:
    """What each stable tile's place shows in `frame`: its look is kept while it is seen
    on still frames, its place judged when this frame misses it (`hold`: sightings that
    make a find sure; `window`: frames between two new looks at a seen tile). Returns
    whether the pictures can tell (a picture and the frame's size were given)."""
    tracks = list(tracks)
    if picture is None or frame_size is None:
        for tr in tracks:
            tr.state = None
        return False
    pic = occlusion.prepare(picture)
    h, w = pic.shape[:2]
    to_small = np.array([w / frame_size[0], h / frame_size[1]])
    seen = [tr for tr in tracks if tr.last_seen == frame]
    # Tiles found now that lie over a missing tile's place: only tiles the frames
    # agree on (stable ones, or seen `hold` times), not a find on a hand.
    sure = [tr.corners * to_small for tr in seen
            if tr.code is not None or len(tr.seen) >= hold]
    found = occlusion.tiles_mask(pic.shape, sure)
    every = occlusion.tiles_mask(pic.shape, [tr.corners * to_small for tr in seen])
    whole = all(tr.last_seen == frame for tr in tracks if tr.code is not None)
    surface = remembered(tracks, to_small) if any(
        tr.code is None and tr.last_seen == frame for tr in tracks) else None
    for tr in tracks:
        if tr.last_seen == frame:
            # Seen now (if only in part, under a hand's edge): not going anywhere.
            tr.state, tr.bare_still = SEEN, 0
            if tr.code is None and on_table(pic, tr.corners * to_small, surface,
                                            every) is False:
                tr.off_table.add(frame)
            # Looked at again now and then (light and shade change slowly), while
            # the whole table is seen: not with a hand lying next to it.
            if still and (tr.look is None or (whole and (frame + tr.id) % window == 0
                                              and not tr.seen[frame][4])):
                tr.look = occlusion.look_of(pic, tr.corners * to_small, every) or tr.look
            continue
        if tr.code is None:
            continue
        tr.state = occlusion.place_state(pic, tr.corners * to_small, tr.look, found)
    spread_cover([tr for tr in tracks if tr.code is not None and tr.last_seen != frame])
    for tr in tracks:
        if tr.code is None or tr.last_seen == frame:
            continue
        if tr.state in occlusion.BARE:
            tr.bare_still += int(still)
        elif tr.state is not None:
            tr.bare_still = 0
    return True


def spread_cover(missing: list[Track]) -> None:
    """A hand over one tile lies over the tiles next to it as well: a missing tile whose
    place looks bare, or cannot tell (a cream tile on a cream cloth), but which lies
    within `SAME_COVER` tile heights of a covered one (through other missing tiles) is
    covered too. A hand the colour of the table looks
    bare on some of the places it hides; it stays covered where it lies over a tile's
    number or changes the table around it. A tile really taken away next to a covered
    one leaves once the hand has gone."""
    covered = [tr for tr in missing if tr.state == occlusion.COVERED]
    if not covered or len(covered) == len(missing):
        return
    centres = np.array([tr.centre() for tr in missing])
    reach = SAME_COVER * np.array([height(tr.corners) for tr in missing])
    near = np.linalg.norm(centres[:, None] - centres[None], axis=2) < np.maximum(
        reach[:, None], reach[None])
    todo = [missing.index(tr) for tr in covered]
    done = set(todo)
    while todo:
        for j in np.flatnonzero(near[todo.pop()]):
            if int(j) not in done:
                done.add(int(j))
                todo.append(int(j))
    for j in done:
        if missing[j].state in occlusion.BARE or missing[j].state is None:
            missing[j].state = occlusion.COVERED


def near(places: np.ndarray, tr: Track, radius: float) -> bool:
    """Whether `tr` lies within `radius` px of one of `places` (K, 2)."""
    return bool(len(places)) and float(np.min(np.linalg.norm(
        places - tr.centre(), axis=1))) < radius


def out_of_view(tr: Track, frame_size: tuple[int, int] | None) -> bool:
    """Whether the frame's edge cuts the tile's place (its corners, carried by the
    camera's moves): the camera turned away from it, the tile is no less there."""
    if frame_size is None:
        return False
    w, h = frame_size
    q = tr.corners
    return bool((q.min(axis=0) < 0).any() or q[:, 0].max() > w - 1 or q[:, 1].max() > h - 1)


def remembered(tracks: list[Track], to_small: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The table's surface as the stable tiles' looks remember it around them: (points
    (K, 2) of the small picture, their colours then (K, C))."""
    pts, colours = [], []
    for tr in tracks:
        look = tr.look
        if tr.code is None or look is None or look.ring_xy is None or not len(look.ring_xy):
            continue
        pts.append(look.ring_xy + tr.centre() * to_small)
        colours.append(look.ring_px)
    if not pts:
        return np.zeros((0, 2)), np.zeros((0, 1))
    return np.concatenate(pts), np.concatenate(colours)


def on_table(pic, quad: np.ndarray, surface: tuple[np.ndarray, np.ndarray],
             every: np.ndarray) -> bool | None:
    """Whether a new find at `quad` (small-picture pixels) lies on the table as it was:
    the surface around it (out to `AROUND` tile heights, the tiles found now left out)
    still looks as the stable tiles' looks remember it (`surface`, `remembered`;
    `occlusion.surface_changed`). A find on a resting hand has the hand around it, a tile
    laid has the table. None where nothing is remembered there (a tile laid far from the
    others)."""
    import cv2

    pts, colours = surface
    if not len(pts):
        return None
    r = max(1, int(round(AROUND * height(quad))))
    zone = np.zeros(pic.shape[:2], np.uint8)
    cv2.fillConvexPoly(zone, np.round(quad).astype(np.int32), 1)
    zone = cv2.dilate(zone, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))
    changed = occlusion.surface_changed(pic, pts, colours, skip=every, only=zone.astype(bool))
    return None if changed is None else not changed
