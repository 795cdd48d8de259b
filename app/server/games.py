"""The game flow: what happens to a game when a player acts. It calls the referee and the
vision pipeline and keeps the result through `storage`; it holds no SQL and no HTTP.

A game lives in the database as its config (players in seating order, the edition's
settings, the timer) and its state (round, running turn, timer events, the accepted table,
the latest stable table reading, corrections). Every change is made under the game's lock
and committed in one transaction before the caller answers.

The turn timer is rebuilt from its stored events (start, pause, resume, extend: wall-clock
times) into the referee's `TurnTimer`, so every phone, a reloaded page and a restarted
server see the same countdown.

The service is one class made of three parts, each in its own module: `gameturns.TurnFlow`
(the timer and the turn's end), `gamerounds.RoundFlow` (games, rounds, scores) and
`gamereadings.ReadingFlow` (table and rack readings); the data converters are in
`gamedata`, the corrections in `corrections`, the errors in `gameerrors`. The names other
modules import from here stay importable from here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from app.server.corrections import (
    CORRECTION_REACH,
    apply_corrections,
    carry_correction,
    tile_height,
)
from app.server.gamedata import (
    PhotoIn,
    detections_from_bytes,
    detections_to_bytes,
    editions_json,
    rack_warnings,
    reading_json,
    rules_from_json,
    rules_to_json,
    rules_with,
    turn_id,
)
from app.server.gameerrors import BadInput, Busy, Conflict, GameError, NotFound
from app.server.gamereadings import ReadingFlow
from app.server.gamerounds import RoundFlow
from app.server.gameturns import TurnFlow
from app.server.messages import say
from app.server.storage import GameRow, Storage
from referee import Rules

__all__ = [
    "CORRECTION_REACH", "ELSEWHERE", "READ_ELSEWHERE", "BadInput", "Busy", "Conflict",
    "GameError", "GameService", "NotFound", "PhotoIn", "apply_corrections",
    "carry_correction", "detections_from_bytes", "detections_to_bytes", "editions_json",
    "rack_warnings", "reading_json", "rules_from_json", "rules_to_json", "rules_with",
    "tile_height", "turn_id",
]

ELSEWHERE = "elsewhere"  # what a change made by another server process is called
# ... and a reading stored by another process: "read-elsewhere:<reading id>"
READ_ELSEWHERE = "read-elsewhere:"


class GameService(TurnFlow, RoundFlow, ReadingFlow):
    """Every action on a game; `reader` is the vision TileReader loaded once."""

    def __init__(self, storage: Storage, reader, clock=time.time):
        self.storage = storage
        self.reader = reader
        self.clock = clock
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()
        # Called with (game_id, what) after a change: the frame hub resets or commits its
        # tracker and live sockets push the game.
        self.listeners: list = []
        # Asked before a round starts (the game's row): words why it may not (a decided
        # finals table of the tournament hall), or None.
        self.round_guard = None
        # (game_id, photo_id, reading_id) -> the reading's tiles the live camera does not
        # see now (under a hand): the frame hub answers when its camera read it; None
        # when this process holds no such camera (the stored ones are asked then).
        self.hidden_of = lambda _game, _photo, _reading: None

    @contextmanager
    def lock(self, game_id: str, *, wait: bool = True) -> Iterator[None]:
        """One change of a game: this process's lock for it and, on a database other
        processes share (PostgreSQL), its row locked in a transaction that every read and
        write inside joins, so the state read inside is the latest and another process's
        change of the game waits for this one. `wait=False`: Busy at once when another
        process holds the game (a timed-out turn is judged by whoever got it first)."""
        with self._locks_guard:
            local = self._locks.setdefault(game_id, threading.RLock())
        with local:
            if not self.storage.shared:
                yield  # SQLite: one process, and a write transaction holds the whole file
                return
            with self.storage.transaction() as db:
                if self.storage.lock_game(db, game_id, wait=wait) is None and not wait \
                        and self.storage.game(game_id) is not None:
                    raise Busy("another server process is changing this game; nothing was "
                               "changed here")
                yield

    def heard(self, game_id: str, about: str | None = None) -> None:
        """Another server process changed the game (`Storage.listen`); `about` =
        "reading:<id>" when it stored a reading: told first, as such."""
        if about and about.startswith("reading:"):
            self._notify(game_id, READ_ELSEWHERE + about.removeprefix("reading:"))
        self._notify(game_id, ELSEWHERE)

    def _notify(self, game_id: str, what: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(game_id, what)
            except Exception:  # a listener's failure never undoes a stored turn
                pass

    # -- loading ---------------------------------------------------------------------------
    def row(self, game_id: str) -> GameRow:
        row = self.storage.game(game_id) if isinstance(game_id, str) and game_id else None
        if row is None:
            raise NotFound(say("game.not_found", game=repr(game_id)))
        return row

    @staticmethod
    def rules(row: GameRow) -> Rules:
        return rules_from_json(row.config["settings"])

    @staticmethod
    def _reading_out(row) -> dict | None:
        if row is None:
            return None
        return {**row.reading, "reading_id": row.id, "stable_since": row.created_at}
