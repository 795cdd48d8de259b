"""The one module that talks SQL: games, rounds, turns, readings, photos, the table token.

The standard `sqlite3` module in WAL mode with `synchronous=FULL`: every write the game
flow makes is one transaction committed before the route answers, so a server killed at
any moment (kill -9, power cut) keeps every acknowledged turn and score. A tournament hall
could plug a server database in behind the same methods.

The game flow stores a game as two JSON documents (its `config`, fixed at creation, and
its `state`: the round, the running turn, the timer's events, corrections) plus rows per
turn, round, reading and photo. Readings keep the tiles' arrays (npz bytes) so a turn can
be judged again after a restart.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    watch_token TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    phase TEXT NOT NULL DEFAULT 'setup',
    config TEXT NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS photos (
    id TEXT PRIMARY KEY,
    game_id TEXT NOT NULL REFERENCES games(id),
    created_at REAL NOT NULL,
    kind TEXT NOT NULL,
    content_type TEXT NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS readings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL REFERENCES games(id),
    created_at REAL NOT NULL,
    photo_id TEXT,
    reading TEXT NOT NULL,
    detections BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    game_id TEXT NOT NULL REFERENCES games(id),
    number INTEGER NOT NULL,
    round INTEGER NOT NULL,
    player TEXT NOT NULL,
    created_at REAL NOT NULL,
    before_reading INTEGER,
    after_reading INTEGER,
    verdict TEXT NOT NULL,
    PRIMARY KEY (game_id, number)
);
CREATE TABLE IF NOT EXISTS rounds (
    game_id TEXT NOT NULL REFERENCES games(id),
    number INTEGER NOT NULL,
    created_at REAL NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (game_id, number)
);
CREATE INDEX IF NOT EXISTS readings_game ON readings(game_id);
CREATE INDEX IF NOT EXISTS photos_game ON photos(game_id);
"""


@dataclass
class GameRow:
    id: str
    token: str
    watch_token: str
    created_at: float
    updated_at: float
    config: dict
    state: dict


@dataclass
class ReadingRow:
    id: int
    game_id: str
    created_at: float
    photo_id: str | None
    reading: dict
    detections: bytes


def new_token() -> str:
    """128 random bits as 32 hex digits: URL-safe, and never starting with '-', which a
    command line (`rummikub watch --token T`) would take for an option."""
    return secrets.token_hex(16)


def new_id() -> str:
    """A game's or photo's id: 72 random bits as 18 hex digits (never starting with '-')."""
    return secrets.token_hex(9)


