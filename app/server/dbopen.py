"""Opening the game database: where it is, whether it may be served from, migrations.

`open_engine(where)` takes a SQLite file path (the embedded default) or a
`postgresql+psycopg://` URL and answers an Engine on a database at this release's schema,
or raises `DatabaseRefused` with one line saying what is wrong and what to do. Checked
before anything is written, so a bad file is never "repaired" into an empty one: a 0-byte
file, a file with damaged pages, another program's database, a schema newer than this
release, a read-only folder or file. Then Alembic brings the schema up to date (a release
0.1.0 file, made before Alembic, is stamped with the first revision).
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.script.revision import RevisionError
from alembic.util import CommandError as AlembicCommandError
from sqlalchemy import URL, Engine, create_engine, event, inspect, make_url, select, text
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from app.server import dbtables

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_MAGIC = b"SQLite format 3\x00"
FIRST_REVISION = "0001"  # release 0.1.0's tables, made before Alembic
START_SPACE = 256 * 1024  # free bytes SQLite needs beside the file to open it (-shm, -wal)
PG_MIGRATION_LOCK = 2026_12_01  # advisory lock: two servers starting at once migrate once


class DatabaseRefused(Exception):
    """A database the server will not serve from; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    url: URL
    path: Path | None  # the SQLite file; None for a database server

    @property
    def label(self) -> str:
        return str(self.path) if self.path is not None else self.url.render_as_string(
            hide_password=True)

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"


def target(where: str | Path) -> Target:
    """A plain path is a SQLite file; `sqlite:///PATH` too; `postgresql[+psycopg]://...`
    a PostgreSQL database (psycopg 3 is the driver shipped)."""
    raw = str(where)
    if "://" not in raw:
        path = Path(raw)
        return Target(URL.create("sqlite", database=str(path)), path)
    try:
        url = make_url(raw)
    except ArgumentError:
        raise DatabaseRefused(f"{raw}: not a database URL (a file path, or "
                              "postgresql+psycopg://user@host/dbname)") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise DatabaseRefused(f"{raw}: a SQLite URL needs a file (sqlite:///PATH)")
        return Target(url, Path(url.database))
    if backend != "postgresql":
        raise DatabaseRefused(f"{raw}: the server stores games in a SQLite file or in "
                              f"PostgreSQL (postgresql+psycopg://...), not in {backend}")
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    return Target(url, None)


