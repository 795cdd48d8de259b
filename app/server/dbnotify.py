"""Telling the other server processes on one PostgreSQL database that a game changed.

A write's transaction sends the game's id with `pg_notify` (delivered at commit, and only
if it commits); each process listens on its own connection and hears the ids of games
another process changed, so its live sockets can read them again. Ids only: what changed
is read from the database. On SQLite (one process per file) there is no one to tell.

A second channel carries the tournament hall's changes (`notify_hall`): a tournament's id
and which parts of it changed (`app/server/hallfeed.py`), for the director's console and
the big screen on the other processes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy import Connection, text

log = logging.getLogger("rummikub.server")

CHANNEL = "rummikub_games"
HALL_CHANNEL = "rummikub_hall"
RETRY_S = 1.0  # a lost listening connection is made again after this


def notify(db: Connection, game_id: str, origin: str | None = None,
           about: str | None = None) -> None:
    """Inside a write's transaction: other processes hear `game_id` once it commits.
    `origin` names the sending process (its listener drops what it sent itself); `about`,
    an id of what changed (`reading:42`): a reading is pushed to the other processes'
    sockets as such, even if a turn judged at once after it sets the table again before
    they read the game."""
    if db.dialect.name == "postgresql":
        payload = " ".join([game_id, origin or "-"] + ([about] if about else []))
        db.execute(text("SELECT pg_notify(:channel, :id)"), {"channel": CHANNEL, "id": payload})


def notify_hall(db: Connection, tournament_id: str, parts: str,
                origin: str | None = None) -> None:
    """As `notify`, on the hall's channel: `parts` names what changed ("standings,log"),
    words without spaces."""
    if db.dialect.name == "postgresql":
        payload = " ".join(x for x in (tournament_id, parts, origin) if x)
        db.execute(text("SELECT pg_notify(:channel, :id)"),
                   {"channel": HALL_CHANNEL, "id": payload})


class Listener:
    """A thread calling `on_game(game_id)` for each id another process notifies
    (`on_game(game_id, about)` when it says what changed), and `on_hall(tournament_id,
    parts)` for each hall change (when given)."""

    def __init__(self, conninfo: str | None, on_game: Callable[[str], None], *,
                 origin: str | None = None, on_reconnect: Callable[[], None] | None = None,
                 on_hall: Callable[[str, str], None] | None = None):
        self._conninfo = conninfo
        # Called once listening again after a lost connection: what was sent meanwhile
        # was not heard, so the caller reads its games again.
        self._on_reconnect = on_reconnect
        self._origin = origin  # this process's changes: not told again
        self._on_game = on_game
        self._on_hall = on_hall
        self._stop = threading.Event()
        self.ready = threading.Event()  # set once LISTEN is in place
        self._thread = None
        if conninfo is None:
            self.ready.set()  # SQLite: nothing to hear
            return
        self._thread = threading.Thread(target=self._run, name="db-listener", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self._conninfo, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if self._on_hall is not None:
                        conn.execute(f"LISTEN {HALL_CHANNEL}")
                    again = self.ready.is_set()
                    self.ready.set()
                    if again and self._on_reconnect is not None:
                        self._call(self._on_reconnect)
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            if note.channel == HALL_CHANNEL:
                                self._tell_hall(note.payload)
                            else:
                                self._tell(note.payload)
            except psycopg.Error as error:
                log.warning("listening for other servers' changes failed (%s); again in "
                            "%.0f s", error, RETRY_S)
                self._stop.wait(RETRY_S)

    def _tell(self, payload: str) -> None:
        game_id, origin, about = (payload.split(" ", 2) + ["", ""])[:3]
        if origin and origin == self._origin:
            return
        self._call(self._on_game, game_id, *([about] if about else []))

    def _tell_hall(self, payload: str) -> None:
        tournament_id, _, rest = payload.partition(" ")
        parts, _, origin = rest.partition(" ")
        if origin and origin == self._origin:
            return
        self._call(self._on_hall, tournament_id, parts)

    @staticmethod
    def _call(function, *args) -> None:
        try:
            function(*args)
        except Exception:  # one listener's failure never stops the others hearing
            log.exception("a change heard from another server was not passed on")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
