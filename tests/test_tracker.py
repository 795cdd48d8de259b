"""The live tracker: the stable table changes only when a change has held on a still scene."""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee import DEFAULT_RULES
from vision.game.tracker import TableTracker
from vision.recognition.detections import TileDetections
from vision.recognition.labels import TILE_CLASSES

W, H = 40.0, 40.0 / 0.72


def tiles_at(placed, *, shift=(0.0, 0.0), angle=0.0, sure=0.9, second=None) -> TileDetections:
    """Detections of tiles `placed` = [(code, x, y), ...], the camera moved by `shift` px and
    turned `angle` rad about (0, 0). `second` gives a tile's runner-up reading {i: code}."""
    n = len(placed)
    corners = np.zeros((n, 4, 2), np.float32)
    probs = np.full((n, len(TILE_CLASSES)), (1 - sure) / (len(TILE_CLASSES) - 1), np.float32)
    ids = np.zeros(n, np.int64)
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    for i, (code, x, y) in enumerate(placed):
        quad = np.array([[x - W / 2, y - H / 2], [x + W / 2, y - H / 2],
                         [x + W / 2, y + H / 2], [x - W / 2, y + H / 2]])
        corners[i] = quad @ rot.T + np.asarray(shift)
        k = TILE_CLASSES.index(code)
        probs[i, k] = sure
        if second and i in second:
            probs[i, TILE_CLASSES.index(second[i])] = 1 - sure
            probs[i] /= probs[i].sum()
        ids[i] = k
    return TileDetections(corners, np.full(n, 0.95, np.float32), probs, ids)


def row(codes, x=100.0, y=100.0):
    return [(code, x + k * (W + 2), y) for k, code in enumerate(codes)]


def codes_of(update_or_dets) -> list[str]:
    d = getattr(update_or_dets, "stable", update_or_dets)
    return sorted(d.codes) if d is not None else []


SET_A = row(["R5", "R6", "R7"])
SET_B = row(["K9", "B9", "O9"], y=250)


def settle(tracker, placed, frames=3, **kw):
    for _ in range(frames):
        update = tracker.push(tiles_at(placed, **kw))
    return update


def test_a_new_set_becomes_stable_after_hold_still_frames():
    tracker = TableTracker(hold=3)
    updates = [tracker.push(tiles_at(SET_A)) for _ in range(3)]
    assert [u.stable is not None and len(u.stable) == 3 for u in updates] == [False, False, True]
    assert updates[-1].changed and codes_of(updates[-1]) == ["R5", "R6", "R7"]
    # The next set: the frame it appears in churns, then it must hold for 3 still frames.
    updates = [tracker.push(tiles_at(SET_A + SET_B)) for _ in range(4)]
    assert [u.changed for u in updates] == [False, False, False, True]
    assert codes_of(updates[-1]) == ["B9", "K9", "O9", "R5", "R6", "R7"]
    assert not tracker.push(tiles_at(SET_A + SET_B)).changed


def test_a_reading_flickering_for_one_frame_never_changes_the_stable_table():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 4)
    flicker = [("R5", *SET_A[0][1:]), ("R8", *SET_A[1][1:]), ("R7", *SET_A[2][1:])]
    for k in range(12):
        update = tracker.push(tiles_at(flicker if k % 3 == 1 else SET_A))
        assert not update.changed
        assert codes_of(update) == ["R5", "R6", "R7"]


def test_a_reading_that_holds_changes_the_tile():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 3)
    reread = [("R5", *SET_A[0][1:]), ("R6", *SET_A[1][1:]), ("R4", *SET_A[2][1:])]
    changed = [tracker.push(tiles_at(reread)).changed for _ in range(8)]
    assert any(changed) and codes_of(tracker.stable) == ["R4", "R5", "R6"]


