"""The storage module: WAL, durable commits, all-or-nothing writes, restarts."""

from __future__ import annotations

import sqlite3

import pytest

from app.server.storage import Storage


def test_the_database_runs_in_wal_mode_with_full_sync(tmp_path):
    storage = Storage(tmp_path / "db.sqlite3")
    assert storage.journal_mode == "wal"
    with storage.transaction() as db:
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_a_transaction_is_all_or_nothing(tmp_path):
    storage = Storage(tmp_path / "db.sqlite3")
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "playing", "n": 0})
    with storage.transaction() as db:
        storage.add_turn(db, game.id, 1, 1, "Ann", {"legal": True}, None, None)
    with pytest.raises(sqlite3.IntegrityError):
        with storage.transaction() as db:
            storage.save_state(game.id, {"phase": "playing", "n": 1}, db)
            storage.add_turn(db, game.id, 1, 1, "Ben", {"legal": False}, None, None)  # twice
    assert storage.game(game.id).state == {"phase": "playing", "n": 0}
    assert storage.turns(game.id) == [{"legal": True}]


def test_everything_is_there_after_reopening(tmp_path):
    path = tmp_path / "db.sqlite3"
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
    assert again.reading_by_photo(game.id, photo).id == reading
    # A photo or reading of another game is not this game's.
    other = again.create_game({"players": ["Cy", "Di"]}, {"phase": "setup"})
    assert again.photo(other.id, photo) is None and again.reading(other.id, reading) is None
