"""The tournament hall's rows: tournaments, players, rounds, tables, referee calls and the
audit log. SQL only, like `storage.py`, on the same engine and write lock.

The audit log has an add and a read here and nothing else: no method updates or deletes
it, and the database's triggers (migration 0002) refuse it even to hand-written SQL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from app.server.dbtables import (
    hall_calls,
    hall_log,
    hall_players,
    hall_rounds,
    hall_tables,
    tournaments,
)
from app.server.storage import Storage, new_id, new_token

__all__ = ["HallStore", "TournamentRow", "Taken"]


class Taken(Exception):
    """A row that is already there (a round seated twice, a name registered twice)."""


@dataclass
class TournamentRow:
    id: str
    director_token: str
    watch_token: str
    created_at: float
    name: str
    format: dict
    settings: dict


class HallStore:
    def __init__(self, storage: Storage):
        self.storage = storage
        self.engine = storage.engine
        # Called (db, tournament id, what) inside each write's transaction: the live feed
        # (`hallfeed.HallFeed.stored`) tells the console and the big screen.
        self.changed: Callable[[Connection, str, str], None] | None = None

    def _changed(self, db: Connection, tournament_id: str, what: str) -> None:
        if self.changed is not None:
            self.changed(db, tournament_id, what)

    # -- tournaments -----------------------------------------------------------------------
    def create(self, name: str, fmt: dict, settings: dict, *, row_id: str | None = None,
               tokens: tuple[str, str] | None = None, created_at: float | None = None,
               db: Connection | None = None) -> TournamentRow:
        director, watch = tokens or (new_token(), new_token())
        row = TournamentRow(row_id or new_id(), director, watch, created_at or time.time(),
                            name, fmt, settings)
        statement = insert(tournaments).values(
            id=row.id, director_token=row.director_token, watch_token=row.watch_token,
            created_at=row.created_at, name=name, format=json.dumps(fmt),
            settings=json.dumps(settings))
        self._write(statement, db)
        return row

    def tournament(self, tournament_id: str) -> TournamentRow | None:
        with self.engine.connect() as db:
            row = db.execute(select(tournaments).where(tournaments.c.id == tournament_id)).first()
        if row is None:
            return None
        return TournamentRow(row.id, row.director_token, row.watch_token, row.created_at,
                             row.name, json.loads(row.format), json.loads(row.settings))

    def save_format(self, db: Connection, tournament_id: str, fmt: dict) -> None:
        db.execute(update(tournaments).where(tournaments.c.id == tournament_id).values(
            format=json.dumps(fmt)))

    def save_settings(self, db: Connection, tournament_id: str, settings: dict) -> None:
        db.execute(update(tournaments).where(tournaments.c.id == tournament_id).values(
            settings=json.dumps(settings)))

    # -- players ---------------------------------------------------------------------------
    def add_players(self, db: Connection, tournament_id: str, names: list[str]) -> None:
        start = db.execute(select(func.count()).select_from(hall_players).where(
            hall_players.c.tournament_id == tournament_id)).scalar_one()
        try:
            for offset, name in enumerate(names, 1):
                with db.begin_nested():
                    db.execute(insert(hall_players).values(
                        tournament_id=tournament_id, name=name, number=start + offset))
        except IntegrityError as error:
            raise Taken(name) from error
        self._changed(db, tournament_id, "players")

    def players(self, tournament_id: str) -> list[str]:
        query = select(hall_players.c.name).where(
            hall_players.c.tournament_id == tournament_id).order_by(hall_players.c.number)
        with self.engine.connect() as db:
            return list(db.execute(query).scalars())

    # -- rounds and tables -----------------------------------------------------------------
    def add_round(self, db: Connection, tournament_id: str, number: int, seating: dict,
                  created_at: float | None = None) -> None:
        try:
            with db.begin_nested():
                db.execute(insert(hall_rounds).values(
                    tournament_id=tournament_id, number=number,
                    created_at=created_at or time.time(), seating=json.dumps(seating)))
        except IntegrityError as error:
            raise Taken(f"round {number}") from error

    def add_table(self, db: Connection, tournament_id: str, round_number: int, number: int,
                  game_id: str) -> None:
        db.execute(insert(hall_tables).values(tournament_id=tournament_id, round=round_number,
                                              number=number, game_id=game_id))

    def seatings(self, tournament_id: str) -> list[dict]:
        """Each round's seating, round 1 first."""
        query = select(hall_rounds.c.seating).where(
            hall_rounds.c.tournament_id == tournament_id).order_by(hall_rounds.c.number)
        with self.engine.connect() as db:
            return [json.loads(s) for s in db.execute(query).scalars()]

    def tables(self, tournament_id: str) -> list[tuple[int, int, str]]:
        """(round, table number, game id) of every table, in order."""
        query = select(hall_tables.c.round, hall_tables.c.number, hall_tables.c.game_id).where(
            hall_tables.c.tournament_id == tournament_id).order_by(
            hall_tables.c.round, hall_tables.c.number)
        with self.engine.connect() as db:
            return [tuple(r) for r in db.execute(query)]

    # -- the audit log: add and read, nothing else ------------------------------------------
    def log(self, db: Connection, tournament_id: str, kind: str, body: dict, reason: str,
            by: str, created_at: float | None = None) -> int:
        statement = insert(hall_log).values(
            tournament_id=tournament_id, created_at=created_at or time.time(), kind=kind,
            body=json.dumps(body), reason=reason, by=by)
        entry = int(db.execute(statement).inserted_primary_key[0])
        self._changed(db, tournament_id, kind)
        return entry

    def entries(self, tournament_id: str) -> list[dict]:
        query = select(hall_log).where(hall_log.c.tournament_id == tournament_id).order_by(
            hall_log.c.id)
        with self.engine.connect() as db:
            return [{"id": r.id, "at": r.created_at, "kind": r.kind, "body": json.loads(r.body),
                     "reason": r.reason, "by": r.by} for r in db.execute(query)]

    # -- referee calls ---------------------------------------------------------------------
    def add_call(self, tournament_id: str, game_id: str, photo_id: str | None) -> int:
        statement = insert(hall_calls).values(tournament_id=tournament_id, game_id=game_id,
                                              created_at=time.time(), photo_id=photo_id)
        with self.storage.transaction() as db:
            call_id = int(db.execute(statement).inserted_primary_key[0])
            self._changed(db, tournament_id, "call")
            return call_id

    def answer_call(self, db: Connection, tournament_id: str, call_id: int,
                    answer: str) -> bool:
        """False when there is no such open call (answered already, or none)."""
        done = db.execute(update(hall_calls).where(
            hall_calls.c.id == call_id, hall_calls.c.tournament_id == tournament_id,
            hall_calls.c.answered_at.is_(None)).values(answered_at=time.time(), answer=answer))
        return done.rowcount == 1

    def calls(self, tournament_id: str) -> list[dict]:
        query = select(hall_calls).where(hall_calls.c.tournament_id == tournament_id).order_by(
            hall_calls.c.id)
        with self.engine.connect() as db:
            return [{"id": r.id, "game_id": r.game_id, "at": r.created_at,
                     "photo_id": r.photo_id, "answered_at": r.answered_at, "answer": r.answer}
                    for r in db.execute(query)]

    def _write(self, statement, db: Connection | None) -> None:
        if db is not None:
            db.execute(statement)
            return
        with self.storage.transaction() as tx:
            tx.execute(statement)
