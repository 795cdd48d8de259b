"""The hall's live feed: what changed in a tournament, told to its live sockets (the
director's console and the big screen) as soon as it is stored.

A message says which parts of the tournament changed ("tables", "calls", "standings",
"settings", "log") and, for a table's game, the table's number: ids, never state. The page
fetches the parts it shows. Two sources:

- a table's game (`GameService.listeners`): a stable reading, a judged or timed-out turn,
  a timer event, a round ended; from another process on the same PostgreSQL database as
  the game's id over its LISTEN/NOTIFY channel (`dbnotify.CHANNEL`);
- the hall's own rows (`HallStore.changed`): seating, settings, pauses, overrides, referee
  calls and their answers, registrations. Each is told after its transaction commits, and
  to the other processes over the hall's channel (`dbnotify.HALL_CHANNEL`, sent inside the
  transaction, so delivered only if it commits).

A socket's changes wait in one small set each until its sender takes them: a burst of
changes becomes one message, and a slow socket never holds more than that set.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from sqlalchemy import Connection

from app.server.games import ELSEWHERE

PARTS = ("tables", "calls", "standings", "settings", "log")
SCREEN_PARTS = frozenset({"standings"})  # all the big screen shows
ALL = frozenset(PARTS)
# What each hall row written changes (`HallStore.log`'s kinds, a call, registrations); a
# kind not named here (one added later) is told as a change of everything.
STORED_PARTS = {
    "settings": {"settings", "log"},
    "seat": {"tables", "calls", "standings", "log"},
    "pause": {"settings", "tables", "log"},
    "resume": {"settings", "tables", "log"},
    "call": {"calls", "tables"},
    "call-answered": {"calls", "tables", "log"},
    "result": {"standings", "log"},
    "score": {"standings", "log"},
    "set-valid": {"tables", "standings", "log"},
    "void-turn": {"tables", "standings", "log"},
    "players": {"standings"},
}
# A game's change that can change the standings: its round scored, the game over.
SCORED = {"round-end", "finished"}
SCORED_PHASES = {"round-over", "finished"}
MAX_SOCKETS = 64  # live sockets per tournament: a hall's console, screens and spares
MAX_GAMES_KNOWN = 4096  # games whose table (or none) is remembered


@dataclass(eq=False)  # each socket's own: told apart by identity
class Watcher:
    """One live socket's changes not sent yet. Lives on the event loop."""

    director: bool
    parts: set = field(default_factory=set)
    tables: set = field(default_factory=set)
    said: list = field(default_factory=list)  # answers to the socket's own messages (pong)
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    def tell(self, parts: frozenset | set, tables: set) -> None:
        seen = set(parts) if self.director else set(parts) & SCREEN_PARTS
        if not seen:
            return
        self.parts |= seen
        if self.director:
            self.tables |= tables
        self.ready.set()

    def say(self, message: dict) -> None:
        self.said = [*self.said[-7:], message]  # a client asking faster than it reads: the last 8
        self.ready.set()

    async def next(self) -> list[dict]:
        """The messages due: one `changed` with every part since the last, then the
        answers (a pong comes after every change told before its ping)."""
        await self.ready.wait()
        self.ready.clear()
        out = []
        if self.parts:
            changed = {"type": "changed", "parts": [p for p in PARTS if p in self.parts]}
            if self.director:
                changed["tables"] = sorted(self.tables)
            out.append(changed)
            self.parts, self.tables = set(), set()
        out, self.said = out + self.said, []
        return out


class TooMany(Exception):
    """A tournament has MAX_SOCKETS live sockets already."""


