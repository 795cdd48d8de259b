"""The storage module: WAL, durable commits, all-or-nothing writes, restarts, and the
database release 0.1.0 made (opened, stamped, every row back)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from sqlalchemy.exc import IntegrityError

from app.server.storage import Storage
from tests.db_helpers import copy_v010, raw_rows


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request, tmp_path):
    """A SQLite file, or a fresh database on the tests' PostgreSQL server."""
    if request.param == "sqlite":
        return tmp_path / "db.sqlite3"
    return request.getfixturevalue("postgres_url")


def test_the_database_runs_in_wal_mode_with_full_sync(tmp_path):
    storage = Storage(tmp_path / "db.sqlite3")
    assert storage.journal_mode == "wal"
    with storage.transaction() as db:
        assert db.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert db.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_a_write_transaction_holds_the_files_write_lock_from_its_start(tmp_path):
    """BEGIN IMMEDIATE: a writer (in any process) waits for the lock before it reads, so
    two never both read a game's state and then fail half-way through their writes."""
    storage = Storage(tmp_path / "db.sqlite3")
    other = sqlite3.connect(tmp_path / "db.sqlite3", timeout=0, isolation_level=None)
    with storage.transaction():
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
    other.execute("BEGIN IMMEDIATE")  # free once the transaction ended
    other.execute("ROLLBACK")
    with storage.engine.connect() as reader:  # a read takes no write lock
        reader.exec_driver_sql("SELECT 1 FROM games").fetchall()
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    other.close()


def test_a_transaction_is_all_or_nothing(where):
    storage = Storage(where)
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "playing", "n": 0})
    with storage.transaction() as db:
        storage.add_turn(db, game.id, 1, 1, "Ann", {"legal": True}, None, None)
    with pytest.raises(IntegrityError):
        with storage.transaction() as db:
            storage.save_state(game.id, {"phase": "playing", "n": 1}, db)
            storage.add_turn(db, game.id, 1, 1, "Ben", {"legal": False}, None, None)  # twice
    assert storage.game(game.id).state == {"phase": "playing", "n": 0}
    assert storage.turns(game.id) == [{"legal": True}]


def test_a_committed_write_is_seen_by_another_connection_at_once(tmp_path):
    path = tmp_path / "db.sqlite3"
    storage = Storage(path)
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"})
    with storage.transaction() as db:
        storage.add_turn(db, game.id, 1, 1, "Ann", {"legal": True}, None, None)
    assert raw_rows(path, "SELECT game_id, number, player FROM turns") == [(game.id, 1, "Ann")]


def test_everything_is_there_after_reopening(where):
    path = where
    storage = Storage(path)
    token = storage.table_token()
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"})
    photo = storage.add_photo(game.id, b"\xff\xd8jpeg", "table")
    reading = storage.add_reading(game.id, {"tiles": []}, b"npz", photo)
    storage.save_state(game.id, {"phase": "playing"})
    storage.close()

    again = Storage(path)
    assert again.table_token() == token
    assert again.game(game.id).state == {"phase": "playing"}
    assert again.game_ids("playing") == [game.id]
    assert again.photo(game.id, photo) == (b"\xff\xd8jpeg", "image/jpeg")
    assert again.photo_count(game.id) == 1
    assert again.reading_by_photo(game.id, photo).id == reading
    # A photo or reading of another game is not this game's.
    other = again.create_game({"players": ["Cy", "Di"]}, {"phase": "setup"})
    assert again.photo(other.id, photo) is None and again.reading(other.id, reading) is None


def test_reading_ids_follow_one_another(where):
    storage = Storage(where)
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"})
    first = storage.add_reading(game.id, {}, b"")
    second = storage.add_reading(game.id, {}, b"")
    assert second == first + 1


def test_a_release_0_1_0_database_opens_with_every_game_turn_and_photo(tmp_path):
    path = copy_v010(tmp_path)
    games = raw_rows(path, "SELECT id, token, watch_token, config, state FROM games "
                           "ORDER BY created_at")
    turns = raw_rows(path, "SELECT game_id, verdict FROM turns ORDER BY game_id, number")
    photos = raw_rows(path, "SELECT game_id, id, data, content_type FROM photos")
    rounds = raw_rows(path, "SELECT game_id, result FROM rounds ORDER BY number")
    readings = raw_rows(path, "SELECT game_id, id, photo_id, reading, detections FROM readings")
    (token,) = raw_rows(path, "SELECT value FROM meta WHERE key='table_token'")[0]
    assert len(games) == 2 and len(turns) == 3 and len(photos) == 4 and len(rounds) == 1

    storage = Storage(path)
    assert storage.table_token() == token  # the phones' link still works
    assert [(g.id, g.token, g.watch_token, g.config, g.state) for g in storage.games()] == [
        (i, t, w, json.loads(c), json.loads(s)) for i, t, w, c, s in games]
    for game_id, *_ in games:
        assert storage.turns(game_id) == [json.loads(v) for g, v in turns if g == game_id]
        assert storage.rounds(game_id) == [json.loads(r) for g, r in rounds if g == game_id]
        assert storage.photo_count(game_id) == sum(1 for p in photos if p[0] == game_id)
    for game_id, photo_id, data, content_type in photos:
        assert storage.photo(game_id, photo_id) == (data, content_type)
    for game_id, reading_id, photo_id, reading, detections in readings:
        row = storage.reading(game_id, reading_id)
        assert (row.photo_id, row.reading, row.detections) == (photo_id, json.loads(reading),
                                                                detections)
    # Stamped 0001 (release 0.1.0's tables), then upgraded to the newest revision.
    from alembic.script import ScriptDirectory

    from app.server.dbopen import alembic_config

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head != "0001"
    assert raw_rows(path, "SELECT version_num FROM alembic_version") == [(head,)]
    # And it goes on: a new game, then opened again (now through Alembic's revision).
    storage.create_game({"players": ["Fay", "Gus"]}, {"phase": "setup"})
    storage.close()
    assert len(Storage(path).games()) == 3