def _gray(hand_x: float | None, shift=(0, 0)) -> np.ndarray:
    """A 160x120 grey view of a wooden table, a hand blob at `hand_x` (small-frame px)."""
    rng = np.random.default_rng(0)
    g = (120 + 30 * rng.random((120, 160))).astype(np.float32)
    g = np.roll(g, shift, axis=(0, 1))
    if hand_x is not None:
        yy, xx = np.mgrid[0:120, 0:160]
        g[((xx - hand_x) / 25) ** 2 + ((yy - 60) / 35) ** 2 < 1] = 210
    return g.astype(np.uint8)


def test_nothing_changes_while_the_scene_moves():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 3)
    # A hand sweeps across while the new set is laid: every frame moves, nothing is decided.
    for k in range(8):
        update = tracker.push(tiles_at(SET_A + SET_B), _gray(20 + 15 * k))
        assert not update.still and not update.changed
        assert codes_of(update) == ["R5", "R6", "R7"]
    assert update.pending and {p["code"] for p in update.pending} == {"K9", "B9", "O9"}
    # The hand has gone (the frame it leaves in still moves): three still frames later
    # the set is on the table.
    updates = [tracker.push(tiles_at(SET_A + SET_B), _gray(None)) for _ in range(5)]
    assert [u.still for u in updates] == [False, True, True, True, True]
    assert [u.changed for u in updates] == [False, False, False, True, False]
    assert codes_of(updates[-1]) == ["B9", "K9", "O9", "R5", "R6", "R7"]


def test_a_tile_hidden_for_a_few_frames_by_a_hand_stays():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A + SET_B, 3)
    # Not yet committed: hidden while the hand moves, it stays.
    for k in range(5):
        update = tracker.push(tiles_at(SET_A[1:] + SET_B), _gray(20 + 10 * k))
        assert len(update.stable) == 6 and not update.changed
    assert update.hidden == [0]
    tracker.commit()
    # Committed: hidden even while the scene is still (a resting hand), it stays.
    for _ in range(12):
        update = tracker.push(tiles_at(SET_A + SET_B[1:]))
        assert len(update.stable) == 6 and not update.changed
    # Hidden longer than the window, it is still a surely seen tile, not a faint find.
    assert update.hidden == [3] and update.stable.tile_scores.min() > 0.8
    update = tracker.push(tiles_at(SET_A + SET_B))
    assert codes_of(update) == ["B9", "K9", "O9", "R5", "R6", "R7"]


def test_a_tile_laid_this_turn_and_taken_back_leaves():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 3)
    tracker.commit()
    settle(tracker, SET_A + SET_B, 4)
    assert len(tracker.stable) == 6
    # Gone for longer than a resting hand hides tiles (2 x hold still frames): it left.
    updates = [tracker.push(tiles_at(SET_A)) for _ in range(7)]
    assert [u.changed for u in updates] == [False] * 6 + [True]
    assert codes_of(tracker.stable) == ["R5", "R6", "R7"]


def test_a_committed_tile_moved_by_the_turn_follows_it():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A + SET_B, 3)
    tracker.commit()
    ids = tracker.push(tiles_at(SET_A + SET_B)).ids
    moved = SET_A[:2] + [("R7", 400.0, 400.0)] + SET_B
    updates = [tracker.push(tiles_at(moved)) for _ in range(5)]
    # One change (the sets are not what they were), the same six tiles: R7 moved.
    assert sum(u.changed for u in updates) == 1 and updates[-1].ids == ids
    assert codes_of(tracker.stable) == ["B9", "K9", "O9", "R5", "R6", "R7"]
    r7 = tracker.stable.centers[tracker.stable.codes.index("R7")]
    assert np.allclose(r7, [400, 400], atol=1)


def test_a_committed_tile_missing_for_long_is_gone():
    tracker = TableTracker(hold=3, gone_after=10)
    settle(tracker, SET_A, 3)
    tracker.commit()
    counts = [len(tracker.push(tiles_at(SET_A[:2])).stable) for _ in range(12)]
    assert counts[:9] == [3] * 9 and counts[-1] == 2


