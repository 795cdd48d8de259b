"""A database the server must not serve from is refused before it serves, in one line.

Each case through `python -m app serve` as a user starts it: exit status 2, one line on
stderr naming the problem, no traceback, and the file left as it was.
"""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from app.server.storage import DatabaseRefused, Storage
from tests.db_helpers import copy_v010, read_only_file, remount_read_only, serve, tmpfs

PAGE = 4096


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(data_dir, *words, db=None):
    args = ["--data", str(data_dir)] + (["--db", str(db)] if db is not None else [])
    done = serve(*args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr + done.stdout
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert "Open on a phone" not in done.stdout  # it never served
    return lines[0]


def _damage(path, pages) -> None:
    data = bytearray(path.read_bytes())
    for page in pages:  # 1-based, as SQLite counts them
        data[(page - 1) * PAGE:page * PAGE] = bytes((i * 37 + 11) % 256 for i in range(PAGE))
    path.write_bytes(bytes(data))


def test_an_empty_file_is_refused_not_started_as_a_new_database(tmp_path):
    db = tmp_path / "rummikub.sqlite3"
    db.write_bytes(b"")
    line = _refused(tmp_path, "empty (0 bytes)", "delete it", str(db))
    assert db.stat().st_size == 0 and not (tmp_path / "rummikub.sqlite3-wal").exists(), line


@pytest.mark.parametrize("pages", [(4,), (20, 21)], ids=["games-table", "photo-pages"])
def test_a_file_with_damaged_pages_is_refused(tmp_path, pages):
    db = copy_v010(tmp_path)
    _damage(db, pages)
    before = _digest(db)
    _refused(tmp_path, "is damaged", "backup")
    assert _digest(db) == before


def test_another_programs_sqlite_file_is_refused_naming_its_tables(tmp_path):
    db = tmp_path / "contacts.sqlite3"
    other = sqlite3.connect(db)
    other.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    other.commit()
    other.close()
    _refused(tmp_path, "another program's database", "contacts", db=db)
    assert {r[0] for r in sqlite3.connect(db).execute(
        "SELECT name FROM sqlite_master")} == {"contacts"}


def test_another_programs_alembic_database_is_refused(tmp_path):
    db = tmp_path / "shop.sqlite3"
    other = sqlite3.connect(db)
    other.executescript("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY);"
                        "INSERT INTO alembic_version VALUES ('ae1027a6acf');"
                        "CREATE TABLE orders (id INTEGER PRIMARY KEY);")
    other.close()
    _refused(tmp_path, "another program's database", "orders", "ae1027a6acf", db=db)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    db = tmp_path / "notes.sqlite3"
    db.write_text("shopping: milk, tiles\n")
    _refused(tmp_path, "not a SQLite database", db=db)
    assert db.read_text() == "shopping: milk, tiles\n"


def test_a_schema_newer_than_this_release_is_refused(tmp_path):
    db = copy_v010(tmp_path)
    Storage(db).close()  # stamped 0001
    newer = sqlite3.connect(db)
    newer.execute("UPDATE alembic_version SET version_num='0042'")
    newer.commit()
    newer.close()
    _refused(tmp_path, "newer release", "0042")


def test_an_unknown_schema_number_without_alembic_is_refused(tmp_path):
    db = copy_v010(tmp_path)
    newer = sqlite3.connect(db)
    newer.execute("UPDATE meta SET value='7' WHERE key='schema'")
    newer.commit()
    newer.close()
    with pytest.raises(DatabaseRefused, match="schema number 7"):
        Storage(db)


def test_a_read_only_folder_is_named_as_such(tmp_path):
    with tmpfs(tmp_path / "ro") as folder:
        copy_v010(folder)
        remount_read_only(folder)
        _refused(folder, f"the folder {folder} is read-only")
        _refused(folder / "new", f"cannot make the folder {folder / 'new'}: it is read-only")


def test_a_read_only_file_is_named_as_such(tmp_path):
    db = copy_v010(tmp_path)
    with read_only_file(db):
        _refused(tmp_path, f"the database file {db} is read-only")


def test_a_full_disk_at_start_is_named_as_such(tmp_path):
    from tests.test_server_disk_full import fill

    with tmpfs(tmp_path / "full", "3m") as folder:
        db = copy_v010(folder)
        fill(folder / "filler")
        _refused(folder, f"the disk of {folder} is full", "free space there")
        (folder / "filler").unlink()
        assert len(Storage(db).games()) == 2


def test_a_folder_given_as_the_database_is_refused(tmp_path):
    _refused(tmp_path, "is a folder", db=tmp_path)


def test_a_url_of_another_kind_of_database_is_refused(tmp_path):
    _refused(tmp_path, "SQLite file or in PostgreSQL", "not in mysql",
             db="mysql://u@localhost/games")


def test_a_good_release_0_1_0_file_still_starts(tmp_path):
    """The checks refuse only what is wrong: the real file of the last release passes."""
    copy_v010(tmp_path)
    storage = Storage(tmp_path / "rummikub.sqlite3")
    assert len(storage.games()) == 2