class HallFeed:
    """Every tournament's live sockets in this process, and what changed for them."""

    def __init__(self, service, hall, hub=None):
        self.service = service
        self.storage = service.storage
        self.hub = hub  # whose cameras went quiet (the console's "camera lost")
        self.loop: asyncio.AbstractEventLoop | None = None
        self.sockets: dict[str, set[Watcher]] = {}
        # game id -> (tournament, round, table), or None for a game of no tournament
        self._games: OrderedDict[str, tuple | None] = OrderedDict()
        self._known = threading.Lock()  # games change on reader, request and listener threads
        self._phases: dict[str, str] = {}  # a game's phase as last seen here
        self._streaming: dict[str, bool] = {}  # whether a game's camera streamed, last sweep
        service.listeners.append(self.game_changed)
        hall.store.changed = self.stored

    # -- sockets (on the event loop) ------------------------------------------------------
    def subscribe(self, tournament_id: str, director: bool) -> Watcher:
        self.loop = asyncio.get_running_loop()
        watchers = self.sockets.setdefault(tournament_id, set())
        if len(watchers) >= MAX_SOCKETS:
            raise TooMany(f"this tournament has {MAX_SOCKETS} live connections already; "
                          "try again later")
        watcher = Watcher(director)
        watchers.add(watcher)
        return watcher

    def unsubscribe(self, tournament_id: str, watcher: Watcher) -> None:
        watchers = self.sockets.get(tournament_id, set())
        watchers.discard(watcher)
        if not watchers:
            self.sockets.pop(tournament_id, None)

    def _deliver(self, tournament_id: str, parts: frozenset, tables: set) -> None:
        for watcher in list(self.sockets.get(tournament_id, ())):
            watcher.tell(parts, tables)

    def tell(self, tournament_id: str, parts, tables: set | None = None) -> None:
        """From any thread: `parts` of the tournament changed (at `tables`)."""
        loop = self.loop
        if loop is None or loop.is_closed() or tournament_id not in self.sockets:
            return
        loop.call_soon_threadsafe(self._deliver, tournament_id, frozenset(parts),
                                  set(tables or ()))

    # -- what changed ---------------------------------------------------------------------
    def game_changed(self, game_id: str, what: str) -> None:
        """`GameService.listeners`: a table's game changed, here or (`ELSEWHERE`) in another
        process."""
        if not self.sockets:
            return  # nobody watches a hall here: not even the game's row is read
        seat = self._seat(game_id)
        if seat is None:
            return
        tournament_id, _round, table = seat
        if tournament_id not in self.sockets:
            return
        parts = {"tables"}
        if what in SCORED or (what == ELSEWHERE and self._scored_since(game_id)):
            parts.add("standings")
        self.tell(tournament_id, parts, {table})

    def _seat(self, game_id: str) -> tuple | None:
        with self._known:
            if game_id in self._games:
                self._games.move_to_end(game_id)
                return self._games[game_id]
        row = self.storage.game(game_id)
        hall = (row.config.get("hall") if row is not None else None) or None
        seat = (hall["tournament"], hall["round"], hall["table"]) if hall else None
        with self._known:
            self._games[game_id] = seat  # a game's table never changes
            while len(self._games) > MAX_GAMES_KNOWN:
                gone, _ = self._games.popitem(last=False)
                self._phases.pop(gone, None)
        return seat

    def _scored_since(self, game_id: str) -> bool:
        """Whether the game reached a scored phase since this process last looked (a change
        heard from another process carries no name)."""
        row = self.storage.game(game_id)
        phase = row.state.get("phase") if row is not None else None
        with self._known:
            before, self._phases[game_id] = self._phases.get(game_id), phase
        return phase in SCORED_PHASES and phase != before

    def stored(self, db: Connection, tournament_id: str, kind: str) -> None:
        """`HallStore.changed`, inside the write's transaction: told here once it commits,
        and to the other processes by the database at the same moment."""
        parts = frozenset(STORED_PARTS.get(kind, ALL))
        self.storage.notify_hall(db, tournament_id, ",".join(sorted(parts)))
        self.storage.after_commit(lambda: self.tell(tournament_id, parts))

    def heard(self, tournament_id: str, parts: str) -> None:
        """A hall change another process stored (`Storage.listen(on_hall=...)`)."""
        named = frozenset(parts.split(",")) & ALL
        self.tell(tournament_id, named or ALL)

    def everything(self) -> None:
        """After a lost listening connection: what other processes changed meanwhile was
        not heard, so every socket fetches everything again."""
        for tournament_id in list(self.sockets):
            self.tell(tournament_id, ALL)

    def sweep(self, now: float | None = None) -> None:
        """On the event loop, each tick: a table whose camera went quiet (or came back)
        changes the console's flag, though nothing was stored."""
        if self.hub is None or not self.sockets:
            return
        from app.server.frames import CAMERA_QUIET_S

        now = time.monotonic() if now is None else now
        for game_id, gf in list(self.hub.games.items()):
            streaming = bool(gf.camera_seen) and now - gf.camera_seen < CAMERA_QUIET_S
            if self._streaming.get(game_id, False) != streaming:
                self._streaming[game_id] = streaming
                self.game_changed(game_id, "camera")
        for game_id in set(self._streaming) - set(self.hub.games):
            del self._streaming[game_id]