def test_never_more_copies_than_the_edition_has():
    tracker = TableTracker(hold=3)
    # Three tiles read R5; the third is unsure and might be R6.
    placed = row(["R5", "R4"]) + row(["R5", "K1"], y=250) + [("R5", 400.0, 400.0)]
    det = tiles_at(placed)
    det.class_probs[4] = 0
    det.class_probs[4, TILE_CLASSES.index("R5")] = 0.55
    det.class_probs[4, TILE_CLASSES.index("R6")] = 0.45
    for _ in range(5):
        update = tracker.push(det)
    assert update.stable.codes.count("R5") == DEFAULT_RULES.copies
    assert "R6" in update.stable.codes
    # A third sure R5 is kept out of the table until the frames say which copy it is.
    sure = tiles_at(row(["R5", "R4"]) + row(["R5", "K1"], y=250) + [("R5", 400.0, 400.0)],
                    sure=0.999)
    other = TableTracker(hold=3)
    for _ in range(5):
        update = other.push(sure)
    assert update.stable.codes.count("R5") == 2 and len(update.stable) == 4


def test_jokers_beyond_the_edition_are_not_believed():
    rules = DEFAULT_RULES.replace(jokers=1)
    tracker = TableTracker(rules, hold=3)
    det = tiles_at([("J", 100.0, 100.0), ("J", 300.0, 100.0)], sure=0.9)
    det.class_probs[1] = 0.0
    det.class_probs[1, TILE_CLASSES.index("J")] = 0.6
    det.class_probs[1, TILE_CLASSES.index("R13")] = 0.4
    settle_update = [tracker.push(det) for _ in range(3)][-1]
    assert settle_update.stable.codes == ["J", "R13"]


def test_a_correction_holds_and_follows_the_tile():
    tracker = TableTracker(hold=3)
    misread = [("R5", *SET_A[0][1:]), ("R8", *SET_A[1][1:]), ("R7", *SET_A[2][1:])]
    settle(tracker, misread, 3)
    assert codes_of(tracker.stable) == ["R5", "R7", "R8"]
    tracker.correct(tracker.stable.centers[1], "R6")
    assert codes_of(tracker.stable) == ["R5", "R6", "R7"]
    # The tile is nudged by a third of its width, frame by frame: the correction follows.
    for k in range(1, 6):
        nudged = [misread[0], ("R8", misread[1][1] + 4 * k, misread[1][2] + 3 * k), misread[2]]
        update = tracker.push(tiles_at(nudged))
        assert codes_of(update) == ["R5", "R6", "R7"]
    assert tracker.stable.class_probs[1, TILE_CLASSES.index("R6")] == 1.0
    with pytest.raises(ValueError, match="no tile"):
        tracker.correct((900, 900), "R6")
    with pytest.raises(ValueError, match="not a tile code"):
        tracker.correct(tracker.stable.centers[0], "X5")


def test_camera_shake_keeps_every_tile_on_its_track():
    tracker = TableTracker(hold=3)
    table = SET_A + SET_B + row(["B1", "B2", "B3", "B4"], y=400)
    rng = np.random.default_rng(1)
    settle(tracker, table, 3)
    ids = tracker.push(tiles_at(table)).ids
    for _ in range(20):
        shift = rng.normal(0, 12, 2)  # a third of a tile and more
        update = tracker.push(tiles_at(table, shift=shift, angle=rng.normal(0, 0.01)))
        assert update.ids == ids and not update.changed
    assert update.stable.centers[0] == pytest.approx(table[0][1:] + shift, abs=6)


def test_camera_shake_is_not_motion():
    tracker = TableTracker(hold=3)
    for k in range(6):
        update = tracker.push(tiles_at(SET_A), _gray(None, shift=(k % 2, 2 * (k % 3))))
    assert update.still and codes_of(update) == ["R5", "R6", "R7"]


