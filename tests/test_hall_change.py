"""The hall benches' change of a table is one a player makes and a camera sees: a tile moved
to a free place, its old place showing the table (`bench.hall_change`), on real valid/
photos; the live tracker holds such a move with nothing kept hidden, and a tile taken from
among other tiles leaves the stable table once its place shows the table."""

from __future__ import annotations

import numpy as np

from tests.tracker_helpers import noisy, small


def _found(det, centre, height) -> int | None:
    d = np.linalg.norm(det.centers - np.asarray(centre, np.float32), axis=1) / height
    return int(np.argmin(d)) if len(d) and d.min() < 0.35 else None


def _push(tracker, tile_reader, image, rng, t):
    h, w = image.shape[:2]
    frame = noisy(image, rng)
    return tracker.push(tile_reader.read(frame), small(frame), t=t, frame_size=(w, h))


def test_the_change_reads_as_a_move_on_the_still_photo(table_photos, tile_reader):
    from bench.hall_change import find_change

    rng = np.random.default_rng(3)
    changes = 0
    for photo in table_photos:
        image = photo.read()
        change = find_change(photo, image, tile_reader, rng)
        if change is None:
            continue
        changes += 1
        # As a camera sees it (noise): the tile at its new place, none at its old one.
        after = tile_reader.read(noisy(change.image, rng))
        k = _found(after, change.after, change.tile_height)
        assert k is not None and after.codes[k] == change.code, photo.key
        assert _found(after, change.before, change.tile_height) is None, photo.key
        # And the rest of the table reads as it did (without noise, which flips a torn
        # tile of 54 now and then).
        assert sorted(tile_reader.read(change.image).codes) == sorted(
            tile_reader.read(image).codes), photo.key
        step = np.hypot(*np.subtract(change.after, change.before)) / change.tile_height
        assert 1.0 <= step <= 4.0, (photo.key, step)
    assert changes == len(table_photos)  # each has free table around its tiles


def test_the_tracker_holds_the_move_and_keeps_nothing_hidden(table_photos, tile_reader):
    from bench.hall_change import find_change
    from vision.game.tracker import TableTracker

    rng = np.random.default_rng(4)
    for photo in table_photos:
        image = photo.read()
        change = find_change(photo, image, tile_reader, rng)
        tracker = TableTracker(hold_s=0.4)
        for k in range(3):
            update = _push(tracker, tile_reader, image, rng, 0.5 * k)
        assert update.stable is not None
        updates = [_push(tracker, tile_reader, change.image, rng, 1.5 + 0.5 * k)
                   for k in range(4)]
        changed = [k for k, u in enumerate(updates) if u.changed]
        assert changed and changed[0] <= 2, (photo.key, [u.changes for u in updates])
        last = updates[-1]
        k = _found(last.stable, change.after, change.tile_height)
        assert k is not None and last.stable.codes[k] == change.code, photo.key
        assert _found(last.stable, change.before, change.tile_height) is None, photo.key
        assert last.hidden == [], (photo.key, last.hidden)


def test_a_tile_taken_from_among_tiles_leaves_once_the_table_shows(table_photos, tile_reader):
    """The tracker's side of a take-away: the tile with the most tiles around it (its place
    filled with the table from a free spot, its neighbours untouched) leaves the stable
    table after the hold, and no tile is kept hidden."""
    from bench.hall_change import _mask, table_fill, tile_height
    from vision.game.tracker import TableTracker

    rng = np.random.default_rng(5)
    for photo in table_photos[:2]:
        image = photo.read()
        polygons = [t.polygon for t in photo.tiles]
        centres = np.array([p.mean(axis=0) for p in polygons])
        height = float(np.median([tile_height(p) for p in polygons]))
        crowd = [int(np.sum(np.linalg.norm(centres - c, axis=1) < 1.2 * height)) for c in centres]
        order = np.argsort(crowd)[::-1]
        taken = None
        for gone in order[:10]:
            occupied = np.zeros(image.shape[:2], bool)
            others = np.zeros(image.shape[:2], bool)
            for i, p in enumerate(polygons):
                occupied |= _mask(image.shape, p, max(2, round(0.12 * height)))
                if i != gone:
                    others |= _mask(image.shape, p)
            taken = table_fill(image, polygons[gone], occupied, height, others=others)
            if taken is not None:
                break
        assert taken is not None, photo.key
        assert crowd[gone] >= 3, (photo.key, crowd[gone])  # tiles right next to it
        tracker = TableTracker(hold_s=0.4)
        for k in range(3):
            update = _push(tracker, tile_reader, image, rng, 0.5 * k)
        before = update.stable
        j = _found(before, centres[gone], height)
        assert j is not None, photo.key
        updates = [_push(tracker, tile_reader, taken, rng, 1.5 + 0.5 * k) for k in range(10)]
        left = [k for k, u in enumerate(updates) if u.changed]
        assert left and left[0] >= tracker.leave_after - 1, (photo.key, left)  # it holds
        assert any("left" in c for c in updates[left[0]].changes), photo.key
        last = updates[-1]
        assert _found(last.stable, centres[gone], height) is None, photo.key
        assert len(last.stable) == len(before) - 1 and last.hidden == [], (
            photo.key, last.hidden, [u.changes for u in updates])
