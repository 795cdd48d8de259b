"""A bumped phone: the camera's move is found on every frame, and the live table follows
it at once (real valid/ photos, the view turned and shifted as a knocked stand turns it)."""

from __future__ import annotations

import cv2
import numpy as np

from tests.tracker_helpers import SMALL_W, bumped, noisy, small
from vision.game.camera_motion import estimate_move


def moved_points(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return pts @ m[:, :2].T + m[:, 2]


def test_the_cameras_move_is_found_on_small_pictures(table_photos):
    for photo in table_photos:
        image = photo.read()
        h, w = image.shape[:2]
        for degrees in (2, 4, 6, 8):
            frame, m = bumped(image, degrees, (40, -25))
            move = estimate_move(small(image), small(frame))
            assert move is not None, (photo.key, degrees)
            sx, sy = w / SMALL_W, h / small(image).shape[0]
            found = move.scaled(sx, sy)
            grid = np.array([[x, y] for x in (0.2 * w, 0.5 * w, 0.8 * w)
                             for y in (0.2 * h, 0.5 * h, 0.8 * h)])
            err = np.abs(moved_points(found, grid) - moved_points(m, grid)).max()
            assert err < 4.0, (photo.key, degrees, err)  # px of a 1000 px photo
    # Two different tables give no move at all.
    other = table_photos[1].read()
    assert estimate_move(small(image), small(cv2.resize(other, (w, h)))) is None


def test_a_bumped_view_realigns_the_live_table_within_three_frames(table_photos, tile_reader):
    from vision.game.tracker import TableTracker
    from vision.game.turn import judge_turn

    rng = np.random.default_rng(5)
    for photo in table_photos[::2]:  # 54 tiles, and 12
        image = photo.read()
        h, w = image.shape[:2]
        for degrees in (2, 4, 6, 8):
            tracker = TableTracker(hold=3)
            for _ in range(3):
                frame = noisy(image, rng)
                update = tracker.push(tile_reader.read(frame), small(frame), frame_size=(w, h))
            before = update.stable
            assert before is not None and len(before) >= len(photo.tiles) - 1
            ids = update.ids
            size = float(np.median(np.linalg.norm(before.corners[:, 3] - before.corners[:, 0],
                                                  axis=1)))
            sign = 1 if degrees % 4 else -1
            view, m = bumped(image, sign * degrees, (40 * sign, -30))
            truth = moved_points(m, before.centers.astype(np.float64))
            errors = []
            for _k in range(4):
                frame = noisy(view, rng)
                update = tracker.push(tile_reader.read(frame), small(frame), frame_size=(w, h))
                assert not update.changed, (photo.key, degrees, update.changes)
                assert update.ids == ids
                errors.append(float(np.linalg.norm(update.stable.centers - truth, axis=1).max())
                              / size)
            # Realigned at once (the move is found on the very frame it happened in), and it
            # stays: every tile within a fifth of a tile of where the camera now sees it.
            assert max(errors[:3]) < 0.2 and max(errors) < 0.2, (photo.key, degrees, errors)
            turn = judge_turn(before, update.stable, frames=((w, h), (w, h)))
            assert turn.played == [] and turn.left == [], (photo.key, degrees)
            assert "laid nothing" in " ".join(turn.verdict.problems)