def test_reset_and_bad_arguments():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 3)
    tracker.reset()
    assert tracker.stable is None
    with pytest.raises(ValueError, match="hold"):
        TableTracker(hold=5, window=3)
    with pytest.raises(ValueError, match="nothing to correct"):
        tracker.correct((0, 0), "R5")


def test_rendered_frames_through_the_models():
    """A rendered table, a hand passing over it, camera jitter, a set laid: read by the
    real models frame by frame, the stable table is right and never changes falsely."""
    pytest.importorskip("PIL")
    from bench.eval_tracker import run_sequence
    from vision.recognition.pipeline import ModelsMissing, TileReader

    try:
        reader = TileReader.load()
    except ModelsMissing as e:
        pytest.skip(str(e))
    result = run_sequence(reader, seed=3, n_sets=3)
    assert result.false_changes == 0, result.log
    assert result.before_right_at is not None and result.after_right_at is not None, result.log


def test_a_hand_resting_for_a_moment_on_tiles_just_laid_does_not_take_them():
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 3)
    tracker.commit()
    settle(tracker, SET_A + SET_B, 4)
    # The hand rests (still frames) over the new set for fewer than 2 x hold frames.
    for _ in range(5):
        update = tracker.push(tiles_at(SET_A))
        assert len(update.stable) == 6 and not update.changed
    update = tracker.push(tiles_at(SET_A + SET_B))
    assert len(update.stable) == 6 and not update.changed


def test_a_corrected_tile_laid_elsewhere_keeps_its_correction():
    tracker = TableTracker(hold=3)
    misread = [("R5", *SET_A[0][1:]), ("R8", *SET_A[1][1:]), ("R7", *SET_A[2][1:])]
    settle(tracker, misread, 3)
    tracker.correct(tracker.stable.centers[1], "R6")
    # Picked up (a hand: moving frames) and laid far away, still misread as R8.
    elsewhere = [misread[0], ("R8", 500.0, 400.0), misread[2]]
    for k in range(3):
        tracker.push(tiles_at(elsewhere), _gray(20 + 20 * k))
    for _ in range(5):
        update = tracker.push(tiles_at(elsewhere), _gray(None))
    assert codes_of(update) == ["R5", "R6", "R7"]
    assert update.stable.centers[update.stable.codes.index("R6")] == pytest.approx([500, 400])


def test_a_seeded_tracker_holds_the_stored_table_from_its_first_frame():
    """`seed`: a reconnected camera's tracker starts from the stored reading; its first
    frame, with a tile hidden, changes nothing, and the seeded tiles keep their rules."""
    tracker = TableTracker(hold=3)
    stored = tiles_at(SET_A + SET_B)
    ids = tracker.seed(stored, committed=[True, True, True, False, False, False])
    assert ids == list(range(6)) and codes_of(tracker.stable) == codes_of(stored)
    first = tracker.push(tiles_at(SET_A[1:] + SET_B))  # R5 under a hand
    assert not first.changed and first.ids == ids and first.hidden == [0]
    # A tile laid this turn (not committed) and taken back leaves as before; a committed
    # one hidden as long stays.
    updates = [tracker.push(tiles_at(SET_A[1:] + SET_B[1:])) for _ in range(7)]
    assert sum(u.changed for u in updates) == 1
    assert codes_of(tracker.stable) == ["B9", "O9", "R5", "R6", "R7"]
    # A new tile joins as on any tracker (the frame it comes in churns: not still).
    updates = [tracker.push(tiles_at(SET_A + SET_B[1:] + [("J", 400.0, 400.0)]))
               for _ in range(4)]
    assert [u.changed for u in updates] == [False, False, False, True]
    assert "J" in tracker.stable.codes and "R5" in tracker.stable.codes


