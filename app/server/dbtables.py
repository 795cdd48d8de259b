"""The database's tables as SQLAlchemy Core objects: one schema for SQLite and PostgreSQL.

Column for column the tables release 0.1.0 made with hand-written SQL (TEXT, REAL, BLOB,
INTEGER; a one-column key without NOT NULL, as SQLite made it), so its files open
unchanged; the migrations (`migrations/versions/`) build the
same tables, and a test compares the two. JSON documents are TEXT written with `json.dumps`
(not a JSON column type): the bytes stored are the same in both databases.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.dialects.sqlite import REAL

metadata = MetaData()
# Seconds since 1970: REAL in SQLite as release 0.1.0 wrote it, double precision elsewhere.
TIME = Float().with_variant(REAL(), "sqlite")

# Small key/value facts: 'schema' (release 0.1.0's schema number, kept) and 'table_token'.
meta = Table(
    "meta", metadata,
    Column("key", Text, primary_key=True, nullable=True),
    Column("value", Text, nullable=False),
)

games = Table(
    "games", metadata,
    Column("id", Text, primary_key=True, nullable=True),
    Column("token", Text, nullable=False),
    Column("watch_token", Text, nullable=False),
    Column("created_at", TIME, nullable=False),
    Column("updated_at", TIME, nullable=False),
    Column("phase", Text, nullable=False, server_default="setup"),
    Column("config", Text, nullable=False),
    Column("state", Text, nullable=False),
)

photos = Table(
    "photos", metadata,
    Column("id", Text, primary_key=True, nullable=True),
    Column("game_id", Text, ForeignKey("games.id"), nullable=False),
    Column("created_at", TIME, nullable=False),
    Column("kind", Text, nullable=False),
    Column("content_type", Text, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Index("photos_game", "game_id"),
)

readings = Table(
    "readings", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True, nullable=True),
    Column("game_id", Text, ForeignKey("games.id"), nullable=False),
    Column("created_at", TIME, nullable=False),
    Column("photo_id", Text),
    Column("reading", Text, nullable=False),
    Column("detections", LargeBinary, nullable=False),
    Index("readings_game", "game_id"),
    sqlite_autoincrement=True,  # ids never reused, as in release 0.1.0
)

turns = Table(
    "turns", metadata,
    Column("game_id", Text, ForeignKey("games.id"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("round", Integer, nullable=False),
    Column("player", Text, nullable=False),
    Column("created_at", TIME, nullable=False),
    Column("before_reading", Integer),
    Column("after_reading", Integer),
    Column("verdict", Text, nullable=False),
)

rounds = Table(
    "rounds", metadata,
    Column("game_id", Text, ForeignKey("games.id"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("created_at", TIME, nullable=False),
    Column("result", Text, nullable=False),
)

# Release 0.1.0's tables (revision 0001): a database without them is not the referee's.
FIRST_TABLES = frozenset(metadata.tables)

# -- the tournament hall (revision 0002) ---------------------------------------------------
tournaments = Table(
    "tournaments", metadata,
    Column("id", Text, primary_key=True),
    Column("director_token", Text, nullable=False),
    Column("watch_token", Text, nullable=False),
    Column("created_at", TIME, nullable=False),
    Column("name", Text, nullable=False),
    Column("format", Text, nullable=False),  # referee.tournament.Format.to_dict, as JSON
    Column("settings", Text, nullable=False),  # hall-wide: timer preset, paused
)

hall_players = Table(
    "hall_players", metadata,
    Column("tournament_id", Text, ForeignKey("tournaments.id"), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("number", Integer, nullable=False),  # order of registration
)

hall_rounds = Table(
    "hall_rounds", metadata,
    Column("tournament_id", Text, ForeignKey("tournaments.id"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("created_at", TIME, nullable=False),
    Column("seating", Text, nullable=False),  # referee.tournament.Seating.to_dict, as JSON
)

hall_tables = Table(
    "hall_tables", metadata,
    Column("tournament_id", Text, ForeignKey("tournaments.id"), primary_key=True),
    Column("round", Integer, primary_key=True, autoincrement=False),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("game_id", Text, ForeignKey("games.id"), nullable=False, unique=True),
)

# Append-only: triggers (migration 0002) refuse every UPDATE and DELETE.
hall_log = Table(
    "hall_log", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", Text, ForeignKey("tournaments.id"), nullable=False),
    Column("created_at", TIME, nullable=False),
    Column("kind", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("by", Text, nullable=False),
    Index("hall_log_tournament", "tournament_id"),
    sqlite_autoincrement=True,
)

hall_calls = Table(
    "hall_calls", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", Text, ForeignKey("tournaments.id"), nullable=False),
    Column("game_id", Text, ForeignKey("games.id"), nullable=False),
    Column("created_at", TIME, nullable=False),
    Column("photo_id", Text),
    Column("answered_at", TIME),
    Column("answer", Text),
    Index("hall_calls_tournament", "tournament_id"),
    sqlite_autoincrement=True,
)

# -- what the camera does not see (revision 0003) -------------------------------------------
# Per stable reading: its tiles the camera's latest frame did not show (under a hand), as
# the process holding the camera last saw them, so a turn judged by any process, and a
# tracker started on another one after a crash, knows them. A row of its own, not a column
# of `readings`: release 0.1.0's tables stay as they were.
reading_hidden = Table(
    "reading_hidden", metadata,
    Column("reading_id", Integer, ForeignKey("readings.id"), primary_key=True,
           autoincrement=False),
    Column("game_id", Text, ForeignKey("games.id"), nullable=False),
    Column("updated_at", TIME, nullable=False),
    Column("tiles", Text, nullable=False),  # JSON: [{"id", "code", "corners"}], [] for none
)

TABLE_NAMES = frozenset(metadata.tables)
