"""What every route needs: the game flow and the caller's access to a game."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.server.auth import Access, check_table_token, game_access, token_of
from app.server.games import GameService
from app.server.messages import say
from app.server.refusals import Refused

MAX_ID = 64


def service(request: Request) -> GameService:
    return request.app.state.service


def _game(request: Request, game_id: str, play: bool) -> Access:
    token = token_of(request)
    if token is None:
        # Refused before the id is even looked up: no token, no answer about games.
        game_access(None, None, play=play)
    row = service(request).storage.game(game_id) if len(game_id) <= MAX_ID else None
    if row is None:
        raise Refused(404, say("game.not_found", game=repr(game_id[:MAX_ID])))
    return game_access(token, row, play=play)


def play(request: Request, game_id: str) -> Access:
    """The game's token: may change the game."""
    return _game(request, game_id, True)


def watch(request: Request, game_id: str) -> Access:
    """The game's token or its watch token: may read the game."""
    return _game(request, game_id, False)


def table(request: Request) -> None:
    check_table_token(request, request.app.state.table_token)


Play = Annotated[Access, Depends(play)]
Watch = Annotated[Access, Depends(watch)]
