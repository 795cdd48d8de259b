"""The live table: tile readings voted over a camera's recent frames.

One frame is not a reading of the table: a hand passes over it, a tile is missed or misread
for a frame, the camera shakes. `TableTracker` keeps a *track* per place on the table and
turns the frames into a *stable* table that changes only when a change has held:

1. Frames are aligned first. The camera's move since the previous frame is estimated on
   the small grey pictures (`vision.game.camera_motion`: ORB + RANSAC, refined by ECC) and every
   track, seen or hidden, follows it on that very frame: a bumped phone is no change of the
   table (unless the frame's tiles deny the move, found still where they lay: a hand
   sweeping over a close-up drags the small picture's move along, `tracks._denied`).
   On still frames the tiles read alike in this frame and in the tracks' last places
   then give a finer similarity transform (RANSAC, as `vision.game.turn` does between two photos).
   A frame in which the camera moved by more than `CAMERA_STEP` tile heights is not still.
2. A detection belongs to the track whose place is nearest, within `MATCH_RADIUS` of the
   two tiles' heights; a detection with no track starts one. (The tracks and these two
   steps: `vision.game.tracks`; what a missed tile's place shows: `vision.game.places`;
   the edition's copies: `vision.game.copies`; this module decides what they mean.)
3. A frame is *still* when the scene did not move: the downscaled grey frame differs from
   the previous one (after removing the camera's move) in less than `motion_max` of its
   pixels, few tracks came or went since the previous frame (`churn`), and it is not
   blurred (its sharpness is at least `BLURRED_BELOW` of the recent still frames'). Hands
   over the table move; tiles lying on it do not; a blurred frame misses tiles.
4. Changes are decided only over the run of still frames that ends with this frame (at
   most `window` of them), and only once that run *held*: `hold` frames long, or (with
   `hold_s`) at least `min_hold` frames spanning `hold_s` seconds of the frames' times:
   - a new tile joins the stable table when it was seen in every still frame since it
     was first found, and those frames held:
     tiles do not come and go while nothing moves, false finds do; its
     reading is the mean of its class probabilities there. A find read otherwise in some
     of those frames holds `TORN_HOLD` times as long (a knot in the wood reads K10, K9,
     J; a tile reads alike), and a find with something other than the table around it
     (`places.on_table`: a resting hand) waits until the table shows around it again.
     A find that came and went while nothing moved is no tile, and its place is kept
     (`gone_after` frames): a find there later must hold the whole `window`, as the
     detector takes a knot in the wood now and then, three frames in a row by chance;
   - a tile's reading changes when, over the still frames of the window without a hand
     on the table, another reading was the best one in at least `hold` frames and twice
     as often as the tile's, and is twice as probable: a reading flickering for one frame
     never does, nor one a finger over half the number gave;
   - a tile laid since the last `commit()` leaves when it was missing from at least
     `leave_after` (2 x hold) frames of the run and from most of them: a hand resting on
     the table hides tiles for a moment too.
5. Hidden is not gone. When the frames come with a picture and the frame's size, a
   stable tile the frame misses is judged by what its place shows (`vision.game.occlusion`):
   it leaves only once the table's surface shows where it lay for `leave_after` still
   frames (twice that for a tile of the accepted table); under a hand, a sleeve, out of the
   view, or still looking like itself it stays, flagged (`TrackerUpdate.hidden`,
   `covered`), and a new find next to a covered tile waits until the thing has gone.
   Without pictures, time alone decides, as follows.
6. The rules are priors. A tile on the table at the last accepted turn (`commit()`) stays
   while hidden: it leaves only after `gone_after` still frames without it. A table tile
   that no frame of the run shows, when a new tile of its reading joins elsewhere, was
   moved there (by the turn, or its box shifted while a hand half hid it): the new find
   takes over its id, commitment and correction (the table changed: its sets may have). The stable table never holds
   more copies of a tile than the edition has: the copy the frames are least sure of is
   re-read as its next plausible reading, or kept out of the table until it is resolved.
7. A player's correction (`correct`) belongs to the track at that place: it follows the
   tile as it moves a little and overrides every later reading of it, for the game.

The referee never judges one frame: the server judges `update.stable`, which only moves
when the table really did.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence

import numpy as np

from vision.game import copies, places
from vision.game import tracks as T
from vision.game.occlusion import BARE, COVERED
from vision.game.stillness import SceneMeasure
from vision.game.tracks import Track, TrackerUpdate, table_of, vote
from vision.game.turn import _tile_size
from vision.recognition.detections import TileDetections

__all__ = ["TableTracker", "TrackerUpdate"]

CAMERA_STEP = 0.5  # the camera moved more than this (tile heights): the frame is not still
# A new find this close (tile heights) to a covered tile waits. Not as far as a hand
# reaches (places.SAME_COVER): a tile laid beside one kept hidden would wait for good.
NEAR_COVERED = 1.5
TORN_HOLD = 2  # times `hold`: a new find read otherwise in some of its frames waits that long


class TableTracker:
    """Votes each tile's reading over recent frames; see the module notes.

    `rules`: the edition (referee `Rules`, default the original). `hold`: still frames a
    change must hold for; `hold_s` (seconds of the frames' clock `t`, None: frames only):
    a run of at least `min_hold` still frames from first to last this long holds too (a
    camera sending 2 frames a second holds a change in 2 frames, 0.5 s, not 3; see
    docs/decisions/time-hold.md). `window`: frames a vote looks back over. `motion_max`: share of
    the grey frame that may change in a still frame. `churn_max`: share of the tracks that
    may come or go in a still frame (one always may). `gone_after`: still frames a
    committed tile must be missing before it counts as gone; `leave_after`: still frames a
    tile laid since must be missing before it leaves (default 2 x hold: a hand resting on
    the table for a moment hides tiles too).
    """

    def __init__(self, rules=None, hold: int = 3, window: int = 8, *,
                 motion_max: float = 0.01, churn_max: float = 0.1,
                 leave_after: int | None = None, gone_after: int | None = None,
                 hold_s: float | None = None, min_hold: int = 2) -> None:
        from referee import DEFAULT_RULES

        if hold < 1 or window < hold:
            raise ValueError(f"need 1 <= hold <= window, not hold={hold}, window={window}")
        if not 1 <= min_hold <= hold:
            raise ValueError(f"need 1 <= min_hold <= hold, not min_hold={min_hold}")
        if hold_s is not None and not hold_s >= 0:
            raise ValueError(f"hold_s is seconds, at least 0, not {hold_s!r}")
        self.rules = rules or DEFAULT_RULES
        self.hold = int(hold)
        self.hold_s = None if hold_s is None else float(hold_s)
        self.min_hold = int(min_hold)
        self.window = int(window)
        self.motion_max = float(motion_max)
        self.churn_max = float(churn_max)
        self.leave_after = int(leave_after) if leave_after is not None else min(2 * self.hold,
                                                                                  self.window)
        self.gone_after = int(gone_after) if gone_after is not None else 5 * self.window
        if not 1 <= self.leave_after <= self.window:
            raise ValueError(f"need 1 <= leave_after <= window, not {self.leave_after}")
        self.refused = 0  # frames refused as unfit to read (`push(unfit=...)`)
        self.reset()

    # -- public ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget everything: a new game, or the camera was moved to another table."""
        self._tracks: dict[int, Track] = {}
        self._next_id = 0
        self._frame = -1
        # (frame, still, its time t or None) of the last `window` frames
        self._frames: deque[tuple[int, bool, float | None]] = deque(maxlen=self.window)
        self._scene = SceneMeasure(self.motion_max, self.window)
        self._frame_size: tuple[int, int] | None = None  # (width, height) of the frames
        self._evidence = False  # whether this frame's picture tells what hidden places show
        self._labels: tuple[str, ...] | None = None
        self._size = 0.0
        self._prev_seen: set[int] = set()
        self._hand_frames: set[int] = set()  # frames with a stable tile covered (a hand)
        self._stable: TileDetections | None = None
        self._stable_key: tuple = ()
        self.stable_since: float | None = None

    def seed(self, detections: TileDetections, committed: Sequence[bool] | None = None, *,
             picture: np.ndarray | None = None,
             frame_size: tuple[int, int] | None = None) -> list[int]:
        """Start from a table read earlier in this camera's view (a phone reconnecting to
        another server process starts from the reading stored last): its tiles are the
        stable table at once, as if they had held; `committed[i]`: tile i lay on the table
        at the last accepted turn. `picture` (the small picture of the frame it was read
        from) and `frame_size` tell later frames what each tile's place looked like, so a
        tile under a hand from the first frame on is judged covered, not gone. Returns the
        track id of each tile."""
        self.reset()
        self._labels = tuple(detections.labels)
        self._size = _tile_size(detections) if len(detections) else 1.0
        if frame_size is not None:
            self._frame_size = (int(frame_size[0]), int(frame_size[1]))
        flags = list(committed) if committed is not None else [False] * len(detections)
        for i in range(len(detections)):
            tr = Track(self._next_id, detections.corners[i].astype(np.float64),
                       len(self._labels), code=int(detections.class_ids[i]),
                       probs=detections.class_probs[i].astype(np.float64),
                       committed=bool(flags[i]), score=float(detections.detector_scores[i]))
            self._tracks[tr.id] = tr
            self._next_id += 1
        if picture is not None and self._frame_size is not None:
            from vision.game import occlusion

            pic = occlusion.prepare(picture)
            to_small = np.array([pic.shape[1] / self._frame_size[0],
                                 pic.shape[0] / self._frame_size[1]])
            every = occlusion.tiles_mask(pic.shape, [tr.corners * to_small
                                                     for tr in self._tracks.values()])
            for tr in self._tracks.values():
                tr.look = occlusion.look_of(pic, tr.corners * to_small, every)
        self._stable = self._build_stable()
        self._stable_key = self._key()
        return [tr.id for tr in self._stable_tracks()]

    @property
    def stable(self) -> TileDetections | None:
        return self._stable

    def commit(self) -> None:
        """A turn was accepted: the stable table is now the table every later turn starts
        from. Its tiles stay while hidden."""
        for tr in self._tracks.values():
            tr.committed = tr.code is not None

    def place_of(self, track_id: int) -> tuple[float, float] | None:
        """Where the tile of `track_id` lies in the latest frame (None: no such track)."""
        tr = self._tracks.get(track_id)
        return None if tr is None else tuple(float(v) for v in tr.centre())

    def correct(self, point_xy, code: str) -> int:
        """A player says the tile at `point_xy` (latest frame's pixels) is `code`.

        Returns the track id it was attached to; raises ValueError when no tile lies there
        or the code is not a class the models know.
        """
        if self._labels is None:
            raise ValueError("no frame seen yet: nothing to correct")
        if code not in self._labels:
            raise ValueError(f"not a tile code: {code!r}")
        point = np.asarray(point_xy, np.float64).reshape(2)
        best, best_d = None, np.inf
        for tr in self._tracks.values():
            # Stable tiles first: a correction is of the table the player sees.
            d = np.linalg.norm(tr.centre() - point) / max(self._size, 1e-9)
            d += 0.0 if tr.code is not None else 0.25
            if d < best_d:
                best, best_d = tr, d
        if best is None or best_d > 0.75:
            raise ValueError(f"no tile at ({point[0]:.0f}, {point[1]:.0f})")
        best.correction = self._labels.index(code)
        if best.code is not None:
            self._stable = self._build_stable()
            self._stable_key = self._key()
        return best.id

    def push(self, detections: TileDetections, gray_small: np.ndarray | None = None,
             t: float | None = None, unfit: Sequence[str] = (),
             frame_size: tuple[int, int] | None = None) -> TrackerUpdate:
        """Add one frame's tiles, and its downscaled picture (grey or BGR) for the motion
        measure. `frame_size` = the frame's (width, height) in the detections' pixels: with
        it the camera's move found on the small picture carries every track along. A frame
        `unfit` to read (its problems, `vision.recognition.quality`) is counted in
        `refused` and changes nothing: it never becomes, nor moves, the stable table."""
        if unfit:
            self.refused += 1
            return TrackerUpdate(self._stable, False, False, self._frame, t, refused=list(unfit))
        self._frame += 1
        frame = self._frame
        if self._labels is None:
            self._labels = tuple(detections.labels)
        elif tuple(detections.labels) != self._labels:
            raise ValueError("detections use other class labels than the earlier frames")
        if len(detections):
            self._size = _tile_size(detections)
        elif not self._size:
            self._size = 1.0

        if frame_size is not None:
            self._frame_size = (int(frame_size[0]), int(frame_size[1]))
        scene = self._scene.measure(gray_small)
        camera = T.camera_move(self._tracks.values(), scene.move, gray_small, frame_size,
                               self._size, detections)
        motion, blurred = scene.motion, scene.blurred
        # The view swung (its frames may be blurred), or a blurred frame misses tiles:
        # nothing is decided on such a frame.
        moved = (scene.moved or blurred
                 or (camera is not None and camera["step"] > CAMERA_STEP))
        # While a hand moves over the table its finds (and the tiles it hides) would pull
        # the alignment off: the camera is followed on the frames that do not move.
        shift = (0.0, 0.0) if moved else T.align(list(self._tracks.values()), detections,
                                                        frame - self.window, self._size)
        seen_now, self._next_id = T.match(self._tracks, detections, frame, moved,
                                           self._next_id)
        churn = len(seen_now ^ self._prev_seen)
        union = len(seen_now | self._prev_seen)
        still = (not moved) and churn <= max(1, int(self.churn_max * union))
        if frame == 0:
            still = True
        self._prev_seen = seen_now
        self._frames.append((frame, still, None if t is None else float(t)))
        if still:
            self._scene.still(scene)

        run = self._still_run()
        for tr in self._tracks.values():
            if tr.last_seen == frame:
                tr.unseen_still = 0
            elif still:
                tr.unseen_still += 1
        self._evidence = places.judge(self._tracks.values(), gray_small, self._frame_size,
                                      frame, still, hold=self.hold, window=self.window)
        if any(tr.code is not None and tr.last_seen != frame and tr.state == COVERED
               for tr in self._tracks.values()):
            self._hand_frames.add(frame)
        self._hand_frames.difference_update([f for f in self._hand_frames
                                             if f <= frame - self.window])
        changes: list[str] = []
        held = self._held(run)
        if held:
            changes = self._decide(run)
        self._prune(frame)

        if self._stable is not None or held:
            # Rebuilt every frame: the tiles' corners follow the camera.
            self._stable = self._build_stable()
            key = self._key()
            changed = key != self._stable_key
            self._stable_key = key
        else:
            changed = False
        if changed:
            self.stable_since = t
        update = self._update(frame, t, still, changed, changes, motion, churn, len(run), shift)
        update.camera = camera
        update.blurred = blurred
        return update

    # -- steps -----------------------------------------------------------------------------
    def _held(self, run: list[int]) -> bool:
        """Whether a change may be decided on the still `run`: `hold` frames long, or at
        least `min_hold` frames spanning `hold_s` seconds of the frames' clock (a hand
        passing over the table between two frames of a slow camera breaks the run: the
        frame it moved in is not still)."""
        if len(run) >= self.hold:
            return True
        if self.hold_s is None or len(run) < self.min_hold:
            return False
        times = {f: t for f, _still, t in self._frames}
        first, last = times.get(run[0]), times.get(run[-1])
        return first is not None and last is not None and last - first >= self.hold_s

    def _still_run(self) -> list[int]:
        run = []
        for f, still, _t in reversed(self._frames):
            if not still:
                break
            run.append(f)
        return run[::-1]

    def _decide(self, run: list[int]) -> list[str]:
        labels = self._labels
        changes: list[str] = []
        n_run = len(run)
        added: list[Track] = []
        joined: dict[int, list[int]] = {}  # a tile laid now -> the still frames it was seen in
        by_time: list[tuple] = []  # finds held by time alone, in fewer than `hold` frames

        def join(tr: Track, mean: np.ndarray, since: list[int]) -> None:
            tr.flickered = False
            tr.code = int(np.argmax(mean))
            tr.probs = mean
            added.append(tr)
            joined[tr.id] = since
        reread: list[Track] = []
        held = Counter(self._code(tr) for tr in self._tracks.values() if tr.code is not None)
        still_window = [f for f, still, _t in self._frames if still]
        # Readings are voted over the frames without a hand on the table: a finger over
        # half a number reads another tile, and must not outvote it once it has gone.
        clear_window = [f for f in still_window if f not in self._hand_frames]
        # Something not a tile lies over these places (a hand resting): a find next to
        # them is likely on it, and waits until it has gone.
        covered = np.array([tr.centre() for tr in self._tracks.values()
                            if tr.code is not None and tr.state == COVERED]).reshape(-1, 2)
        for tr in list(self._tracks.values()):
            mean, k, best = vote(tr, run)
            missing = n_run - k
            if tr.code is None and places.near(covered, tr, NEAR_COVERED * self._size):
                continue
            if tr.code is None:
                # Seen in every still frame since it was first found, over a run that held:
                # a find that comes and goes while nothing moves (a box doubled on one
                # tile, a knot in the wood) is no tile. Counted from its first sighting: a
                # tile moved between two frames of a slow camera may leave the run still
                # (one tile is little of the picture), and must not wait for `window`;
                # but a find that came while nothing moved holds `hold` frames, not a time.
                first = next((f for f in run if f in tr.seen), None)
                since = [] if first is None else [f for f in run if f >= first]
                if since and k < len(since):
                    # Came and went while nothing moved: its place is remembered, and a
                    # find there joins only after holding the whole window (a knot in the
                    # wood the detector takes now and then: three frames in a row by chance).
                    tr.flickered = True
                if not (since and k == len(since) and self._held(since)):
                    continue
                if tr.flickered and len(since) < self.window:
                    continue
                if tr.off_table.intersection(since):
                    continue  # something not the table lay around it (a resting hand)
                # A find whose reading changes from frame to frame (a knot in the wood
                # read K10, K9, J) holds twice as long; a tile reads alike.
                if (len({tr.seen[f][3] for f in since}) > 1
                        and len(since) < TORN_HOLD * self.hold):
                    continue
                if len(since) >= self.hold:
                    join(tr, mean, since)
                elif first == run[0]:
                    by_time.append((tr, mean, since, len(best) == 1))
                continue
            # A reading is voted over every still frame of the window, not only this run:
            # the camera's view of a tile it is torn about differs a little after each
            # shake, and a verdict should not flip with it.
            mean, _k, best = vote(tr, clear_window)
            if mean is not None:
                tr.probs = mean
                top = int(np.argmax(mean))
                # A tile the camera is torn about keeps its reading: another one must be
                # the frames' best reading at least `hold` times and twice as often, in each
                # of the latest `hold` frames that saw the tile, twice as probable, and not
                # a tile the table already holds every copy of.
                # Nor while a hand lies on the table: a finger may hide half its number
                # (nor by the frames it lay there: `clear_window`).
                if (tr.correction is None and top != tr.code and best[top] >= self.hold
                        and not len(covered)
                        and best[top] >= 2 * best[tr.code] and mean[top] >= 2 * mean[tr.code]
                        and held[top] < copies.limit(self.rules, labels[top])
                        and T.latest_best(tr, clear_window, self.hold) == top):
                    held[tr.code] -= 1
                    held[top] += 1
                    changes.append(f"tile {tr.id} re-read {labels[tr.code]} -> {labels[top]}")
                    tr.code = top
                    reread.append(tr)
            if missing and places.out_of_view(tr, self._frame_size):
                continue  # the camera no longer shows its place: not gone, out of sight
            if missing and self._evidence and tr.state is not None:
                # Its place says: a tile is gone when the table shows where it lay (for
                # `leave_after` still frames; twice that for a tile of the accepted table),
                # and only then. Under a hand it is hidden, however long the hand rests.
                limit = self.leave_after * (2 if tr.committed else 1)
                if tr.state in BARE and tr.bare_still >= limit:
                    changes.append(f"tile {tr.id} ({labels[self._code(tr)]}) left: the table "
                                   f"shows where it lay")
                    self._leave(tr)
                continue
            if not tr.committed and missing >= self.leave_after and 2 * missing > n_run:
                changes.append(f"tile {tr.id} ({labels[self._code(tr)]}) left")
                self._leave(tr)
            elif tr.committed and tr.unseen_still >= self.gone_after:
                changes.append(f"tile {tr.id} ({labels[self._code(tr)]}) gone for "
                               f"{tr.unseen_still} still frames")
                self._leave(tr)
        # Finds held by time in fewer than `hold` frames join only when every one of them
        # read alike in each frame (two frames torn between J and B10 wait for a third), and
        # then all together: a change of the table is one change, not one now and the rest
        # a frame later.
        if by_time and all(agree for *_, agree in by_time):
            for tr, mean, since, _agree in by_time:
                join(tr, mean, since)
        # A table tile no frame has shown since a new find of its reading appeared
        # elsewhere was moved there: the new find is that tile (`tracks.moved_there`).
        changes.extend(T.moved_there(self._tracks, added, joined, labels, self._code))
        changes.extend(copies.enforce(self._tracks.values(), added, reread, labels,
                                      self.rules))
        for tr in added:
            if tr.code is not None:
                changes.append(f"tile {tr.id} ({labels[self._code(tr)]}) laid")
        return changes

    def _leave(self, tr: Track) -> None:
        tr.code = None
        tr.probs = None
        tr.committed = False

    def _code(self, tr: Track) -> int:
        return tr.correction if tr.correction is not None else tr.code

    def _prune(self, frame: int) -> None:
        # A find that flickered is remembered as long as a tile of the table that went
        # unseen (`gone_after`): it comes back by chance.
        for tid in [tid for tid, tr in self._tracks.items()
                    if tr.code is None and tr.last_seen < frame - (
                        self.gone_after if tr.flickered else self.window)]:
            del self._tracks[tid]
        cutoff = frame - self.window
        for tr in self._tracks.values():
            for f in [f for f in tr.seen if f <= cutoff]:
                del tr.seen[f]
            tr.off_table.difference_update([f for f in tr.off_table if f <= cutoff])

    def _stable_tracks(self) -> list[Track]:
        return sorted((tr for tr in self._tracks.values() if tr.code is not None),
                      key=lambda tr: tr.id)

    def _key(self) -> tuple:
        return tuple((tr.id, self._code(tr), tr.moves) for tr in self._stable_tracks())

    def _build_stable(self) -> TileDetections:
        return table_of(self._stable_tracks(), self._labels)

    def _update(self, frame, t, still, changed, changes, motion, churn, run_n, shift):
        tracks = self._stable_tracks()
        window = [f for f, _still, _t in self._frames]
        votes = np.array([sum(f in tr.seen for f in window) for tr in tracks], np.int64)
        hidden = [i for i, tr in enumerate(tracks) if tr.last_seen != frame]
        covered = [i for i in hidden if tracks[i].state == COVERED]
        pending = []
        for tr in self._tracks.values():
            if tr.code is None and tr.last_seen == frame:
                mean, k, _ = vote(tr, window)
                pending.append({"track": tr.id, "code": self._labels[int(np.argmax(mean))],
                                "frames": k, "corners": tr.corners.round(1).tolist()})
        return TrackerUpdate(self._stable, changed, still, frame, t, [tr.id for tr in tracks],
                             votes, hidden, covered, pending, changes, motion, churn, run_n,
                             shift)
