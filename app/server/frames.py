"""Camera frames per game: a latest-wins slot, one worker, the live tracker.

A table's camera sends frames faster than a busy server may read them. Each game has ONE
slot: a new frame replaces a waiting one (counted as dropped), so nothing queues without
bound and the reading always follows the newest picture. One asyncio task per game hands
the game to a small thread pool shared by all tables (off the event loop); the pool thread
takes the newest frame only when it starts, runs the photo pipeline, and the game's
`vision.tracker.TableTracker` votes over recent frames and says when the table changed
and held still. Only then is the reading judged, stored with its frame and
made the game's latest table: the referee never judges a single frame.

One camera per game. Two phones filming the same table from two places would give the
tracker two alternating views, and it could take the difference for a change of the table.
So the camera that starts last takes the game's camera over: the camera that had it is
told so in words (and its later frames are refused with the same words) while the new one
streams; the tracker starts afresh from the new camera's view (a tile's place in one
camera's pixels is not its place in another's; so each camera is a new `view`, and a
player's correction made in an earlier one is carried over only by the tiles around it,
see `games.apply_corrections`). A camera that sent nothing for
`CAMERA_QUIET_S` holds nothing any more: a camera it took over may start again then.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from app.server.games import GameError, GameService
from app.server.uploads import open_photo, sniff_type
from vision.decode import PhotoError
from vision.pipeline import detection_reduction

GRAY_WIDTH = 160  # the small picture the tracker measures stillness and camera moves on
IDLE_S = 30 * 60.0  # a game's tracker is let go after this long without frames or sockets
# A camera streams 3 frames a second; one silent this long (closed, asleep, gone) no longer
# holds the game's camera.
CAMERA_QUIET_S = 10.0
CAMERA_TAKEN = ("Another phone took over the camera: a table is read by one camera at a "
                "time, so this phone's camera has stopped.")
COUNTERS = ("received", "read", "dropped", "bad", "changes", "takeovers", "last_read_ms")


class CameraTaken(GameError):
    """Frames from a camera that another camera took over while that one still streams."""

    status = 409


def make_tracker(rules, hold: int = 3):
    """A live tracker for one game's camera, with the game's rules as priors."""
    from vision.tracker import TableTracker

    return TableTracker(rules=rules, hold=hold)


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
    event: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)  # the tracker
    slot_lock: threading.Lock = field(default_factory=threading.Lock)  # the slot, briefly
    received: int = 0
    read: int = 0
    dropped: int = 0
    bad: int = 0
    changes: int = 0
    last_read_ms: float = 0.0
    subscribers: set = field(default_factory=set)
    last_used: float = field(default_factory=time.monotonic)  # last frame or socket
    finished: bool = False  # the game is over: no more frames will count
    takeovers: int = 0  # times the game's camera changed to another camera
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
    hidden_now: tuple = (None, [])  # (photo id, its tiles the latest frame did not show)


class FrameHub:
    """All games' frame slots and workers; lives as long as the app."""

    def __init__(self, service: GameService, reader, *, workers: int = 1, hold: int = 3,
                 idle_s: float = IDLE_S):
        self.service = service
        self.reader = reader
        self.hold = hold
        self.idle_s = idle_s
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="frames")
        self.games: dict[str, GameFrames] = {}
        # The counters of games whose tracker was let go (`sweep`): a game's frame counts
        # cover its whole time on this server, not only since its tracker was last made.
        self.kept: dict[str, dict] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        service.listeners.append(self._on_game_change)

    def _frames(self, game_id: str) -> GameFrames:
        gf = self.games.get(game_id)
        if gf is None:
            row = self.service.row(game_id)
            gf = GameFrames(game_id, make_tracker(self.service.rules(row), self.hold),
                            finished=row.state["phase"] == "finished")
            for name, value in self.kept.pop(game_id, {}).items():
                setattr(gf, name, value)
            self.games[game_id] = gf
        gf.last_used = time.monotonic()
        if gf.task is None or gf.task.done():
            gf.task = asyncio.get_running_loop().create_task(self._worker(gf))
        return gf

    # -- frames in -------------------------------------------------------------------------
    def put(self, game_id: str, data: bytes, source=None, seq: int | None = None,
            camera: object = None) -> GameFrames:
        """Hand a frame to the game's worker; a frame still waiting is dropped (latest wins).
        `camera` says which camera sent it (default: `source`, the socket); CameraTaken when
        another camera took this one over and still streams."""
        self.loop = asyncio.get_running_loop()
        gf = self._frames(game_id)
        self._claim(gf, source if camera is None else camera, source)
        with gf.slot_lock:
            gf.received += 1
            replaced, gf.slot = gf.slot, Frame(data, time.perf_counter(), source, seq,
                                               gf.camera_epoch)
            if replaced is not None:
                gf.dropped += 1
        if replaced is not None:
            self._tell(replaced.source, {"type": "dropped", "frame": replaced.seq,
                                         "dropped": gf.dropped})
        gf.event.set()
        return gf

    def _claim(self, gf: GameFrames, camera: object, queue) -> None:
        """On the event loop: `camera` sends a frame. The camera that starts last holds the
        game; the one it replaces is told, and refused while the new one streams."""
        if camera is None:
            return  # no camera named: nothing to hold
        now = time.monotonic()
        if camera == gf.camera:
            gf.camera_seen = now
            gf.camera_queue = queue if queue is not None else gf.camera_queue
            return
        streaming = gf.camera is not None and now - gf.camera_seen < CAMERA_QUIET_S
        if streaming and camera in gf.replaced:
            raise CameraTaken(CAMERA_TAKEN)
        if gf.camera is not None:
            # Told even when it was quiet: a phone whose page was in the background sends
            # nothing, and must not take the camera back unasked when it wakes.
            gf.replaced[gf.camera] = now
            while len(gf.replaced) > 16:  # only the last few matter
                del gf.replaced[next(iter(gf.replaced))]
            self._tell(gf.camera_queue, {"type": "camera-taken", "detail": CAMERA_TAKEN})
            gf.takeovers += 1
            # Another camera sees the table from another place: the tracks (places in the
            # old camera's pixels) go, and a frame of the old camera still waiting or being
            # read is not tracked (its epoch is an old one).
            with gf.lock:
                gf.camera_epoch += 1
                gf.tracker.reset()
                gf.live = None
                gf.view = f"camera:{uuid.uuid4().hex}"
        gf.replaced.pop(camera, None)
        gf.camera, gf.camera_queue, gf.camera_seen = camera, queue, now

    async def _worker(self, gf: GameFrames) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await gf.event.wait()
            gf.event.clear()
            if gf.slot is None:
                continue
            # The frame is taken when a pool thread starts on it, not before: a frame
            # arriving while this game waits for a thread still replaces the older one.
            box: list[Frame] = []
            try:
                message = await loop.run_in_executor(self.pool, self._process_latest, gf, box)
            except PhotoError as error:
                gf.bad += 1
                self._tell_error(box, f"bad frame: {error}")
                continue
            except GameError as error:
                self._tell_error(box, str(error))
                continue
            except Exception as error:  # a frame never takes the worker down
                gf.bad += 1
                self._tell_error(box, f"frame not read: {error}")
                continue
            if message is None:
                continue
            frame = box[0]
            message["frame"]["latency_ms"] = round((time.perf_counter() - frame.received)
                                                   * 1000, 1)
            for queue in list(gf.subscribers):
                offer(queue, message if queue is frame.source else
                       {**message, "frame": {**message["frame"], "seq": None}})

    def _tell_error(self, box: list[Frame], detail: str) -> None:
        if box:
            self._tell(box[0].source, {"type": "error", "detail": detail, "frame": box[0].seq})

    def _process_latest(self, gf: GameFrames, box: list[Frame]) -> dict | None:
        """In a pool thread: decode, read, track the newest frame; store the table when it
        changed and held. The frame taken is put in `box` for the caller."""
        import cv2

        with gf.slot_lock:
            frame, gf.slot = gf.slot, None
        if frame is None:
            return None
        box.append(frame)
        start = time.perf_counter()
        # Only as much of the frame is decoded as the reader needs; the stillness picture
        # comes from the detector's decode, which the reader has just made (and kept).
        detector = getattr(self.reader, "detector", None)
        photo = open_photo(frame.data, detector)
        detections = self.reader.read(photo)
        image = photo.reduced(detection_reduction(photo, detector))
        # In colour: what a hidden tile's place shows (a hand, or the table) is told by hue.
        scale = GRAY_WIDTH / max(1, image.shape[1])
        small = cv2.resize(image, (GRAY_WIDTH, max(1, int(round(image.shape[0] * scale)))),
                           interpolation=cv2.INTER_AREA)
        with gf.lock:
            if frame.camera_epoch != gf.camera_epoch:
                # Sent by a camera that has since been replaced: not the table's view now.
                with gf.slot_lock:
                    gf.dropped += 1
                return None
            update = gf.tracker.push(detections, gray_small=small, t=time.monotonic(),
                                     frame_size=(int(photo.width), int(photo.height)))
            view = gf.view
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
                self.correct(gf.game_id, (c["x"], c["y"]), c["code"], view)
        gf.read += 1
        gf.last_read_ms = (time.perf_counter() - start) * 1000
        reading = stored
        if reading is None:
            reading = self._latest(gf.game_id)
        reading, hidden = self._realigned(gf, reading, update)
        gf.hidden_now = (reading.get("photo_id") if reading else None, hidden)
        return {
            "type": "reading",
            "reading": reading,
            "hidden": hidden,
            "stable": bool(update.still) and update.stable is not None,
            "changed": stored is not None,
            "frame": {"seq": frame.seq, "width": int(photo.width),
                      "height": int(photo.height), "tiles": detections.to_json(),
                      "read_ms": round(gf.last_read_ms, 1), "dropped": gf.dropped},
        }

    @staticmethod
    def _realigned(gf: GameFrames, reading: dict | None, update) -> tuple[dict | None, list]:
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
        tiles = []
        for k, (tile, tid) in enumerate(zip(reading["tiles"], live["ids"], strict=True)):
            if tid in now:
                # The reading may have turned a tile's corners round (a tile upside down):
                # the same turn, on its corners now.
                then = live["corners"][k]
                drawn = np.asarray(tile["corners"], float)
                turn = min(range(4), key=lambda r: float(np.abs(np.roll(then, r, axis=0)
                                                                 - drawn).sum()))
                tile = {**tile, "corners": [[round(float(x), 1), round(float(y), 1)] for x, y
                                            in np.roll(corners[now[tid]], turn, axis=0)]}
            tiles.append(tile)
        hidden = [k for k, tid in enumerate(live["ids"]) if tid in unseen]
        return {**reading, "tiles": tiles}, hidden

    def _latest(self, game_id: str) -> dict | None:
        try:
            return self.service.latest_reading(game_id)
        except GameError:
            return None

    # -- answers out -----------------------------------------------------------------------
    def subscribe(self, game_id: str, queue: asyncio.Queue) -> None:
        self.loop = asyncio.get_running_loop()
        self._frames(game_id).subscribers.add(queue)

    def unsubscribe(self, game_id: str, queue: asyncio.Queue) -> None:
        gf = self.games.get(game_id)
        if gf is not None:
            gf.subscribers.discard(queue)
            gf.last_used = time.monotonic()

    def sweep(self, now: float | None = None) -> list[str]:
        """On the event loop: let go of the trackers and frame slots of finished games
        and of games idle for `idle_s` (no frames, no live socket), so a long-running
        server holds only the tables in play; a game's next frame makes a new one.
        Returns the ids let go."""
        now = time.monotonic() if now is None else now
        gone = []
        for game_id, gf in list(self.games.items()):
            if gf.subscribers or gf.slot is not None:
                continue
            if gf.finished or now - gf.last_used > self.idle_s:
                if gf.task is not None:
                    gf.task.cancel()
                self.kept[game_id] = {name: getattr(gf, name) for name in COUNTERS}
                del self.games[game_id]
                gone.append(game_id)
        return gone

    def _tell(self, queue, message: dict) -> None:
        if queue is not None:
            offer(queue, message)

    def _on_game_change(self, game_id: str, what: str) -> None:
        """From any thread: tell the tracker about turns, and live sockets about the game."""
        gf = self.games.get(game_id)
        if gf is None:
            return
        if what == "finished":
            gf.finished = True
        with gf.lock:
            if what == "turn-accepted":
                gf.tracker.commit()
            elif what == "round":
                gf.tracker.reset()
                gf.live = None
        if self.loop is not None and gf.subscribers and what != "reading":
            message = {"type": "game-changed", "what": what}
            for queue in list(gf.subscribers):
                self.loop.call_soon_threadsafe(offer, queue, message)

    def correct(self, game_id: str, point_xy: tuple[float, float], code: str,
                view: str | None = None) -> None:
        """The tracker holds a correction made on its own camera's reading; `point_xy` in
        another view (a photo, a camera since taken over) is not a place in its pixels."""
        gf = self.games.get(game_id)
        if gf is not None and view == gf.view:
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

    def hidden(self, game_id: str, photo_id: str | None) -> list[int]:
        """The tiles of the reading of `photo_id` (this camera's latest) that the latest
        frame did not show (under a hand, out of the view): for `judge_turn(hidden=...)`,
        so a turn judged meanwhile asks for a check instead of trusting them blindly."""
        gf = self.games.get(game_id)
        if gf is None or photo_id is None or gf.hidden_now[0] != photo_id:
            return []
        return list(gf.hidden_now[1])

    def stats(self, game_id: str) -> dict:
        """The game's frame counts since this server started (kept when its tracker is
        let go; not stored in the database)."""
        gf = self.games.get(game_id)
        counts = ({name: getattr(gf, name) for name in COUNTERS} if gf is not None
                  else self.kept.get(game_id, {}))
        out = {name: counts.get(name, 0) for name in COUNTERS}
        read_ms = counts.get("last_read_ms")
        out["last_read_ms"] = round(read_ms, 1) if counts.get("read") else None
        out["watchers"] = len(gf.subscribers) if gf is not None else 0
        return out

    async def close(self) -> None:
        for gf in self.games.values():
            if gf.task is not None:
                gf.task.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)


def offer(queue: asyncio.Queue, message: dict) -> None:
    """Put without waiting; a slow socket loses its oldest message, never blocks a table."""
    while True:
        try:
            queue.put_nowait(message)
            return
        except asyncio.QueueFull:
            try:
                queue.get_nowait()
            except asyncio.QueueEmpty:
                return

