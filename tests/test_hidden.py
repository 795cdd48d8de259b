"""Hidden is not gone: a hand held still over tiles leaves the live table as it was, and a
turn judged meanwhile does not say they left; a tile really taken away does leave (real
valid/ photos, a hand painted over them)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from bench.eval_tracker import _hand
from tests.tracker_helpers import noisy, small


def settled(tile_reader, image, rng, *, commit=False):
    from vision.game.tracker import TableTracker

    h, w = image.shape[:2]
    tracker = TableTracker(hold=3)
    for _ in range(3):
        frame = noisy(image, rng)
        update = tracker.push(tile_reader.read(frame), small(frame), frame_size=(w, h))
    assert update.stable is not None
    if commit:
        tracker.commit()
    return tracker, update


def push(tracker, tile_reader, image, rng):
    h, w = image.shape[:2]
    frame = noisy(image, rng)
    detections = tile_reader.read(frame)
    return detections, tracker.push(detections, small(frame), frame_size=(w, h))


def tile_height(d) -> float:
    return float(np.median(np.linalg.norm(d.corners[:, 3] - d.corners[:, 0], axis=1)))


@pytest.mark.parametrize("commit", [False, True], ids=["laid this turn", "accepted table"])
def test_a_hand_held_still_over_tiles_changes_nothing(table_photos, tile_reader, commit):
    from vision.game.turn import judge_turn

    rng = np.random.default_rng(11)
    for photo in table_photos if not commit else table_photos[1:2]:
        image = photo.read()
        h, w = image.shape[:2]
        tracker, update = settled(tile_reader, image, rng, commit=commit)
        before, ids = update.stable, update.ids
        size = tile_height(before)
        # The palm over the middle tile, fingers over the tiles above it, the forearm
        # over those below it down to the photo's edge; held still for 10 frames.
        centre = before.centers[len(before) // 2]
        with_hand = _hand(image.astype(np.float32), (centre[0], centre[1] + 0.3 * size),
                          0.9 * size, 1).astype(np.uint8)
        updates = []
        for _k in range(10):
            seen, update = push(tracker, tile_reader, with_hand, rng)
            updates.append(update)
            assert not update.changed, (photo.key, update.changes)
            assert update.ids == ids
        assert len(seen) < len(before)  # the hand does hide tiles from the camera
        assert sum(u.still for u in updates) >= 8  # and it rests: the frames are still
        hidden, covered = updates[-1].hidden, updates[-1].covered
        assert len(hidden) >= 2 and covered and set(covered) <= set(hidden), photo.key
        # A turn judged now: the hidden tiles are still on the table, said so.
        during = updates[-1].stable
        turn = judge_turn(before, during, hidden=hidden, frames=((w, h), (w, h)))
        assert turn.left == [] and turn.played == []
        assert not any("left the table" in p for p in turn.verdict.problems)
        assert any(f"{len(hidden)} tiles hidden under something" in c for c in turn.check)
        # Judged on the hand frame's own reading, the same turn would accuse the player.
        single = judge_turn(before, seen, frames=((w, h), (w, h)))
        assert single.left and any("left the table" in p for p in single.verdict.problems)
        # The hand goes: every tile is seen again, none ever left.
        for _k in range(4):
            _seen, update = push(tracker, tile_reader, image, rng)
            assert not any("left" in c for c in update.changes), (photo.key, update.changes)
        assert set(ids) <= set(update.ids) and update.hidden == []


def test_a_tile_taken_away_leaves_the_table_surface_and_the_table(table_photos, tile_reader):
    """The other side of the rule: where the table shows through, the tile is gone."""
    from vision.game import occlusion

    rng = np.random.default_rng(12)
    image = table_photos[1].read()
    h, w = image.shape[:2]
    tracker, update = settled(tile_reader, image, rng)
    before = update.stable
    # The tile with the most bare table around it, taken away: its place painted over by
    # the table around it (OpenCV's inpainting).
    s = small(image)
    to_small = np.array([s.shape[1] / w, s.shape[0] / h])
    every = occlusion.tiles_mask(s.shape, [q * to_small for q in before.corners])
    bare = []
    for q in before.corners:
        ring = cv2.dilate(occlusion._mask(s.shape, q * to_small).astype(np.uint8),
                          np.ones((7, 7), np.uint8)).astype(bool)
        bare.append(float((ring & ~every).sum()))
    gone = int(np.argmax(bare))
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, np.round(before.corners[gone]).astype(np.int32), 255)
    mask = cv2.dilate(mask, np.ones((15, 15), np.uint8))
    taken = cv2.inpaint(image, mask, 7, cv2.INPAINT_TELEA)
    updates = [push(tracker, tile_reader, taken, rng)[1] for _ in range(8)]
    left = [k for k, u in enumerate(updates) if u.changed]
    assert left and left[0] >= tracker.leave_after - 1  # not at once: it must hold
    assert any("the table shows where it lay" in c for c in updates[left[0]].changes)
    assert sorted(updates[-1].stable.codes) == sorted(
        c for i, c in enumerate(before.codes) if i != gone)


def test_blurred_frames_change_nothing(table_photos, tile_reader):
    """2.5 s of frames blurred by a moving phone (3 a second), alike from one to the next:
    not still, so the tiles they miss never leave the table."""
    rng = np.random.default_rng(13)
    image = table_photos[0].read()
    tracker, update = settled(tile_reader, image, rng)
    ids = update.ids
    streak = np.full((1, 25), 1 / 25, np.float32)  # 25 px of motion blur
    smeared = cv2.filter2D(image, -1, streak)
    missed = []
    for _ in range(8):
        seen, update = push(tracker, tile_reader, smeared, rng)
        missed.append(len(ids) - len(seen))
        assert update.blurred and not update.still and not update.changed
    assert max(missed) >= 5  # the blur does hide tiles from the detector
    back = [push(tracker, tile_reader, image, rng)[1] for _ in range(3)]
    # The frame the tiles come back in churns; then the sharp frames are still again.
    assert [u.still for u in back] == [False, True, True]
    assert not any(u.blurred or u.changed for u in back) and back[-1].ids == ids


def test_a_turn_with_a_hand_in_the_photo_after_takes_nothing_away(table_photos, tile_reader,
                                                                   tmp_path, capsys):
    """Two photos, the second with a hand over tiles: the turn check calls them hidden,
    not "left the table", and names them; `rummikub turn` does not judge such a photo at
    all: it asks for it again without the hand (vision.game.cover)."""
    from app.cli import main
    from app.cli.game import _small_picture
    from vision.game.cover import WORDS
    from vision.game.turn import judge_turn
    from vision.recognition.decode import Photo

    image = table_photos[0].read()
    found = tile_reader.read(image)
    size = tile_height(found)
    centre = found.centers[len(found) // 2]
    with_hand = _hand(image.astype(np.float32), (centre[0], centre[1] + 0.3 * size),
                      0.9 * size, 1).astype(np.uint8)
    before, after = tmp_path / "before.png", tmp_path / "after.png"
    cv2.imwrite(str(before), image)
    cv2.imwrite(str(after), with_hand)
    # The tiles alone say several left the table: the hand hides them.
    seen = tile_reader.read(with_hand)
    alone = judge_turn(found, seen)
    assert len(alone.left) >= 3
    # With the pictures (as the command gives them) they are hidden, not gone.
    pictures = tuple(_small_picture(Photo.from_file(p)) for p in (before, after))
    frame = (image.shape[1], image.shape[0])
    turn = judge_turn(found, seen, frames=(frame, frame), pictures=pictures)
    out = turn.to_json()
    assert out["left_table"] == [] and out["played"] == []
    assert not any("left the table" in p for p in out["problems"])
    assert len(out["hidden_after"]) == len(alone.left)
    assert any("not found after, where something lies over their place" in c
               for c in out["check"])
    # The command: refused in one line, exit 2, nothing judged.
    assert main(["turn", str(before), str(after), "--json"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and WORDS in said.err and len(said.err.strip().splitlines()) == 1


def test_rummikub_turn_still_sees_a_tile_taken_away(table_photos, tile_reader, tmp_path, capsys):
    """The other side: a tile taken off between the photos (its place inpainted from the
    table around it) left the table, hand or no hand elsewhere."""
    import json

    from app.cli import main

    image = table_photos[1].read()
    found = tile_reader.read(image)
    # The tile with the most bare table around it (as in the tracker's test above).
    lone = int(np.argmax([min(float(np.linalg.norm(c - o)) for k, o in
                              enumerate(found.centers) if k != i)
                          for i, c in enumerate(found.centers)]))
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(found.corners[lone]).astype(np.int32), 255)
    taken = cv2.inpaint(image, cv2.dilate(mask, np.ones((15, 15), np.uint8)), 7,
                        cv2.INPAINT_TELEA)
    before, after = tmp_path / "before.png", tmp_path / "after.png"
    cv2.imwrite(str(before), image)
    cv2.imwrite(str(after), taken)
    main(["turn", str(before), str(after), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert [t["code"] for t in out["left_table"]] == [found.codes[lone]]
    assert out["hidden_after"] == []


@pytest.mark.parametrize("key, tone", [("rummy4-93", 0), ("rummy4-93", 4), ("rummy-11", 3),
                                       ("rummy-34", 3), ("rummy-36", 4)])
def test_a_palm_moving_over_tiles_and_resting_changes_nothing(real_photos_dir, tile_reader,
                                                              key, tone):
    """A palm reaching for a tile, moving on to the two nearest it and resting there, as
    `bench.eval_moving_hands` films it at the server's settings. Where skin and table are
    alike (or a cream tile lies on a cream cloth) some places under the palm look bare or
    cannot tell: they lie under the same palm as a covered neighbour, so they stay
    (`vision.game.places.spread_cover`). Without that rule each of the first three lost a
    tile; the last two, palms the colour of the wood, lost two until a place with the
    table's colour but none of its grain was judged covered (`occlusion.SMOOTHER`)."""
    from bench.eval_moving_hands import film
    from tests.tracker_helpers import valid_photos
    from training.real_data import load_split

    keys = [p.key for p in load_split("valid", real_photos_dir) if p.tiles]
    labelled = valid_photos(real_photos_dir, (key,))[0]
    seed = 39_000 + 10 * keys.index(key) + tone  # the bench's own pass of this photo
    result = film(tile_reader, labelled, labelled.read(), tone, seed)
    assert result["settled"]
    assert [c for c in result["changes"] if c["phase"] == "hand"] == [], result["changes"]
    assert result["left"] == [] and not result["ends_worse"], result


