"""What `vision.game.occlusion` says a missing tile's place shows, on the real valid/ photos.

`python -m bench.eval_occlusion` reads every labelled valid/ photo (RUMMIKUB_DATA), takes
each found tile's look (`look_of`) on the photo's small picture (160 px wide, as the
server gives the tracker), and asks `place_state` about its place in three pictures:

- the photo itself (the tile is there: the right answer is `tile`);
- the photo with a hand painted over its middle tile (`bench.eval_tracker._hand`), for
  the tiles under the hand (the right answer is anything but `surface`/`tiles`);
- the photo with every third tile taken away, one at a time, twice: its place inpainted
  from the table around it by OpenCV (smooth: a crude stand-in for the bare table), and
  its place covered by the nearest stretch of bare table of the same photo moved there
  (`table_moved_over`: the table's own grain, as a tile taken away uncovers it); the right
  answer is `surface` (or `tiles`).

It prints the counts per answer: how often a hidden tile would be taken for gone (the
accusation the tracker must never make) and how often a removed one for hidden.
"""

from __future__ import annotations

import argparse
from collections import Counter

import cv2
import numpy as np

from bench.eval_tracker import _hand, small_picture


def table_moved_over(image: np.ndarray, quads: np.ndarray, i: int, grow: int = 7):
    """`image` with the place of tile `i` of `quads` (N, 4, 2), grown by `grow` px, covered
    by the nearest stretch of bare table (no tile within a fifth of a tile height) of the
    same photo, on a grid of half tiles around it; None where none lies in the photo."""
    from vision.game import occlusion as O

    h, w = image.shape[:2]
    tall = float(np.median(np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1)))
    margin = max(1, int(round(0.2 * tall)))
    tiles = cv2.dilate(O.tiles_mask((h, w), quads).astype(np.uint8),
                       np.ones((2 * margin + 1, 2 * margin + 1), np.uint8)).astype(bool)
    place = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(place, np.round(quads[i]).astype(np.int32), 1)
    place = cv2.dilate(place, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)).astype(bool)
    ys, xs = np.nonzero(place)
    size = np.array([np.linalg.norm(quads[i][1] - quads[i][0]), tall]) / 2
    steps = sorted(((a, b) for a in range(-10, 11) for b in range(-10, 11) if a or b),
                   key=lambda ab: np.hypot(*ab))
    for a, b in steps:
        dx, dy = int(round(a * size[0])), int(round(b * size[1]))
        sx, sy = xs + dx, ys + dy
        if sx.min() < 0 or sy.min() < 0 or sx.max() >= w or sy.max() >= h:
            continue
        if tiles[sy, sx].any():
            continue
        out = image.copy()
        out[ys, xs] = image[sy, sx]
        return out
    return None


def run(reader, photos) -> dict[str, Counter]:
    from vision.game import occlusion as O

    out = {"there": Counter(), "under a hand": Counter(), "taken away": Counter(),
           "table moved in": Counter()}
    for photo in photos:
        image = photo.read()
        h, w = image.shape[:2]
        found = reader.read(image)
        if len(found) < 2:
            continue
        small = small_picture(image)
        scale = np.array([small.shape[1] / w, small.shape[0] / h])
        quads = found.corners.astype(np.float64)
        every = O.tiles_mask(small.shape, [q * scale for q in quads])
        looks = [O.look_of(small, q * scale, every) for q in quads]
        size = float(np.median(np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1)))
        centre = found.centers[len(found) // 2]
        painted = _hand(image.astype(np.float32), (centre[0], centre[1] + 0.3 * size),
                        0.9 * size, 1).astype(np.uint8)
        skin = np.abs(painted.astype(np.int16) - image).max(axis=2) > 40
        hand = small_picture(painted)
        for i, (q, look) in enumerate(zip(quads, looks, strict=True)):
            out["there"][O.place_state(small, q * scale, look) or "cannot tell"] += 1
            inside = np.zeros((h, w), np.uint8)
            cv2.fillConvexPoly(inside, np.round(q).astype(np.int32), 1)
            if skin[inside > 0].mean() > 0.5:  # the hand lies over most of it
                out["under a hand"][O.place_state(hand, q * scale, look) or "cannot tell"] += 1
            if i % 3:
                continue
            mask = cv2.dilate(inside * 255, np.ones((15, 15), np.uint8))
            taken = small_picture(cv2.inpaint(image, mask, 7, cv2.INPAINT_TELEA))
            others = O.tiles_mask(small.shape, [p * scale for k, p in enumerate(quads)
                                                if k != i])
            out["taken away"][O.place_state(taken, q * scale, look, others) or "cannot tell"] += 1
            moved = table_moved_over(image, quads, i)
            if moved is not None:
                out["table moved in"][O.place_state(small_picture(moved), q * scale, look, others)
                                      or "cannot tell"] += 1
    return out


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    from training.real_data import load_split
    from vision.recognition.pipeline import TileReader

    photos = [p for p in load_split("valid") if p.tiles]
    result = run(TileReader.load(), photos)
    print(f"what a tile's place shows, by vision.game.occlusion ({len(photos)} real valid/ photos):")
    for case, counts in result.items():
        total = sum(counts.values())
        parts = ", ".join(f"{k} {v}" for k, v in counts.most_common())
        print(f"  {case:14s} {total:4d} places: {parts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