def _track_of(code, x, y, track_id=0):
    from vision.game.tracks import Track

    corners = tiles_at([(code, x, y)]).corners[0].astype(np.float64)
    return Track(track_id, corners, len(TILE_CLASSES), code=TILE_CLASSES.index(code))


def test_a_camera_move_the_tiles_deny_is_not_followed():
    """A hand sweeping over a close-up pulls the small picture's move along with it
    (2 tile heights in one frame): the tiles it left uncovered are found where they lay,
    so the tracks stay there. A real move, found where it carries them, is followed."""
    from vision.game.camera_motion import CameraMove
    from vision.game.tracks import camera_move

    placed = SET_A + SET_B
    tracks = [_track_of(code, x, y, i) for i, (code, x, y) in enumerate(placed)]
    before = [tr.centre().copy() for tr in tracks]
    sweep = CameraMove(np.array([[1.0, 0, -28.0], [0, 1.0, 0]]), 40, "orb")  # small-px
    frame, picture = (1600, 1200), np.zeros((120, 160), np.uint8)
    # two tiles the hand left uncovered, where they were
    seen = tiles_at(placed[:1] + placed[4:5])
    assert camera_move(tracks, sweep, picture, frame, H, seen) is None
    assert all(np.allclose(tr.centre(), c) for tr, c in zip(tracks, before, strict=True))
    # the same move, the tiles found where it carries them: followed
    moved = tiles_at(placed, shift=(-280.0, 0.0))
    out = camera_move(tracks, sweep, picture, frame, H, moved)
    assert out is not None and out["shift"] == [-280.0, 0.0]
    assert np.allclose(tracks[0].centre(), before[0] + (-280.0, 0.0))
    # no tile found at all (a blurred swing): the picture's move is all there is
    tracks = [_track_of(code, x, y, i) for i, (code, x, y) in enumerate(placed)]
    assert camera_move(tracks, sweep, picture, frame, H, tiles_at([])) is not None


def test_a_new_find_read_otherwise_from_frame_to_frame_waits_twice_as_long():
    """A knot in the wood read K10, K9, K9, J: not a tile until it has held twice `hold`
    frames; a new tile read alike joins after `hold`."""
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 4)
    knot = [("K9", 400.0, 300.0)]
    readings = ["K10", "K9", "J", "K9", "K9", "K9"]
    joined = []
    for code in readings:
        update = tracker.push(tiles_at(SET_A + [(code, 400.0, 300.0)]))
        joined.append(len(update.stable) == 4)
    assert joined == [False, False, False, False, False, True]
    tracker = TableTracker(hold=3)
    settle(tracker, SET_A, 4)
    joined = [len(tracker.push(tiles_at(SET_A + knot)).stable) == 4 for _ in range(4)]
    assert joined == [False, False, True, True]


def test_a_find_that_came_and_went_while_nothing_moved_holds_the_whole_window():
    """A knot the detector takes now and then (rummy3-33): found, missed while the table
    was still, gone for longer than the window, then found three frames in a row by chance.
    Its place is remembered: it joins only after holding `window` frames. A tile laid where
    nothing flickered joins after `hold`."""
    knot = [("K3", 400.0, 300.0)]
    tracker = TableTracker(hold=3, window=8)
    settle(tracker, SET_A, 4)
    for found in (True, True, False, True) + (False,) * 12:  # flickers, then gone 12 frames
        update = tracker.push(tiles_at(SET_A + (knot if found else [])))
        assert len(update.stable) == 3
    joined = [len(tracker.push(tiles_at(SET_A + knot)).stable) == 4 for _ in range(9)]
    assert joined == [False] * 7 + [True, True]
    # where nothing came and went: `hold` frames
    tracker = TableTracker(hold=3, window=8)
    settle(tracker, SET_A, 4)
    for _ in range(16):
        tracker.push(tiles_at(SET_A))
    joined = [len(tracker.push(tiles_at(SET_A + knot)).stable) == 4 for _ in range(4)]
    assert joined == [False, False, True, True]
