"""Camera frames per game: a latest-wins slot, the readers, the cameras, the sockets.

A table's camera sends frames faster than a busy server may read them. Each game has ONE
slot: a new frame replaces a waiting one (counted as dropped), so nothing queues without
bound and the reading always follows the newest picture. One asyncio task per game hands
the game to a small thread pool shared by all tables (off the event loop); the pool thread
takes the newest frame only when it starts, runs the photo pipeline, and the game's
`vision.game.tracker.TableTracker` votes over recent frames and says when the table changed
and held still. Only then is the reading judged, stored with its frame and
made the game's latest table: the referee never judges a single frame (that reading of
one frame: `app.server.livetable`). The hub tells the live sockets, and its trackers hear
of the game's turns and rounds, made here or by another server process.

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
import json
import logging
import threading
import time
import uuid

from app.server.games import ELSEWHERE, READ_ELSEWHERE, GameError, GameService
from app.server.limits import DecodeBudget
from app.server.livetable import GRAY_WIDTH, Frame, GameFrames, LiveReader, make_tracker
from app.server.messages import Message, say
from vision.recognition.decode import PhotoError

__all__ = ["GRAY_WIDTH", "CameraTaken", "Frame", "FrameHub", "GameFrames", "make_tracker"]

log = logging.getLogger("rummikub.server")

DECODE_MEMORY = 768 * 2**20  # as the app's (main.DECODE_MEMORY) when none is given
IDLE_S = 30 * 60.0  # a game's tracker is let go after this long without frames or sockets
# A camera streams 3 frames a second; one silent this long (closed, asleep, gone) no longer
# holds the game's camera.
CAMERA_QUIET_S = 10.0
POSTED = ("posted",)  # frames posted without a camera name: `rummikub watch`, a script


def camera_taken(by: object) -> Message:
    """What a camera hears when `by` took the game's camera over: another phone, or the
    webcam of `rummikub watch` (it posts frames without a camera name)."""
    return say("camera.taken_by_watch" if by == POSTED else "camera.taken_by_phone")


CAMERA_TAKEN = camera_taken(None).english
COUNTERS = ("received", "read", "dropped", "bad", "refused", "changes", "takeovers",
            "last_read_ms", "still", "hidden_writes")


class CameraTaken(GameError):
    """Frames from a camera that another camera took over while that one still streams."""

    status = 409


class FrameHub:
    """All games' frame slots and workers; lives as long as the app."""

    def __init__(self, service: GameService, reader, *, workers: int = 1, hold: int = 3,
                 hold_s: float | None = None, idle_s: float = IDLE_S,
                 budget: DecodeBudget | None = None):
        self.service = service
        # The server's memory for decoded pixels, shared with the uploads.
        self.budget = budget or DecodeBudget(DECODE_MEMORY)
        self.reader = reader
        self.live_reader = LiveReader(service, reader, self.budget)  # a frame into its table
        self.hold = hold
        self.hold_s = hold_s
        self.idle_s = idle_s
        self.workers = workers
        # Games with a frame waiting and no reader on it. A reader takes the one served
        # longest ago, so every table gets its turn whatever order frames arrive in (a
        # first-come queue served the tables whose frames came first in each round of
        # sends: at 16 tables, table 1 lost 1 % of its frames and table 16 48 %).
        self._ready: set[str] = set()
        self._cond = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._closing = False
        self.games: dict[str, GameFrames] = {}
        # The counters of games whose tracker was let go (`sweep`): a game's frame counts
        # cover its whole time on this server, not only since its tracker was last made.
        self.kept: dict[str, dict] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        service.listeners.append(self._on_game_change)
        service.hidden_of = self.hidden  # a turn's end asks which tiles the camera misses

    def _frames(self, game_id: str) -> GameFrames:
        gf = self.games.get(game_id)
        if gf is None:
            row = self.service.row(game_id)
            gf = GameFrames(game_id, make_tracker(self.service.rules(row), self.hold,
                                                     self.hold_s),
                            finished=row.state["phase"] == "finished")
            gf.seen = self._marks(game_id)
            for name, value in self.kept.pop(game_id, {}).items():
                setattr(gf, name, value)
            self.games[game_id] = gf
        gf.last_used = time.monotonic()
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
        with self._cond:
            if not gf.busy:  # else the reader on it sees the new frame when it is done
                self._ready.add(game_id)
                self._cond.notify()
        self._start_readers()
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
            raise CameraTaken(camera_taken(gf.camera))
        if gf.camera is not None:
            # Told even when it was quiet: a phone whose page was in the background sends
            # nothing, and must not take the camera back unasked when it wakes.
            gf.replaced[gf.camera] = now
            while len(gf.replaced) > 16:  # only the last few matter
                del gf.replaced[next(iter(gf.replaced))]
            taken = camera_taken(camera)
            self._tell(gf.camera_queue, {"type": "camera-taken", "detail": taken.english,
                                         "message_id": taken.json()})
            gf.takeovers += 1
            # Another camera sees the table from another place: the tracks (places in the
            # old camera's pixels) go, and a frame of the old camera still waiting or being
            # read is not tracked (its epoch is an old one).
            with gf.lock:
                gf.camera_epoch += 1
                gf.tracker.reset()
                gf.still_ref = gf.last_read = gf.last_update = None
                gf.live = None
                gf.view = f"camera:{uuid.uuid4().hex}"
        gf.replaced.pop(camera, None)
        gf.camera, gf.camera_queue, gf.camera_seen = camera, queue, now

    # -- the readers ---------------------------------------------------------------------
    def _start_readers(self) -> None:
        if self._threads:
            return
        for k in range(self.workers):
            thread = threading.Thread(target=self._serve, name=f"frames-{k}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _next(self) -> GameFrames | None:
        """The waiting game served longest ago (None when closing)."""
        with self._cond:
            while True:
                if self._closing:
                    return None
                waiting = [gf for g in self._ready if (gf := self.games.get(g)) is not None]
                if waiting:
                    gf = min(waiting, key=lambda g: g.served_at)
                    self._ready.discard(gf.game_id)
                    gf.busy, gf.served_at = True, time.monotonic()
                    return gf
                self._ready.clear()
                self._cond.wait()

    def _serve(self) -> None:
        """A reader thread: one game's newest frame at a time, fairly over the games."""
        while (gf := self._next()) is not None:
            box: list[Frame] = []
            message = error = None
            try:
                message = self._process_latest(gf, box)
            except PhotoError as problem:
                gf.bad += 1
                error = f"bad frame: {problem}"
            except GameError as problem:
                error = str(problem)
            except Exception as problem:  # a frame never takes the reader down
                log.exception("reading a frame of game %s failed", gf.game_id)
                gf.bad += 1
                error = f"frame not read: {problem}"
            finally:
                with self._cond:
                    gf.busy = False
                    if gf.slot is not None:
                        self._ready.add(gf.game_id)
                        self._cond.notify()
            if self.loop is None or self.loop.is_closed():
                continue
            if error is not None:
                self.loop.call_soon_threadsafe(self._tell_error, box, error)
            elif message is not None:
                self.loop.call_soon_threadsafe(self._deliver, gf, message, box[0])

    def _deliver(self, gf: GameFrames, message: dict, frame: Frame) -> None:
        """On the event loop: the reading made from `frame`, to every live socket, as JSON
        text made once for the sender and once for all the others (a director's view and
        a big screen watch every table: each reading goes to several sockets)."""
        message["frame"]["latency_ms"] = round((time.perf_counter() - frame.received)
                                               * 1000, 1)
        # The other sockets (a director's view, a big screen) hear a frame only when what
        # it says differs from what they last heard: a still table costs them nothing.
        # A refused frame is told to all, as before, and the next reading after it too.
        told = (message["reading"], message.get("hidden"), message.get("stable"))
        tell_others = (message["type"] != "reading" or message["changed"]
                       or told != gf.told_others)
        if tell_others:
            gf.told_others = told if message["type"] == "reading" else None
        others = None
        for queue in list(gf.subscribers):
            if queue is frame.source:
                offer(queue, as_text(message))
                continue
            if not tell_others:
                continue
            if others is None:
                others = as_text({**message, "frame": {**message["frame"], "seq": None}})
            offer(queue, others)

    def _tell_error(self, box: list[Frame], detail: str) -> None:
        if box:
            self._tell(box[0].source, {"type": "error", "detail": detail, "frame": box[0].seq})

    def _process_latest(self, gf: GameFrames, box: list[Frame]) -> dict | None:
        """In a pool thread: the newest frame read into the game's live table
        (`LiveReader.process_latest`)."""
        return self.live_reader.process_latest(gf, box)

    def subscribe(self, game_id: str, queue: asyncio.Queue) -> None:
        self.loop = asyncio.get_running_loop()
        gf = self._frames(game_id)
        gf.subscribers.add(queue)
        gf.told_others = None  # the next frame is told to every socket, the new one too

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
            if gf.subscribers or gf.slot is not None or gf.busy:
                continue
            if gf.finished or now - gf.last_used > self.idle_s:
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
        if what.startswith(READ_ELSEWHERE):
            self._read_elsewhere(gf, what.removeprefix(READ_ELSEWHERE))
            return
        if what == ELSEWHERE:
            what = self._changed_elsewhere(gf)
        elif what != "reading":
            gf.seen = self._marks(game_id)
        if what == "finished":
            gf.finished = True
        with gf.slot_lock:
            gf.latest = (gf.latest[0] + 1, None)
        with gf.lock:
            if what == "turn-accepted":
                gf.tracker.commit()
            elif what == "round":
                gf.tracker.reset()
                gf.live = None
            gf.still_run, gf.last_update = 0, None  # the tracker hears the next frames
        if self.loop is not None and gf.subscribers and what != "reading":
            message = {"type": "game-changed", "what": what}
            for queue in list(gf.subscribers):
                self.loop.call_soon_threadsafe(offer, queue, message)

    def _read_elsewhere(self, gf: GameFrames, reading_id: str) -> None:
        """From the listener's thread: another process stored a reading of the game (its
        camera streams there). Live sockets here get it as that process's own get it, as
        such: a turn judged at once after it may set the table again before they read the
        game (the `game` message that follows shows the table as it is by then)."""
        if self.loop is None or not gf.subscribers or not reading_id.isdigit():
            return
        reading = self.service.reading_out(gf.game_id, int(reading_id))
        if reading is None:
            return
        # No frame of this process's: the reading is the news (`seq` None, as another
        # socket's frame is told to the watchers).
        message = {"type": "reading", "reading": reading, "hidden": [], "stable": True,
                   "changed": True, "frame": {"seq": None, "elsewhere": True}}
        for queue in list(gf.subscribers):
            self.loop.call_soon_threadsafe(offer, queue, message)

    def _marks(self, game_id: str) -> tuple | None:
        """What tells the tracker's events apart: round, turns judged, phase, whether the
        last turn was legal."""
        row = self.service.storage.game(game_id)
        if row is None:
            return None
        state = row.state
        return ((state.get("round") or {}).get("number"), state.get("turn_count"),
                state.get("phase"), (state.get("last_verdict") or {}).get("legal"))

    def _changed_elsewhere(self, gf: GameFrames) -> str:
        """What another server process did to the game (it sends only the game's id), from
        the game as stored now against as this process last saw it."""
        before, now = gf.seen, self._marks(gf.game_id)
        gf.seen = now
        if now is None or before is None:
            return ELSEWHERE
        if now[2] == "finished":
            return "finished"
        if now[0] != before[0]:
            return "round"
        if now[1] != before[1]:
            return "turn-accepted" if now[3] else "turn-rejected"
        return ELSEWHERE

    def correct(self, game_id: str, point_xy: tuple[float, float], code: str,
                view: str | None = None) -> None:
        """A player's correction at `point_xy` of a reading in `view`: the game's camera
        tracker holds it when it is that camera's own view (`LiveReader.correct`)."""
        gf = self.games.get(game_id)
        if gf is not None:
            self.live_reader.correct(gf, point_xy, code, view)

    def hidden(self, game_id: str, photo_id: str | None, reading_id: int | None = None
               ) -> list[int] | None:
        """The tiles of the reading of `photo_id` (this camera's latest; `reading_id`, when
        given, must be it too) that the latest frame did not show (under a hand, out of the
        view): for `judge_turn(hidden=...)`, so a turn judged meanwhile asks for a check
        instead of trusting them blindly (`GameService.end_turn` asks). None when this
        process's camera did not read it: the stored ones count then."""
        gf = self.games.get(game_id)
        if gf is None or photo_id is None or gf.camera is None:
            return None
        if time.monotonic() - gf.camera_seen >= CAMERA_QUIET_S:
            return None  # its camera went quiet here (the phone may stream elsewhere now)
        seen_photo, seen_reading, hidden = gf.hidden_now
        if seen_photo != photo_id or reading_id not in (None, seen_reading):
            return None
        return list(hidden)

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
        # Whether a camera films the game now, and which kind: a page asks before taking over.
        streaming = (gf is not None and gf.camera is not None
                     and time.monotonic() - gf.camera_seen < CAMERA_QUIET_S)
        out["camera"] = ({"streaming": True, "by": "watch" if gf.camera == POSTED else "phone"}
                         if streaming else {"streaming": False, "by": None})
        return out

    async def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        for thread in self._threads:
            # A read under way finishes on its own (a daemon thread); not waited for long.
            await asyncio.get_running_loop().run_in_executor(None, thread.join, 2.0)


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


def as_text(message: dict) -> str:
    """A socket message as the JSON text Starlette's `send_json` would send."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)
