"""Games, rounds, turns, the timer, the score sheet and the history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import PlainTextResponse

from app.server import schemas
from app.server.routers.deps import Play, Watch, service, table

router = APIRouter(prefix="/api/games", tags=["games"])

ERRORS = {401: {"model": schemas.Problem, "description": "no token"},
          403: {"model": schemas.Problem, "description": "wrong or read-only token"},
          404: {"model": schemas.Problem, "description": "no such game"},
          409: {"model": schemas.Problem, "description": "not now (e.g. no round running)"},
          422: {"model": schemas.Problem, "description": "bad request body"}}


@router.post("", status_code=201, response_model=schemas.Game, dependencies=[Depends(table)],
             responses=ERRORS)
def create_game(body: schemas.GameCreate, request: Request):
    """A new game (table token). The answer holds the game's `token` and `watch_token`."""
    svc = service(request)
    row = svc.create(body.players, body.edition, body.settings.overrides(),
                     body.timer.model_dump() if body.timer else None)
    return svc.view(row.id, with_tokens=True)


@router.get("/{game_id}", response_model=schemas.Game, responses=ERRORS)
def get_game(request: Request, access: Watch):
    """The whole game: players, round, running turn with its countdown, table, sheet."""
    return service(request).view(access.game.id, with_tokens=access.can_play)


@router.post("/{game_id}/rounds", response_model=schemas.Game, responses=ERRORS)
def start_round(request: Request, access: Play,
                body: Annotated[schemas.RoundStart | None, Body()] = None):
    """A round begins: the starter's turn starts and the timer runs."""
    svc = service(request)
    svc.start_round(access.game.id, body.starter if body else None)
    return svc.view(access.game.id, with_tokens=True)


def _timer(kind: str):
    def route(body: schemas.TurnRef, request: Request, access: Play):
        svc = service(request)
        svc.timer_event(access.game.id, kind, body.turn_id)
        return svc.view(access.game.id, with_tokens=True)

    route.__name__ = f"turn_{kind}"
    route.__doc__ = {"pause": "Pause the turn's timer.", "resume": "Resume the turn's timer.",
                     "extend": "Give the running turn more time (one of its extensions)."}[kind]
    return route


for _kind in ("pause", "resume", "extend"):
    router.add_api_route(f"/{{game_id}}/turn/{_kind}", _timer(_kind), methods=["POST"],
                         response_model=schemas.Game, responses=ERRORS)


@router.post("/{game_id}/turn/end", response_model=schemas.TurnVerdict, responses=ERRORS)
def end_turn(body: schemas.TurnEnd, request: Request, access: Play):
    """The player ends the turn named by `turn_id`: the referee judges the table before it
    against the latest stable reading (or the given photo's); the verdict is stored, then
    the next turn starts. A turn that has already ended (a second tap, or its time ran
    out) is a 409 and nothing changes."""
    return service(request).end_turn(access.game.id, body.photo_id, meant=body.turn_id)


@router.post("/{game_id}/round/out", response_model=schemas.Game, responses=ERRORS)
def going_out(request: Request, access: Play,
              body: Annotated[schemas.GoingOut | None, Body()] = None):
    """Someone went out: the running turn stops while the racks are counted (it cannot
    time out). `{"out": false}` goes back to the table and the turn's clock runs on."""
    svc = service(request)
    svc.going_out(access.game.id, body.out if body else True)
    return svc.view(access.game.id, with_tokens=True)


@router.post("/{game_id}/round/end", response_model=schemas.Game, responses=ERRORS)
def end_round(body: schemas.RoundEnd, request: Request, access: Play):
    """Score the round from every rack (RULES.md §8) and add it to the sheet."""
    svc = service(request)
    svc.end_round(access.game.id, body.winner, body.racks, body.pool_empty)
    return svc.view(access.game.id, with_tokens=True)


@router.post("/{game_id}/finish", response_model=schemas.Game, responses=ERRORS)
def finish(request: Request, access: Play):
    """The game is over (between rounds)."""
    svc = service(request)
    svc.finish(access.game.id)
    return svc.view(access.game.id, with_tokens=True)


@router.get("/{game_id}/sheet.csv", response_class=PlainTextResponse, responses=ERRORS)
def sheet_csv(request: Request, access: Watch):
    """The score sheet as CSV: `player,round 1,...,total`."""
    return PlainTextResponse(service(request).sheet_csv(access.game.id), media_type="text/csv")


@router.get("/{game_id}/history", response_model=schemas.History, responses=ERRORS)
def history(request: Request, access: Watch):
    """Every judged turn, oldest first, with the photos that decided it."""
    return {"turns": service(request).history(access.game.id)}