@pytest.mark.parametrize("key, tone, why", [
    ("rummy3-29", 5, "a joker found on the resting palm"),
    ("rummy3-7", 2, "the palm's sweep over a close-up taken for the camera's move"),
    ("rummy-36", 0, "a faint find read K8, K9, K10 joining while the runs were short"),
    ("rummy3-33", 0, "a find that had flickered before the hand, three frames after it"),
    ("rummy-34", 0, "a knot in the wood beside the palm that had flickered before it")])
def test_what_a_resting_palm_brings_never_joins_the_table(real_photos_dir, tile_reader, key,
                                                          tone, why):
    """Five passes of `bench.eval_moving_hands` that each added a tile nobody laid: a find
    on the palm (something not the table lies around it: `places.on_table`), every track
    carried two tile heights off by a hand's sweep (the tiles still found where they lay
    deny it: `tracks._denied`), a find read otherwise from frame to frame (it holds twice
    as long: `tracker.TORN_HOLD`); and two that had come and gone while nothing moved
    before the hand (their places are remembered: a find there holds the whole window)."""
    from bench.eval_moving_hands import film
    from tests.tracker_helpers import valid_photos
    from training.real_data import load_split

    keys = [p.key for p in load_split("valid", real_photos_dir) if p.tiles]
    labelled = valid_photos(real_photos_dir, (key,))[0]
    result = film(tile_reader, labelled, labelled.read(), tone, 39_000 + 10 * keys.index(key)
                  + tone)
    assert result["settled"]
    assert result["false_changes"] == 0 and not result["ends_worse"], (why, result["changes"])


