"""One game's live table: its frame slot and counters (`GameFrames`), and the reading of
its newest frame into it (`LiveReader`, in a reader thread of `app.server.frames.FrameHub`).

A frame is decoded within the server's decode memory; a frame showing the table as the
last read one did is not read by the models again (`app.server.still`); the tracker votes
over the frames and says when the table changed and held still; only then is the reading
stored with its frame and made the game's latest table (the referee never judges a single
frame). The live message draws the stored reading's tiles where this frame shows them and
names those it does not show (under a hand). A new tracker may start from the table
stored last (`app.server.reconnect`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field

import numpy as np

from app.server.games import GameError, GameService
from app.server.hiddenshare import HiddenShare
from app.server.limits import DecodeBudget, ServerBusy, TooMuchToDecode
from app.server.messages import unfit_message
from app.server.reconnect import same_view, stored_table
from app.server.still import same_table, still_picture, still_pushes
from app.server.uploads import check_photo, decode_bytes, sniff_type
from vision.recognition import quality
from vision.recognition.decode import Photo, PhotoError
from vision.recognition.pipeline import detection_reduction

log = logging.getLogger("rummikub.server")

GRAY_WIDTH = 160  # the small picture the tracker measures stillness and camera moves on


def make_tracker(rules, hold: int = 3, hold_s: float | None = None):
    """A live tracker for one game's camera, with the game's rules as priors; its frames'
    clock is their arrival here (`Frame.received`)."""
    from vision.game.tracker import TableTracker

    return TableTracker(rules=rules, hold=hold, hold_s=hold_s)


@dataclass
class Frame:
    data: bytes
    received: float
    source: object | None = None  # the live socket that sent it, to answer it
    seq: int | None = None
    camera_epoch: int = 0  # which camera of the game sent it (GameFrames.camera_epoch)


@dataclass
class GameFrames:
    game_id: str
    tracker: object
    slot: Frame | None = None
    busy: bool = False  # a reader thread is on this game's frame
    served_at: float = 0.0  # when a reader last started on it: the longest waiting goes first
    lock: threading.Lock = field(default_factory=threading.Lock)  # the tracker
    slot_lock: threading.Lock = field(default_factory=threading.Lock)  # the slot, briefly
    received: int = 0
    read: int = 0
    dropped: int = 0
    bad: int = 0
    refused: int = 0  # frames too blurred, dark or overexposed to read: never the table
    changes: int = 0
    last_read_ms: float = 0.0
    still: int = 0  # frames that matched the last read one: not read by the models
    still_ref: np.ndarray | None = None  # the last read frame's still picture
    last_read: tuple | None = None  # its (detections, grey picture, tiles as JSON)
    still_run: int = 0  # still frames since the last read one
    latest: tuple = (0, None)  # (changes of the game seen, its latest reading kept)
    last_update: object = None  # the tracker's answer to the last frame it was given
    subscribers: set = field(default_factory=set)
    last_used: float = field(default_factory=time.monotonic)  # last frame or socket
    finished: bool = False  # the game is over: no more frames will count
    takeovers: int = 0  # times the game's camera changed to another camera
    hidden_writes: int = 0  # times its hidden tiles were stored (a hand came, moved or went)
    camera_epoch: int = 0  # counts those changes: a frame of an earlier camera is not tracked
    camera: object = None  # who holds the camera: a camera id, or a socket's queue
    camera_queue: object = None  # where that camera hears it was taken over
    camera_seen: float = 0.0  # when it last sent a frame (monotonic)
    replaced: dict = field(default_factory=dict)  # cameras taken over, oldest first
    # The view the tracker's pixels are in: new with each camera (and each new tracker),
    # unique across restarts, so a correction is applied by pixel only in its own view.
    view: str = field(default_factory=lambda: f"camera:{uuid.uuid4().hex}")
    # The reading this camera's tracker stored last: its photo, the track id of each of its
    # tiles and their centres then. The camera may move after it (a bumped phone): the live
    # messages show its tiles where the tracker sees them now, and a tap on one corrects it.
    live: dict | None = None
    # (photo id, reading id, its tiles the latest frame did not show)
    hidden_now: tuple = (None, None, [])
    seen: tuple | None = None  # the game as last seen here (`FrameHub._marks`)
    # (tracker update, stored reading, their realigned reading and hidden tiles): a still
    # table's frames reuse one update, and its realigned reading with it
    realigned: tuple | None = None
    told_others: tuple | None = None  # (reading, hidden, stable) last sent to the others
    # The tracker is new and has seen no frame: the first one may start it from the
    # table stored last (`app.server.reconnect`), once.
    seed_due: bool = True


class LiveReader:
    """Reads a game's newest frame into its live table; shared by the hub's readers."""

    def __init__(self, service: GameService, reader, budget: DecodeBudget):
        self.service = service
        self.reader = reader
        self.budget = budget  # the server's memory for decoded pixels, with the uploads'
        self.hidden_share = HiddenShare(service.storage)  # for the other processes

    def process_latest(self, gf: GameFrames, box: list[Frame]) -> dict | None:
        """In a pool thread: decode, read, track the newest frame; store the table when it
        changed and held. The frame taken is put in `box` for the caller."""

        with gf.slot_lock:
            frame, gf.slot = gf.slot, None
        if frame is None:
            return None
        box.append(frame)
        start = time.perf_counter()
        # The uploads' limits (a phone may stream its full 50 MP); its decode waits for
        # room in the server's decode memory like an upload's.
        photo = check_photo(frame.data)
        try:
            held = self.budget.acquire(decode_bytes(photo))
        except (TooMuchToDecode, ServerBusy) as error:
            raise PhotoError(str(error)) from None
        try:
            return self._read_frame(gf, frame, photo, start)
        finally:
            self.budget.release(held)

    def _read_frame(self, gf: GameFrames, frame: Frame, photo: Photo, start: float
                    ) -> dict | None:
        import cv2

        # A frame showing the table as the last read one did is not read again: its tiles
        # are those (the tracker still counts it, so a change holds as before).
        picture = still_picture(photo)
        still = (gf.last_read is not None and gf.still_ref is not None
                 and frame.camera_epoch == gf.camera_epoch
                 and same_table(picture, gf.still_ref))
        if still:
            detections, small, tiles, unfit = gf.last_read
        else:
            # Only as much of the frame is decoded as the reader needs; the tracker's grey
            # picture comes from the detector's decode, which the reader has just made.
            detector = getattr(self.reader, "detector", None)
            image = photo.reduced(detection_reduction(photo, detector))
            detections = self.reader.read(photo)
            unfit = quality.check(photo, detections).problems()
            # In colour: what a hidden tile's place shows (a hand, or the table) is told
            # by hue.
            scale = GRAY_WIDTH / max(1, image.shape[1])
            small = cv2.resize(image, (GRAY_WIDTH, max(1, int(round(image.shape[0] * scale)))),
                               interpolation=cv2.INTER_AREA)
            tiles = detections.to_json()
            gf.still_ref, gf.last_read = picture, (detections, small, tiles, unfit)
        with gf.lock:
            if frame.camera_epoch != gf.camera_epoch:
                # Sent by a camera that has since been replaced: not the table's view now.
                with gf.slot_lock:
                    gf.dropped += 1
                return None
            if gf.seed_due:
                gf.seed_due = False
                self._seed(gf, detections, photo)
            if still and gf.still_run > still_pushes(gf.tracker) and gf.last_update:
                # The tracker has seen this table in every frame it votes over: one more
                # of the same changes nothing it says, so it is not asked (a still table
                # then costs the small decode and the answer).
                update = gf.last_update
            else:
                update = gf.tracker.push(detections, gray_small=small, t=frame.received,
                                         unfit=unfit,
                                         frame_size=(int(photo.width), int(photo.height)))
            gf.still_run = gf.still_run + 1 if still else 0
            gf.last_update = update
            view = gf.view
        if update.refused:
            gf.refused += 1
            gf.last_read_ms = (time.perf_counter() - start) * 1000
            return {"type": "refused", "detail": quality.unfit_words(update.refused),
                    "message_id": unfit_message(update.refused).json(),
                    "problems": update.refused, "reading": self.latest(gf.game_id),
                    "frame": {"seq": frame.seq, "refused": gf.refused,
                              "read_ms": round(gf.last_read_ms, 1), "dropped": gf.dropped}}
        stored = None
        if update.changed and update.stable is not None:
            carried: list[dict] = []
            stored = self.service.store_reading(gf.game_id, update.stable, photo.width,
                                                photo.height, frame.data, "frame",
                                                sniff_type(frame.data), view=view,
                                                carried=carried)
            gf.changes += 1
            gf.live = {"photo_id": stored.get("photo_id"), "ids": list(update.ids),
                       "centres": update.stable.centers.astype(float).tolist(),
                       "corners": update.stable.corners.astype(float)}
            # A correction made with an earlier camera, carried over into this camera's
            # view: the tracker holds it as one made here, so it follows its tile as this
            # camera shakes, and the live table names it as the stored one does.
            for c in carried:
                self.correct(gf, (c["x"], c["y"]), c["code"], view)
        gf.read += 1  # every frame taken, still or not: `still` says how many matched
        gf.still += int(still)
        gf.last_read_ms = (time.perf_counter() - start) * 1000
        reading = stored
        if reading is None:
            # The game's latest reading, kept between frames until the game changes (a
            # still table's every frame would read and parse it from the database again).
            version, cached = gf.latest
            reading = cached if cached is not None else self.latest(gf.game_id)
            with gf.slot_lock:
                if gf.latest[0] == version:
                    gf.latest = (version, reading)
        cached = gf.realigned
        if cached is not None and cached[0] is update and cached[1] is reading:
            reading, hidden = cached[2], cached[3]
        else:
            stored_reading = reading
            reading, hidden = self.realigned(gf, reading, update)
            gf.realigned = (update, stored_reading, reading, hidden)
        gf.hidden_now = ((reading.get("photo_id"), reading.get("reading_id"), hidden) if reading
                         else (None, None, []))
        gf.hidden_writes += int(self.hidden_share.tell(gf.game_id, reading, hidden))
        return {
            "type": "reading",
            "reading": reading,
            "hidden": hidden,
            "stable": bool(update.still) and update.stable is not None,
            "changed": stored is not None,
            "frame": {"seq": frame.seq, "width": int(photo.width),
                      "height": int(photo.height), "tiles": tiles,
                      "read_ms": round(gf.last_read_ms, 1), "dropped": gf.dropped,
                      "still": still},
        }

    def _seed(self, gf: GameFrames, detections, photo: Photo) -> None:
        """Under `gf.lock`, before a new tracker takes its first frame: a camera coming
        back (its phone reconnected here from a process that died) starts from the table
        stored last, when this frame shows that very view (`app.server.reconnect`)."""
        stored = stored_table(self.service, gf.game_id, self.reader, GRAY_WIDTH)
        if stored is None:
            return
        size = (int(photo.width), int(photo.height))
        if ((stored.reading.get("width"), stored.reading.get("height")) != size
                or not same_view(stored.detections, detections)):
            return
        ids = gf.tracker.seed(stored.detections, stored.committed, picture=stored.picture,
                              frame_size=size)
        # Its view is the stored reading's: the corrections made in it apply by pixel, and
        # the live messages draw that reading's tiles where this camera sees them.
        gf.view = stored.reading["view"]
        gf.live = {"photo_id": stored.reading.get("photo_id"), "ids": ids,
                   "centres": stored.detections.centers.astype(float).tolist(),
                   "corners": stored.detections.corners.astype(float)}
        for c in stored.corrections:
            try:
                gf.tracker.correct((c["x"], c["y"]), c["code"])
            except ValueError:
                pass  # no tile there any more: the stored correction still applies
        log.info("game %s: the camera's tracker starts from reading %s (%d tiles)",
                 gf.game_id, stored.reading["reading_id"], len(ids))

    @staticmethod
    def realigned(gf: GameFrames, reading: dict | None, update) -> tuple[dict | None, list]:
        """The stored reading with its tiles where this frame shows them (the tracker carries
        them as the camera moves), and the ids of its tiles the frame does not show (under a
        hand, or out of the view). Only a reading this camera's tracker stored (or a
        correction of it: the same photo) can be: another one's tiles are no tracks."""
        live = gf.live
        if (reading is None or live is None or update.stable is None
                or reading.get("photo_id") != live["photo_id"]
                or len(reading.get("tiles", ())) != len(live["ids"])):
            return reading, []
        now = {tid: k for k, tid in enumerate(update.ids)}
        unseen = {update.ids[k] for k in update.hidden}
        corners = update.stable.corners.astype(float)
        turns = _turns(live, reading["tiles"])
        tiles = []
        for k, (tile, tid) in enumerate(zip(reading["tiles"], live["ids"], strict=True)):
            if tid in now:
                # The reading may have turned a tile's corners round (a tile upside down):
                # the same turn, on its corners now.
                order = (np.arange(4) - turns[k]) % 4
                tile = {**tile, "corners": [[round(x, 1), round(y, 1)] for x, y
                                            in corners[now[tid]][order].tolist()]}
            tiles.append(tile)
        hidden = [k for k, tid in enumerate(live["ids"]) if tid in unseen]
        return {**reading, "tiles": tiles}, hidden

    def latest(self, game_id: str) -> dict | None:
        try:
            return self.service.latest_reading(game_id)
        except GameError:
            return None

    def correct(self, gf: GameFrames, point_xy: tuple[float, float], code: str,
                view: str | None = None) -> None:
        """The tracker holds a correction made on its own camera's reading; `point_xy` in
        another view (a photo, a camera since taken over) is not a place in its pixels."""
        if view == gf.view:
            with gf.lock:
                point_xy = self._now_at(gf, point_xy)
                try:
                    gf.tracker.correct(point_xy, code)
                except ValueError:
                    # The camera has not seen that place (photo mode): the correction
                    # stored with the game still applies to every reading.
                    pass

    @staticmethod
    def _now_at(gf: GameFrames, point_xy) -> tuple[float, float]:
        """A tile's centre in the stored reading -> where the tracker sees that tile now."""
        live = gf.live
        if not live or not live["centres"]:
            return point_xy
        d = [(x - point_xy[0]) ** 2 + (y - point_xy[1]) ** 2 for x, y in live["centres"]]
        k = min(range(len(d)), key=d.__getitem__)
        if d[k] > 1.0:  # not the centre of one of its tiles
            return point_xy
        place = gf.tracker.place_of(live["ids"][k])
        return point_xy if place is None else place


def _turns(live: dict, tiles: list) -> np.ndarray:
    """Per tile of the stored reading, how far round (0-3 corners) its drawn corners lie
    from the tracker's when it was stored; worked out once per reading (`live` keeps it)."""
    kept = live.get("turns")
    if kept is not None and kept[0] is tiles:
        return kept[1]
    then = np.asarray(live["corners"], float).reshape(-1, 4, 2)
    drawn = np.array([tile["corners"] for tile in tiles], float).reshape(-1, 4, 2)
    errors = np.stack([np.abs(np.roll(then, r, axis=1) - drawn).sum(axis=(1, 2))
                       for r in range(4)])
    turns = np.argmin(errors, axis=0) if len(tiles) else np.zeros(0, int)
    live["turns"] = (tiles, turns)
    return turns
