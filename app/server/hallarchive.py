"""A whole tournament as one JSON archive, and back: the tournament's rows (players,
rounds, tables, calls, the audit log) and every table's game with its rounds, turns,
readings, the tiles each reading's camera did not see (`reading_hidden`, under a hand when
it was stored) and photos (bytes as base64). Ids and tokens are kept, so the table sheets'
links and the big screen's link work on the server it is imported into.

An archive of the first schema (written before `reading_hidden` existed) still imports:
its readings simply have no hidden tiles, as they had none on the server that wrote it.

Import is one transaction into a server that holds none of these rows: any id already
there (the same tournament twice, a game of another server) refuses it whole.
"""

from __future__ import annotations

import base64
import json

from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError

from app.server.dbtables import (
    games,
    hall_calls,
    hall_log,
    hall_players,
    hall_rounds,
    hall_tables,
    photos,
    reading_hidden,
    readings,
    rounds,
    tournaments,
    turns,
)
from app.server.games import BadInput, Conflict
from app.server.messages import say
from app.server.storage import Storage

SCHEMA = "rummikub-hall-archive/2"
# Schemas that import, with the tables each one lacks.
READS = {SCHEMA: (), "rummikub-hall-archive/1": ("reading_hidden",)}
BINARY = {"photos": ("data",), "readings": ("detections",)}
# The tournament's own tables, keyed by tournament_id, and the games' tables, by game_id.
HALL_TABLES = (("tournaments", tournaments, "id"), ("hall_players", hall_players, None),
               ("hall_rounds", hall_rounds, None), ("hall_tables", hall_tables, None),
               ("hall_log", hall_log, None), ("hall_calls", hall_calls, None))
GAME_TABLES = (("games", games, "id"), ("rounds", rounds, None), ("turns", turns, None),
               ("readings", readings, None), ("reading_hidden", reading_hidden, None),
               ("photos", photos, None))
ORDER = ("tournaments", "games", "hall_players", "hall_rounds", "hall_tables", "readings",
         "reading_hidden", "photos", "turns", "rounds", "hall_log", "hall_calls")


def _rows(db, table, where) -> list[dict]:
    out = []
    for row in db.execute(select(table).where(where).order_by(*table.primary_key.columns)):
        item = dict(row._mapping)
        for name in BINARY.get(table.name, ()):
            item[name] = base64.b64encode(bytes(item[name])).decode("ascii")
        out.append(item)
    return out


def export_archive(storage: Storage, tournament_id: str) -> dict:
    with storage.engine.connect() as db:
        data = {}
        for name, table, key in HALL_TABLES:
            column = table.c[key] if key else table.c.tournament_id
            data[name] = _rows(db, table, column == tournament_id)
        game_ids = [t["game_id"] for t in data["hall_tables"]]
        for name, table, key in GAME_TABLES:
            column = table.c[key] if key else table.c.game_id
            data[name] = _rows(db, table, column.in_(game_ids))
    return {"schema": SCHEMA, "tables": data}


def import_archive(storage: Storage, archive: object) -> str:
    """The tournament's id, once every row is stored; BadInput or Conflict, nothing stored."""
    schema = archive.get("schema") if isinstance(archive, dict) else None
    if not isinstance(schema, str) or schema not in READS:
        raise BadInput(say("archive.schema", schema=repr(SCHEMA)))
    order = [name for name in ORDER if name not in READS[schema]]
    data = archive.get("tables")
    if not isinstance(data, dict) or sorted(data) != sorted(order) or any(
            not isinstance(data[n], list) for n in order):
        raise BadInput(say("archive.tables", tables=", ".join(order)))
    if len(data["tournaments"]) != 1:
        raise BadInput(say("archive.one"))
    tables = {name: table for name, table, _ in HALL_TABLES + GAME_TABLES}
    try:
        with storage.transaction() as db:
            for name in order:
                table = tables[name]
                for row in data[name]:
                    if not isinstance(row, dict) or set(row) != set(table.c.keys()):
                        raise BadInput(say("archive.columns", table=name,
                                                columns=", ".join(table.c.keys())))
                    row = dict(row)
                    for column in BINARY.get(name, ()):
                        row[column] = base64.b64decode(row[column], validate=True)
                    db.execute(insert(table).values(**row))
            if not storage.target.is_sqlite:  # ids given by hand: move the counters past them
                for name in ("readings", "hall_log", "hall_calls"):
                    db.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                    f"GREATEST((SELECT MAX(id) FROM {name}), 1))"))
    except IntegrityError:
        raise Conflict(say("archive.taken")) from None
    except (ValueError, TypeError) as error:
        raise BadInput(say("archive.rows", error=str(error))) from None
    return data["tournaments"][0]["id"]


def dumps(archive: dict) -> bytes:
    return json.dumps(archive, separators=(",", ":")).encode()
