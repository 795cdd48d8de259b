"""The migrations build exactly release 0.1.0's tables, and the tables the code uses."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine

from app.server.dbopen import MIGRATIONS_DIR, alembic_config
from app.server.dbtables import TABLE_NAMES, metadata
from app.server.storage import Storage
from tests.db_helpers import DB_V010, raw_rows

TABLES = ("meta", "games", "photos", "readings", "turns", "rounds")


def _shape(path):
    """Each table's columns (name, type, not null, default, key), keys and indexes."""
    shape = {}
    for table in TABLES:
        shape[table] = (
            raw_rows(path, f"PRAGMA table_info({table})"),
            raw_rows(path, f"PRAGMA foreign_key_list({table})"),
            sorted((name, unique) for _, name, unique, origin, _ in
                   raw_rows(path, f"PRAGMA index_list({table})") if origin == "c"),
        )
    shape["autoincrement"] = [r[0] for r in raw_rows(
        path, "SELECT name FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'")
        if r[0] in TABLES]  # later revisions' tables (the hall's, 0002) come on top
    return shape


def test_a_new_database_has_release_0_1_0_tables_column_for_column(tmp_path):
    Storage(tmp_path / "new.sqlite3").close()
    assert _shape(tmp_path / "new.sqlite3") == _shape(DB_V010)
    assert raw_rows(tmp_path / "new.sqlite3", "SELECT * FROM meta") == [("schema", "1")]


def test_the_migrated_schema_is_the_one_the_code_uses(tmp_path):
    Storage(tmp_path / "new.sqlite3").close()
    engine = create_engine(f"sqlite:///{tmp_path / 'new.sqlite3'}")
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), metadata)
    engine.dispose()
    assert diff == []


def test_the_migrations_ship_in_the_package():
    import ast

    from alembic.script import ScriptDirectory

    assert (MIGRATIONS_DIR / "env.py").is_file()
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    assert heads and heads[0] >= "0001"
    # The packaging lives in setup.py (it maps models/ into the wheel): its package_data
    # must carry the migration template.
    tree = ast.parse((MIGRATIONS_DIR.parents[2] / "setup.py").read_text())
    (data,) = [ast.literal_eval(k.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
               for k in node.keywords if k.arg == "package_data"]
    assert "*.mako" in data[""] or "*.mako" in data.get("app.server.migrations", [])
    for folder in (MIGRATIONS_DIR, MIGRATIONS_DIR / "versions"):
        assert (folder / "__init__.py").is_file(), f"{folder} is not a package: not shipped"


@pytest.mark.parametrize("table", TABLES)
def test_each_table_is_declared_once(table):
    assert table in metadata.tables


def test_postgresql_gets_the_same_tables_and_refuses_what_is_not_its_own(postgres_url):
    from sqlalchemy import inspect, text

    from app.server.storage import DatabaseRefused

    storage = Storage(postgres_url)
    with storage.engine.connect() as db:
        assert set(inspect(db).get_table_names()) == {*TABLE_NAMES, "alembic_version"}
        diff = compare_metadata(MigrationContext.configure(db), metadata)
        # PostgreSQL makes every key column NOT NULL; SQLite (as 0.1.0 made it) does not.
        keys = {("games", "id"), ("meta", "key"), ("photos", "id"), ("readings", "id")}
        assert [d for d in diff if not (d[0][0] == "modify_nullable" and d[0][2:4] in keys
                                        and d[0][5:] == (False, True))] == []
        assert db.execute(text("SELECT value FROM meta")).scalars().all() == ["1"]
    with storage.transaction() as db:
        db.execute(text("UPDATE alembic_version SET version_num='0042'"))
    storage.close()
    with pytest.raises(DatabaseRefused, match="newer release.*0042"):
        Storage(postgres_url)


def test_a_postgresql_database_of_another_program_is_refused(postgres_url):
    from sqlalchemy import create_engine

    from app.server.storage import DatabaseRefused

    engine = create_engine(postgres_url)
    with engine.begin() as db:
        db.exec_driver_sql("CREATE TABLE invoices (id serial PRIMARY KEY)")
    engine.dispose()
    with pytest.raises(DatabaseRefused, match="another program's database.*invoices"):
        Storage(postgres_url)


def _at_revision_0002(where) -> tuple[str, int]:
    """A database as the release before revision 0003 left it, holding a game and a
    reading: made by this code, then taken back to 0002 by Alembic."""
    from alembic import command
    from sqlalchemy import inspect

    storage = Storage(where)
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"})
    reading_id = storage.add_reading(game.id, {"tiles": []}, b"npz")
    with storage.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0002")
    with storage.engine.connect() as connection:
        assert "reading_hidden" not in inspect(connection).get_table_names()
    storage.close()
    return game.id, reading_id


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_a_revision_0002_database_upgrades_to_keep_the_hidden_tiles(db, tmp_path, request):
    where = (tmp_path / "old.sqlite3") if db == "sqlite" else request.getfixturevalue(
        "postgres_url")
    game_id, reading_id = _at_revision_0002(where)
    storage = Storage(where)  # upgraded on start
    try:
        assert storage.reading(game_id, reading_id).detections == b"npz"
        assert storage.hidden(game_id, reading_id) is None
        tiles = [{"id": 2, "code": "R5", "corners": [[0, 0], [1, 0], [1, 1], [0, 1]]}]
        storage.set_hidden(game_id, reading_id, tiles)
        assert storage.hidden(game_id, reading_id) == tiles
        storage.set_hidden(game_id, reading_id, [])  # the hand went: written over
        assert storage.hidden(game_id, reading_id) == []
        if db == "sqlite":  # (PostgreSQL's key columns differ as the test above says)
            with storage.engine.connect() as connection:
                assert compare_metadata(MigrationContext.configure(connection), metadata) == []
    finally:
        storage.close()