def alembic_config(connection=None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def open_engine(where: str | Path) -> tuple[Target, Engine]:
    """The engine of a database checked and migrated to this release's schema."""
    place = target(where)
    if place.is_sqlite:
        check_sqlite_file(place.path)
        _quick_check(place)
    engine = make_engine(place)
    try:
        _migrate(engine, place)
    except DatabaseRefused:
        engine.dispose()
        raise
    except DBAPIError as error:
        engine.dispose()
        raise DatabaseRefused(_dbapi_words(place, error)) from None
    return place, engine


def make_engine(place: Target) -> Engine:
    if not place.is_sqlite:
        try:
            return create_engine(place.url, pool_pre_ping=True)
        except NoSuchModuleError as error:
            raise DatabaseRefused(f"{place.label}: {error}") from None
    engine = create_engine(place.url, connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):
        # The module's own transaction handling is off: BEGIN is sent below, IMMEDIATE for
        # writes, so two writers queue for the lock instead of failing half-way.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit is on disk when it returns, so an acknowledged turn survives a
        # power cut too, not only a killed process.
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        write = connection.get_execution_options().get("write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


# -- the file, before SQLite touches it ------------------------------------------------------
def check_sqlite_file(path: Path) -> None:
    """Refuse, in words, a database file the server must not open."""
    if path.is_dir():
        raise DatabaseRefused(f"{path} is a folder, not a database file (give --db a file)")
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DatabaseRefused(f"cannot make the folder {folder}: it is "
                              f"{_os_words(error)}") from None
    try:  # SQLite writes its journal (-wal, -shm) beside the file
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise DatabaseRefused(f"the folder {folder} is {_os_words(error)}: the database "
                              "needs to write there (its journal files sit beside it); "
                              "give a writable --data folder") from None
    free = shutil.disk_usage(folder).free
    if free < START_SPACE:
        raise DatabaseRefused(f"the disk of {folder} is full ({free} bytes free): the "
                              "database needs room for its journal even to be read; free "
                              "space there, then start again")
    if not path.exists():
        return  # a new database
    try:
        with open(path, "r+b") as file:
            head = file.read(len(SQLITE_MAGIC))
    except OSError as error:
        raise DatabaseRefused(f"the database file {path} is {_os_words(error)}: the server "
                              "must write to it; make it writable") from None
    wal = path.with_name(path.name + "-wal")
    if not head and not (wal.exists() and wal.stat().st_size > 0):
        raise DatabaseRefused(
            f"{path} is empty (0 bytes): it holds no games, so it is not served as if it "
            f"did. To start a fresh database, delete it (or give another --db); if games "
            f"were in it, restore it from a backup")
    if head != SQLITE_MAGIC and head:
        raise DatabaseRefused(f"{path} is not a SQLite database (another program's file?); "
                              "give the server its own file with --db")


def _quick_check(place: Target) -> None:
    """SQLite's own check of every page (not of the rows' contents), on a read-only
    connection: a damaged file is refused exactly as it was found."""
    if not place.path.exists():
        return
    uri = place.path.resolve().as_uri() + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=30)
        try:
            rows = [r[0] for r in db.execute("PRAGMA quick_check").fetchall()]
        finally:
            db.close()
    except sqlite3.DatabaseError as error:
        code = getattr(error, "sqlite_errorcode", None)
        if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            raise DatabaseRefused(_damaged(place, str(error))) from None
        raise DatabaseRefused(f"cannot open the database {place.label}: {error}") from None
    if rows != ["ok"]:
        raise DatabaseRefused(_damaged(place, rows[0] if rows else "no answer"))


def _damaged(place: Target, problem: str) -> str:
    return (f"{place.label} is damaged ({problem.strip()}); it is not served, so nothing "
            "more is lost: restore it from a backup (or try `sqlite3 FILE .recover`)")


# -- the schema ----------------------------------------------------------------------------
def _migrate(engine: Engine, place: Target) -> None:
    with engine.connect() as connection:
        connection.execution_options(write=True)
        with connection.begin():
            if not place.is_sqlite:
                connection.execute(text("SELECT pg_advisory_xact_lock(:k)"),
                                   {"k": PG_MIGRATION_LOCK})
            action = schema_action(connection, place)
            config = alembic_config(connection)
            if action == "stamp":
                command.stamp(config, FIRST_REVISION)
            command.upgrade(config, "head")


def schema_action(connection, place: Target) -> str:
    """"new", "stamp" (release 0.1.0's tables, before Alembic) or "upgrade"; refuses a
    database that is not this server's, or is newer than this release."""
    names = set(inspect(connection).get_table_names())
    ours = dbtables.FIRST_TABLES  # later revisions' tables may still be missing
    if "alembic_version" in names:
        revision = MigrationContext.configure(connection).get_current_revision()
        if not ours <= names:
            raise DatabaseRefused(_foreign(place, names - {"alembic_version"},
                                           f"Alembic revision {revision}"))
        script = ScriptDirectory.from_config(alembic_config())
        try:
            known = revision is None or script.get_revision(revision) is not None
        except (RevisionError, AlembicCommandError):
            known = False
        if not known:
            raise DatabaseRefused(
                f"{place.label} was made by a newer release of the referee (schema revision "
                f"{revision}; this release knows up to {script.get_current_head()}): "
                "upgrade the server, or serve from another --db")
        return "upgrade"
    if not names:
        return "new"
    if ours <= names and "meta" in names:
        rows = connection.execute(select(dbtables.meta.c.value).where(
            dbtables.meta.c.key == "schema")).fetchall()
        if rows and rows[0][0] == "1":
            return "stamp"
        if rows:
            raise DatabaseRefused(
                f"{place.label} has schema number {rows[0][0]}, which this release does not "
                "know (a newer release's?): upgrade the server, or serve from another --db")
    raise DatabaseRefused(_foreign(place, names, None))


def _foreign(place: Target, names: set[str], extra: str | None) -> str:
    shown = ", ".join(sorted(names)[:6]) + (", ..." if len(names) > 6 else "")
    what = f"tables {shown}" + (f", {extra}" if extra else "")
    return (f"{place.label} is another program's database ({what}), not the referee's; "
            "give the server its own file with --db")


# -- words -----------------------------------------------------------------------------------
def _os_words(error: OSError) -> str:
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "read-only"
    return f"not writable ({error.strerror or error})"


def _dbapi_words(place: Target, error: DBAPIError) -> str:
    orig = error.orig
    first = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    if isinstance(orig, sqlite3.DatabaseError):
        code = getattr(orig, "sqlite_errorcode", None)
        if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            return _damaged(place, first)
        if code == sqlite3.SQLITE_READONLY:
            return f"the database {place.label} is read-only: the server must write to it"
        return f"cannot open the database {place.label}: {first}"
    return f"cannot use the database {place.label}: {first}"
