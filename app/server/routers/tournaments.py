"""The tournament hall: tournaments, rounds, the director's console, overrides, calls,
standings and exports. The director's token changes a tournament; its watch token (the
big screen) reads the standings only. Rules are in `app/server/tournaments.py`."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, File, Request, UploadFile
from fastapi.responses import PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool

from app.server import hallarchive
from app.server import hallschemas as hs
from app.server.auth import same, token_of
from app.server.hallstore import TournamentRow
from app.server.messages import say
from app.server.refusals import Refused
from app.server.routers.deps import MAX_ID, Play, table
from app.server.tournaments import HallService

router = APIRouter(tags=["tournaments"])
BASE = "/api/tournaments/{tournament_id}"


def hall(request: Request) -> HallService:
    return request.app.state.hall


def _tournament(request: Request, tournament_id: str, director: bool) -> TournamentRow:
    token = token_of(request)
    if token is None:
        raise Refused(401, say("token.tournament_missing"))
    row = hall(request).store.tournament(tournament_id) if len(tournament_id) <= MAX_ID \
        else None
    if row is None:
        raise Refused(404, say("tournament.not_found", tournament=repr(tournament_id[:MAX_ID])))
    is_director = same(token, row.director_token)
    is_watcher = same(token, row.watch_token)
    if not (is_director or is_watcher):
        raise Refused(403, say("token.tournament_wrong"))
    if director and not is_director:
        raise Refused(403, say("token.screen_read_only"))
    return row


def director(request: Request, tournament_id: str) -> TournamentRow:
    return _tournament(request, tournament_id, True)


def watcher(request: Request, tournament_id: str) -> TournamentRow:
    return _tournament(request, tournament_id, False)


Director = Annotated[TournamentRow, Depends(director)]
Watcher = Annotated[TournamentRow, Depends(watcher)]


def _summary(request: Request, row: TournamentRow, tokens: bool) -> dict:
    svc = hall(request)
    out = {**svc.standings_json(row.id), "settings": row.settings,
           "players": svc.store.players(row.id), "format_switches": row.format}
    if tokens:
        out["director_token"] = row.director_token
        out["watch_token"] = row.watch_token
    return out


@router.post("/api/tournaments", status_code=201, dependencies=[Depends(table)])
def create(body: hs.TournamentCreate, request: Request):
    """A new tournament (table token); the answer holds its director and watch tokens."""
    row = hall(request).create(body.name, body.format, body.switches, body.timer)
    return _summary(request, row, True)


@router.get(BASE)
def get(request: Request, row: Watcher):
    """The tournament; with its tokens for the director (the console links the big screen)."""
    return _summary(request, row, same(token_of(request) or "", row.director_token))


@router.post(BASE + "/players")
def register(body: hs.Players, request: Request, row: Director):
    """Register players (before round 1 is seated)."""
    return {"players": hall(request).register(row.id, body.players)}


@router.post(BASE + "/settings")
def settings(body: hs.HallSettings, request: Request, row: Director):
    """Hall-wide settings: the timer preset for tables seated from now on; the format
    and its switches (edition, rounds, ...) until round 1 is seated."""
    return hall(request).change(row.id, body.timer, body.format, body.switches)


@router.post(BASE + "/rounds")
def seat(body: hs.SeatRound, request: Request, row: Director):
    """Seat the next round: one game per table, each with its table number."""
    seating = hall(request).seat(row.id, body.round, body.seating, body.seed)
    return {"round": body.round, "seating": seating.to_dict(),
            "tables": hall(request).console(row.id)["tables"]}


@router.post(BASE + "/finals")
def seat_finals(body: hs.SeatFinals, request: Request, row: Director):
    """Seat the next finals stage: the semi-finals (1,3,5,7 / 2,4,6,8) or the final table,
    from the qualifying standings or the semi-finals' rankings."""
    seating = hall(request).seat_finals(row.id, body.stage)
    return {"stage": body.stage, "seating": seating.to_dict(),
            "tables": hall(request).console(row.id)["tables"]}


@router.post(BASE + "/pause")
def pause(body: hs.Pause, request: Request, row: Director):
    """Pause (or, `{"paused": false}`, resume) every table's turn timer."""
    return hall(request).pause_all(row.id, body.paused)


@router.get(BASE + "/console")
def console(request: Request, row: Director):
    """Every table of the round playing at a glance, and the open referee calls."""
    return hall(request).console(row.id)


@router.get(BASE + "/standings")
def standings(request: Request, row: Watcher):
    return hall(request).standings_json(row.id)


@router.post(BASE + "/overrides", status_code=201)
def override(body: hs.Override, request: Request, row: Director):
    """An override with its reason, appended to the audit log (never changed after)."""
    return hall(request).override(row.id, body.kind, body.body, body.reason, body.by)


@router.get(BASE + "/log")
def audit_log(request: Request, row: Director):
    """The audit log, oldest first. It has no route to change or delete an entry."""
    return {"log": hall(request).log(row.id)}


@router.post(BASE + "/calls/{call_id}/answer")
def answer(call_id: int, body: hs.Answer, request: Request, row: Director):
    return hall(request).answer(row.id, call_id, body.answer)


@router.get(BASE + "/turns/{round_number}/{table_number}/{turn}")
def dispute(round_number: int, table_number: int, turn: int, request: Request,
            row: Director):
    """One turn of one table: verdict, before/after photos, corrections, overrides."""
    return hall(request).dispute(row.id, round_number, table_number, turn)


@router.get(BASE + "/export.json")
def export_json(request: Request, row: Director):
    """Standings, seatings, results, every game with its turns, and the audit log."""
    return hall(request).export(row.id)


@router.get(BASE + "/standings.csv", response_class=PlainTextResponse)
def standings_csv(request: Request, row: Watcher):
    return PlainTextResponse(hall(request).standings_csv(row.id), media_type="text/csv")


@router.get(BASE + "/games.csv", response_class=PlainTextResponse)
def games_csv(request: Request, row: Director):
    return PlainTextResponse(hall(request).games_csv(row.id), media_type="text/csv")


@router.get(BASE + "/archive")
def archive(request: Request, row: Director):
    """The whole tournament: every row of it and its games, photos as base64."""
    return Response(hallarchive.dumps(hallarchive.export_archive(
        hall(request).games.storage, row.id)), media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="tournament-{row.id}.json"'})


@router.post("/api/tournaments/import", status_code=201, dependencies=[Depends(table)])
async def import_archive(request: Request,
                         archive: Annotated[UploadFile, File(description="the archive")]):
    """A tournament archive into this server (table token); refused whole if any of its
    rows is here already."""
    try:
        data = json.loads(await archive.read())
    except (ValueError, UnicodeDecodeError):
        raise Refused(400, say("archive.not_json")) from None
    storage = hall(request).games.storage
    tournament_id = await run_in_threadpool(hallarchive.import_archive, storage, data)
    return _summary(request, hall(request).row(tournament_id), False)


@router.post("/api/games/{game_id}/call", status_code=201)
def call_referee(request: Request, access: Play):
    """The table calls the referee; the call carries the table's current picture."""
    return hall(request).call(access.game.id)