class Storage:
    """A SQLite file shared by the server's threads (one connection, one lock)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None,
                                   timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit is on disk when it returns, so an acknowledged turn survives a
        # power cut too, not only a killed process.
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)",
                       (str(SCHEMA_VERSION),))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @property
    def journal_mode(self) -> str:
        with self._lock:
            return self._db.execute("PRAGMA journal_mode").fetchone()[0]

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All writes inside are committed together when the block ends, or none are."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- the table token -------------------------------------------------------------------
    def table_token(self) -> str:
        """The token that lets a table create games: made once, kept across restarts."""
        with self.transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key='table_token'").fetchone()
            if row:
                return row[0]
            token = new_token()
            db.execute("INSERT INTO meta(key, value) VALUES ('table_token', ?)", (token,))
            return token

    # -- games -----------------------------------------------------------------------------
    def create_game(self, config: dict, state: dict) -> GameRow:
        now = time.time()
        row = GameRow(new_id(), new_token(), new_token(), now, now, config, state)
        with self.transaction() as db:
            db.execute(
                "INSERT INTO games(id, token, watch_token, created_at, updated_at, config, state)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.token, row.watch_token, now, now, json.dumps(config),
                 json.dumps(state)),
            )
        return row

    def game(self, game_id: str) -> GameRow | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM games WHERE id=?", (game_id,)).fetchone()
        return _game_row(row) if row else None

    def games(self) -> list[GameRow]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM games ORDER BY created_at").fetchall()
        return [_game_row(r) for r in rows]

    def game_ids(self, phase: str) -> list[str]:
        """The games in one phase ("playing": those whose turn timers run)."""
        with self._lock:
            rows = self._db.execute("SELECT id FROM games WHERE phase=?", (phase,)).fetchall()
        return [r[0] for r in rows]

    def save_state(self, game_id: str, state: dict, db: sqlite3.Connection | None = None) -> None:
        """Replace a game's state (inside the caller's transaction when `db` is given)."""
        args = (json.dumps(state), state.get("phase", "setup"), time.time(), game_id)
        sql = "UPDATE games SET state=?, phase=?, updated_at=? WHERE id=?"
        if db is not None:
            db.execute(sql, args)
            return
        with self.transaction() as tx:
            tx.execute(sql, args)

    # -- photos ----------------------------------------------------------------------------
    def add_photo(self, game_id: str, data: bytes, kind: str, content_type: str = "image/jpeg",
                  db: sqlite3.Connection | None = None) -> str:
        photo_id = new_id()
        args = (photo_id, game_id, time.time(), kind, content_type, sqlite3.Binary(data))
        sql = ("INSERT INTO photos(id, game_id, created_at, kind, content_type, data)"
               " VALUES (?, ?, ?, ?, ?, ?)")
        if db is not None:
            db.execute(sql, args)
        else:
            with self.transaction() as tx:
                tx.execute(sql, args)
        return photo_id

    def photo(self, game_id: str, photo_id: str) -> tuple[bytes, str] | None:
        with self._lock:
            row = self._db.execute("SELECT data, content_type FROM photos WHERE id=? AND "
                                   "game_id=?", (photo_id, game_id)).fetchone()
        return (bytes(row["data"]), row["content_type"]) if row else None

    def photo_count(self, game_id: str) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM photos WHERE game_id=?",
                                    (game_id,)).fetchone()[0]

    # -- readings --------------------------------------------------------------------------
    def add_reading(self, game_id: str, reading: dict, detections: bytes,
                    photo_id: str | None = None, db: sqlite3.Connection | None = None) -> int:
        sql = ("INSERT INTO readings(game_id, created_at, photo_id, reading, detections)"
               " VALUES (?, ?, ?, ?, ?)")
        args = (game_id, time.time(), photo_id, json.dumps(reading), sqlite3.Binary(detections))
        if db is not None:
            return int(db.execute(sql, args).lastrowid)
        with self.transaction() as tx:
            return int(tx.execute(sql, args).lastrowid)

    def reading(self, game_id: str, reading_id: int | None) -> ReadingRow | None:
        if reading_id is None:
            return None
        with self._lock:
            row = self._db.execute("SELECT * FROM readings WHERE id=? AND game_id=?",
                                   (reading_id, game_id)).fetchone()
        if not row:
            return None
        return ReadingRow(row["id"], row["game_id"], row["created_at"], row["photo_id"],
                          json.loads(row["reading"]), bytes(row["detections"]))

    def reading_by_photo(self, game_id: str, photo_id: str) -> ReadingRow | None:
        with self._lock:
            row = self._db.execute("SELECT id FROM readings WHERE photo_id=? AND game_id=? "
                                   "ORDER BY id DESC LIMIT 1", (photo_id, game_id)).fetchone()
        return self.reading(game_id, row["id"]) if row else None

    # -- turns and rounds ------------------------------------------------------------------
    def add_turn(self, db: sqlite3.Connection, game_id: str, number: int, round_number: int,
                 player: str, verdict: dict, before_reading: int | None,
                 after_reading: int | None) -> None:
        db.execute(
            "INSERT INTO turns(game_id, number, round, player, created_at, before_reading,"
            " after_reading, verdict) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (game_id, number, round_number, player, time.time(), before_reading, after_reading,
             json.dumps(verdict)),
        )

    def turns(self, game_id: str) -> list[dict]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM turns WHERE game_id=? ORDER BY number",
                                    (game_id,)).fetchall()
        return [json.loads(r["verdict"]) for r in rows]

    def add_round(self, db: sqlite3.Connection, game_id: str, number: int, result: dict) -> None:
        db.execute("INSERT INTO rounds(game_id, number, created_at, result) VALUES (?, ?, ?, ?)",
                   (game_id, number, time.time(), json.dumps(result)))

    def rounds(self, game_id: str) -> list[dict]:
        with self._lock:
            rows = self._db.execute("SELECT result FROM rounds WHERE game_id=? ORDER BY number",
                                    (game_id,)).fetchall()
        return [json.loads(r["result"]) for r in rows]


def _game_row(row: sqlite3.Row) -> GameRow:
    return GameRow(row["id"], row["token"], row["watch_token"], row["created_at"],
                   row["updated_at"], json.loads(row["config"]), json.loads(row["state"]))