@pytest.mark.parametrize("key, code, tone", [("rummy-34", "B1", 3), ("rummy-34", "R1", 4),
                                            ("rummy-36", "K2", 4)])
def test_a_place_the_tables_colour_but_smooth_is_covered_and_bare_wood_is_the_table(
        valid_by_key, tile_reader, monkeypatch, key, code, tone):
    """A palm the colour of the wood (the tones `bench.eval_moving_hands` lost tiles to on
    these photos) looks bare by colour, but it has none of the wood's grain: its place is
    covered. The same place showing the real wood (a bare stretch of the photo's own table
    moved there, as a tile taken away uncovers it) is the table."""
    from bench.eval_occlusion import table_moved_over
    from bench.hands import paint
    from vision.game import occlusion

    image = valid_by_key[key].read()
    h, w = image.shape[:2]
    found = tile_reader.read(image)
    quads = found.corners.astype(np.float32)
    i = found.codes.index(code)
    s = small(image)
    to_small = np.array([s.shape[1] / w, s.shape[0] / h], np.float32)
    every = occlusion.tiles_mask(s.shape, quads * to_small)
    tall = float(np.median(np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1)))
    look = occlusion.look_of(s, quads[i] * to_small, every)
    assert look is not None and look.grain >= occlusion.GRAIN_MIN  # the wood has grain
    others = occlusion.tiles_mask(s.shape, np.delete(quads, i, axis=0) * to_small)
    place = quads[i] * to_small

    # under the palm: by colour alone the table, by its grain a hand
    hand = small(paint(image, quads[i], tall, "palm", np.random.default_rng(0),
                       tone=tone).image)
    assert occlusion.place_state(hand, place, look, others) == occlusion.COVERED
    monkeypatch.setattr(occlusion, "SMOOTHER", 0.0)
    assert occlusion.place_state(hand, place, look, others) == occlusion.SURFACE
    monkeypatch.undo()

    # taken away: the nearest bare wood moved over its place (the photo's own grain)
    taken = table_moved_over(image, quads, i)
    assert taken is not None
    assert occlusion.place_state(small(taken), place, look, others) == occlusion.SURFACE
