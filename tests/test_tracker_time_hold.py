"""The tracker's time hold: a change holds over still frames for a time, not only a count."""

from __future__ import annotations

import pytest

from tests.test_tracker import SET_A, SET_B, codes_of, row, tiles_at
from vision.game.tracker import TableTracker

# A table of 24 tiles: one tile moved churns 2 tracks, few enough for a still frame.
TABLE = [tile for k, colour in enumerate("RBKO")
         for tile in row([f"{colour}{n}" for n in range(1, 7)], y=100.0 + 80 * k)]


def stream(tracker, placed, times):
    return [tracker.push(tiles_at(placed), t=t) for t in times]


def test_two_frames_half_a_second_apart_hold_a_new_set():
    tracker = TableTracker(hold=3, hold_s=0.4)
    first = stream(tracker, SET_A, [0.0, 0.5])
    assert [u.changed for u in first] == [False, True]
    # The set's first frame churns (not still); the next two, 0.5 s apart, hold it.
    updates = stream(tracker, SET_A + SET_B, [1.0, 1.5, 2.0])
    assert [u.changed for u in updates] == [False, False, True]
    assert codes_of(updates[-1]) == ["B9", "K9", "O9", "R5", "R6", "R7"]
    # Frames only (no hold_s): the third still frame, as before.
    tracker = TableTracker(hold=3)
    stream(tracker, SET_A, [0.0, 0.5, 1.0])
    assert [u.changed for u in stream(tracker, SET_A + SET_B, [1.5, 2.0, 2.5, 3.0])] == [
        False, False, False, True]


def test_frames_close_together_must_span_the_hold_time():
    # 10 frames a second, a count of 6 or 0.4 s: the 0.4 s come first, at the 5th frame.
    tracker = TableTracker(hold=6, hold_s=0.4)
    changed = [u.changed for u in stream(tracker, SET_A, [k / 10 for k in range(6)])]
    assert changed == [False, False, False, False, True, False]
    # Two frames 0.1 s apart are no hold, however many tiles agree.
    tracker = TableTracker(hold=6, hold_s=0.4)
    assert not any(u.changed for u in stream(tracker, SET_A, [0.0, 0.1, 0.2]))


def test_a_hand_between_two_frames_breaks_the_run_whatever_the_time():
    tracker = TableTracker(hold=3, hold_s=0.4)
    stream(tracker, SET_A, [0.0, 0.5])
    # Frames with the set half there, then whole (a hand laying it): they churn, not still.
    tracker.push(tiles_at(SET_A + SET_B[:1]), t=1.0)
    assert not tracker.push(tiles_at(SET_A + SET_B), t=6.0).still
    # The time between counts only over still frames: one still frame is no hold.
    assert not tracker.push(tiles_at(SET_A + SET_B), t=6.5).changed
    assert tracker.push(tiles_at(SET_A + SET_B), t=7.0).changed


def test_without_times_the_frames_count():
    tracker = TableTracker(hold=3, hold_s=0.4)
    changed = [tracker.push(tiles_at(SET_A)).changed for _ in range(3)]
    assert changed == [False, False, True]


def test_a_tile_moved_between_two_frames_of_a_slow_camera():
    tracker = TableTracker(hold=3, hold_s=0.4)
    stream(tracker, TABLE, [k / 2 for k in range(10)])
    # One tile moved between two frames: no frame shows a hand, and one tile of 24 moving
    # leaves the frame still. The find at its new place came while nothing moved: it holds
    # `hold` frames from the frame it came in (1 s at 2 frames/s, as a change whose frame
    # moved holds in the 2 still frames after it), not `window` frames.
    code = TABLE[-1][0]
    moved = [*TABLE[:-1], (code, 600.0, 420.0)]
    updates = stream(tracker, moved, [5.0, 5.5, 6.0])
    assert [u.still for u in updates] == [True, True, True]
    assert [u.changed for u in updates] == [False, False, True]
    assert [c for c in updates[2].changes if "moved" in c], updates[2].changes
    assert len(updates[2].stable) == len(TABLE)
    assert codes_of(updates[2]) == codes_of(tiles_at(TABLE))
    # Counted from the frame the find came in, with or without times (it waited for the
    # still run to hold nothing older: `window` frames, 4 s at 2 frames/s).
    tracker = TableTracker(hold=3)
    stream(tracker, TABLE, [k / 2 for k in range(10)])
    assert [u.changed for u in stream(tracker, moved, [5.0, 5.5, 6.0])] == [False, False, True]


def test_a_find_that_came_while_nothing_moved_holds_the_frame_count():
    # A find (a reflection, a box on the wood) appearing in a still frame, with no tile of
    # the table gone: it needs `hold` frames, not 0.5 s.
    tracker = TableTracker(hold=3, hold_s=0.4)
    stream(tracker, TABLE, [k / 2 for k in range(10)])
    more = [*TABLE, ("K1", 600.0, 420.0)]
    updates = stream(tracker, more, [5.0, 5.5, 6.0])
    assert [u.still for u in updates] == [True, True, True]
    assert [u.changed for u in updates] == [False, False, True]


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"hold": 3, "min_hold": 4}, "min_hold"),
    ({"hold": 3, "min_hold": 0}, "min_hold"),
    ({"hold_s": -0.1}, "hold_s"),
    ({"hold_s": float("nan")}, "hold_s"),
])
def test_bad_hold_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words):
        TableTracker(**kwargs)
