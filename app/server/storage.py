"""The one module that talks SQL: games, rounds, turns, readings, photos, the table token.

SQLAlchemy Core on the tables of `dbtables.py`, in a SQLite file (the embedded default:
WAL, `synchronous=FULL`) or in PostgreSQL (a hall's server, `--db postgresql+psycopg://`).
Every write the game flow makes is one transaction committed before the route answers, so
a server killed at any moment (kill -9, power cut) keeps every acknowledged turn and score.
`dbopen.open_engine` checks the database and migrates it before the first request.

The game flow stores a game as two JSON documents (its `config`, fixed at creation, and
its `state`: the round, the running turn, the timer's events, corrections) plus rows per
turn, round, reading and photo. Readings keep the tiles' arrays (npz bytes) so a turn can
be judged again after a restart.

A full disk refuses every write (`StorageFull`, answered 507) until space is freed: once a
write failed for space, a smaller one (a turn's row) that might still fit is refused too,
so no turn is judged on a table photo that could not be kept.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import secrets
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from app.server import dbnotify
from app.server.dbopen import DatabaseRefused, open_engine
from app.server.dbtables import games, meta, photos, reading_hidden, readings, rounds, turns

log = logging.getLogger("rummikub.server")

__all__ = ["DatabaseRefused", "GameRow", "ReadingRow", "Storage", "StorageFull", "new_id",
           "new_token"]

SCHEMA_VERSION = 1  # release 0.1.0's number in `meta`; Alembic's revision is the schema now
FULL_RETRY_S = 5.0  # a database server's disk is not ours to measure: retry after this
SPACE_BACK = 256 * 1024  # bytes freed since a failed write before the next one is tried
# Writes stop while less than this is free beside a SQLite file: room left for SQLite to
# roll back and checkpoint, and a camera frame is refused before it is taken in.
RESERVE = 1024 * 1024
DISK_FULL_WORDS = ("the server's disk is full: this was not stored, and nothing else "
                   "changed; free space on the server and send it again")


class StorageFull(Exception):
    """A write refused because the database's disk is full (nothing of it was stored)."""

    status = 507

    def __init__(self, message: str = DISK_FULL_WORDS):
        super().__init__(message)


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
    """The game database, shared by the server's threads: a SQLite file path or a
    PostgreSQL URL. Raises `DatabaseRefused` (one line of words) for a database it must
    not serve from."""

    def __init__(self, where: Path | str, reserve: int = RESERVE):
        self.target, self.engine = open_engine(where)
        self.reserve = reserve
        self.path = self.target.path  # None for PostgreSQL
        self._folder = self.path.resolve().parent if self.path is not None else None
        # One writer at a time in this process on SQLite: it has one write lock per file
        # anyway, and a writer waiting here is not a writer failing with "database is
        # locked". PostgreSQL locks rows: writers of different games go on side by side.
        self._lock = threading.RLock() if self.target.is_sqlite else contextlib.nullcontext()
        # The write transaction this thread has open: a write or read inside it joins it
        # (a game's change holds its row lock to the end, and reads what it wrote).
        self._open = threading.local()
        # Names this process in its notifications, so it does not hear its own changes.
        self.origin = uuid.uuid4().hex[:12]
        self._full_since: float | None = None  # when a write last failed for space
        self._free_at_full = 0

    def close(self) -> None:
        self.engine.dispose()

    @property
    def journal_mode(self) -> str:
        if not self.target.is_sqlite:
            return "postgresql"
        with self.engine.connect() as db:
            return db.exec_driver_sql("PRAGMA journal_mode").scalar()

    # -- transactions and a full disk ------------------------------------------------------
    @property
    def shared(self) -> bool:
        """Whether other server processes may use this database (PostgreSQL)."""
        return not self.target.is_sqlite

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """All writes inside are committed together when the block ends, or none are. One
        opened inside another on the same thread is part of it."""
        joined = getattr(self._open, "db", None)
        if joined is not None:
            yield joined
            return
        committed: list[Callable[[], None]] = []  # `after_commit`'s, once it committed
        with self._lock:
            self.refuse_if_full()
            try:
                with self.engine.connect() as db:
                    db.execution_options(write=True)
                    with db.begin():
                        self._open.db, self._open.committed = db, committed
                        try:
                            yield db
                        finally:
                            self._open.db = self._open.committed = None
            except DBAPIError as error:
                if not self._is_disk_full(error):
                    raise
                self._full_since = time.monotonic()
                self._free_at_full = self._free_bytes()
                raise StorageFull() from error
            self._full_since = None
        for then in committed:
            try:
                then()
            except Exception:  # what is told after a commit never undoes it
                log.exception("a change was stored but not passed on")

    def after_commit(self, then: Callable[[], None]) -> None:
        """Call `then()` once the transaction open on this thread commits (never if it
        rolls back); at once when none is open."""
        committed = getattr(self._open, "committed", None)
        if committed is None:
            then()
        else:
            committed.append(then)

    @property
    def full(self) -> bool:
        """True while writes are refused for a full disk: less than `reserve` bytes free
        beside a SQLite file, or a write failed for space and no space came back since."""
        if self.target.is_sqlite and self.reserve and self._free_bytes() < self.reserve:
            return True
        return self._full_since is not None and not self._space_back()

    def refuse_if_full(self) -> None:
        if self.full:
            raise StorageFull()

    def _space_back(self) -> bool:
        if self.target.is_sqlite:
            return self._free_bytes() >= self._free_at_full + SPACE_BACK
        return time.monotonic() - self._full_since >= FULL_RETRY_S

    def _free_bytes(self) -> int:
        if not self.target.is_sqlite:
            return 0
        try:
            return shutil.disk_usage(self._folder).free
        except OSError:
            return 0

    def _is_disk_full(self, error: DBAPIError) -> bool:
        orig = error.orig
        if getattr(orig, "sqlstate", None) in ("53100", "53200"):  # PostgreSQL: disk, memory
            return True
        if isinstance(orig, OSError) and orig.errno == errno.ENOSPC:
            return True
        code = getattr(orig, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL:
            return True
        # A journal write that found no space may come back as an I/O error instead.
        return (code is not None and code & 0xFF == sqlite3.SQLITE_IOERR
                and self._free_bytes() < SPACE_BACK)

    # -- several processes on one database ------------------------------------------------
    def lock_game(self, db: Connection, game_id: str, *, wait: bool = True) -> GameRow | None:
        """The game's row, read inside the caller's write transaction and held until it
        ends: another process judging the same game waits (or, `wait=False`, gets None at
        once: the other is on it, as a timed-out turn's tick wants). None also for no such
        game. SQLite needs no row lock: a write transaction holds the whole file."""
        query = select(games).where(games.c.id == game_id)
        if not self.target.is_sqlite:
            query = query.with_for_update(skip_locked=not wait)
        row = db.execute(query).first()
        return _game_row(row) if row else None

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """A connection to read on: the thread's open write transaction if any (it sees
        what that wrote, under its row lock), else one of the pool's."""
        joined = getattr(self._open, "db", None)
        if joined is not None:
            yield joined
            return
        with self.engine.connect() as db:
            yield db

    def notify(self, db: Connection, game_id: str, about: str | None = None) -> None:
        """Inside a write's transaction: other server processes on this PostgreSQL
        database hear `game_id` (and `about`: what changed, by id) once it commits
        (`listen`)."""
        dbnotify.notify(db, game_id, self.origin, about)

    def notify_hall(self, db: Connection, tournament_id: str, parts: str) -> None:
        """As `notify`, for a tournament: `parts` names what changed (`hallfeed`)."""
        dbnotify.notify_hall(db, tournament_id, parts, self.origin)

    def listen(self, on_game, on_reconnect=None, on_hall=None) -> dbnotify.Listener:
        """Call `on_game(game_id)` (on a thread of its own) for each game another process
        changed, and `on_reconnect()` when listening again after a lost connection (what
        was changed meanwhile was not heard); `.close()` it at shutdown. On SQLite it
        never calls."""
        conninfo = None
        if not self.target.is_sqlite:
            conninfo = self.target.url.set(drivername="postgresql").render_as_string(
                hide_password=False)
        return dbnotify.Listener(conninfo, on_game, origin=self.origin,
                                 on_reconnect=on_reconnect, on_hall=on_hall)

    def reachable(self) -> bool:
        """Whether the database answers now (for /api/health)."""
        try:
            with self.engine.connect() as db:
                return db.execute(select(1)).scalar() == 1
        except DBAPIError:
            return False

    # -- the table token -------------------------------------------------------------------
    def table_token(self) -> str:
        """The token that lets a table create games: made once, kept across restarts."""
        query = select(meta.c.value).where(meta.c.key == "table_token")
        with self.engine.connect() as db:  # read first: a server starts on a full disk
            found = db.execute(query).scalar()
        if found:
            return found
        try:
            with self.transaction() as db:
                found = db.execute(query).scalar()
                if found:
                    return found
                token = new_token()
                db.execute(insert(meta).values(key="table_token", value=token))
                return token
        except IntegrityError:  # another server process made it at the same moment
            with self.engine.connect() as db:
                return db.execute(query).scalar_one()

    # -- games -----------------------------------------------------------------------------
    def create_game(self, config: dict, state: dict, db: Connection | None = None) -> GameRow:
        """A new game (inside the caller's transaction when `db` is given: a tournament
        seats all its tables at once, or none)."""
        now = time.time()
        row = GameRow(new_id(), new_token(), new_token(), now, now, config, state)
        statement = insert(games).values(
            id=row.id, token=row.token, watch_token=row.watch_token, created_at=now,
            updated_at=now, config=json.dumps(config), state=json.dumps(state))
        if db is not None:
            db.execute(statement)
            return row
        with self.transaction() as tx:
            tx.execute(statement)
        return row

    def game(self, game_id: str) -> GameRow | None:
        with self._read() as db:
            row = db.execute(select(games).where(games.c.id == game_id)).first()
        return _game_row(row) if row else None

    def games(self) -> list[GameRow]:
        with self._read() as db:
            rows = db.execute(select(games).order_by(games.c.created_at)).fetchall()
        return [_game_row(r) for r in rows]

    def game_ids(self, phase: str) -> list[str]:
        """The games in one phase ("playing": those whose turn timers run)."""
        with self._read() as db:
            return list(db.execute(select(games.c.id).where(games.c.phase == phase)).scalars())

    def save_state(self, game_id: str, state: dict, db: Connection | None = None, *,
                   about: str | None = None) -> None:
        """Replace a game's state (inside the caller's transaction when `db` is given);
        `about`: what changed, told the other processes (`notify`)."""
        statement = update(games).where(games.c.id == game_id).values(
            state=json.dumps(state), phase=state.get("phase", "setup"), updated_at=time.time())
        # Every change of a game changes its state: the other processes hear of it here.
        with self.transaction() if db is None else contextlib.nullcontext(db) as tx:
            tx.execute(statement)
            self.notify(tx, game_id, about)

    # -- photos ----------------------------------------------------------------------------
    def add_photo(self, game_id: str, data: bytes, kind: str, content_type: str = "image/jpeg",
                  db: Connection | None = None) -> str:
        photo_id = new_id()
        statement = insert(photos).values(id=photo_id, game_id=game_id, created_at=time.time(),
                                          kind=kind, content_type=content_type,
                                          data=bytes(data))
        if db is not None:
            db.execute(statement)
        else:
            with self.transaction() as tx:
                tx.execute(statement)
        return photo_id

    def photo(self, game_id: str, photo_id: str) -> tuple[bytes, str] | None:
        query = select(photos.c.data, photos.c.content_type).where(
            photos.c.id == photo_id, photos.c.game_id == game_id)
        with self._read() as db:
            row = db.execute(query).first()
        return (bytes(row.data), row.content_type) if row else None

    def photo_count(self, game_id: str) -> int:
        query = select(func.count()).select_from(photos).where(photos.c.game_id == game_id)
        with self._read() as db:
            return int(db.execute(query).scalar_one())

    # -- readings --------------------------------------------------------------------------
    def add_reading(self, game_id: str, reading: dict, detections: bytes,
                    photo_id: str | None = None, db: Connection | None = None) -> int:
        statement = insert(readings).values(
            game_id=game_id, created_at=time.time(), photo_id=photo_id,
            reading=json.dumps(reading), detections=bytes(detections))
        if db is not None:
            return int(db.execute(statement).inserted_primary_key[0])
        with self.transaction() as tx:
            return int(tx.execute(statement).inserted_primary_key[0])

    def reading(self, game_id: str, reading_id: int | None) -> ReadingRow | None:
        if reading_id is None:
            return None
        query = select(readings).where(readings.c.id == reading_id,
                                       readings.c.game_id == game_id)
        with self._read() as db:
            row = db.execute(query).first()
        if not row:
            return None
        return ReadingRow(row.id, row.game_id, row.created_at, row.photo_id,
                          json.loads(row.reading), bytes(row.detections))

    def reading_by_photo(self, game_id: str, photo_id: str) -> ReadingRow | None:
        query = (select(readings.c.id)
                 .where(readings.c.photo_id == photo_id, readings.c.game_id == game_id)
                 .order_by(readings.c.id.desc()).limit(1))
        with self._read() as db:
            found = db.execute(query).scalar()
        return self.reading(game_id, found) if found is not None else None

    def set_hidden(self, game_id: str, reading_id: int, tiles: list[dict]) -> None:
        """The reading's tiles the camera does not see now (`reading_hidden`; [] for none),
        written over what was stored for it before."""
        if self.target.is_sqlite:
            from sqlalchemy.dialects.sqlite import insert as upsert
        else:
            from sqlalchemy.dialects.postgresql import insert as upsert
        values = {"updated_at": time.time(), "tiles": json.dumps(tiles)}
        statement = upsert(reading_hidden).values(reading_id=reading_id, game_id=game_id,
                                                  **values)
        statement = statement.on_conflict_do_update(index_elements=["reading_id"], set_=values)
        with self.transaction() as db:
            db.execute(statement)

    def hidden(self, game_id: str, reading_id: int | None) -> list[dict] | None:
        """What `set_hidden` stored last for the reading; None when nothing was."""
        if reading_id is None:
            return None
        query = select(reading_hidden.c.tiles).where(reading_hidden.c.reading_id == reading_id,
                                                     reading_hidden.c.game_id == game_id)
        with self._read() as db:
            found = db.execute(query).scalar()
        return None if found is None else json.loads(found)

    # -- turns and rounds ------------------------------------------------------------------
    def add_turn(self, db: Connection, game_id: str, number: int, round_number: int,
                 player: str, verdict: dict, before_reading: int | None,
                 after_reading: int | None) -> None:
        db.execute(insert(turns).values(
            game_id=game_id, number=number, round=round_number, player=player,
            created_at=time.time(), before_reading=before_reading, after_reading=after_reading,
            verdict=json.dumps(verdict)))

    def turns(self, game_id: str) -> list[dict]:
        query = select(turns.c.verdict).where(turns.c.game_id == game_id).order_by(
            turns.c.number)
        with self._read() as db:
            return [json.loads(v) for v in db.execute(query).scalars()]

    def add_round(self, db: Connection, game_id: str, number: int, result: dict) -> None:
        db.execute(insert(rounds).values(game_id=game_id, number=number,
                                         created_at=time.time(), result=json.dumps(result)))

    def rounds(self, game_id: str) -> list[dict]:
        query = select(rounds.c.result).where(rounds.c.game_id == game_id).order_by(
            rounds.c.number)
        with self._read() as db:
            return [json.loads(v) for v in db.execute(query).scalars()]


def _game_row(row) -> GameRow:
    return GameRow(row.id, row.token, row.watch_token, row.created_at, row.updated_at,
                   json.loads(row.config), json.loads(row.state))
