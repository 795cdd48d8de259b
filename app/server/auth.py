"""Who may do what: the table token creates games, a game's token changes it, its watch
token only reads it. Tokens come as the `X-Token` header or the `token` query parameter
and are compared in constant time; every refusal is a 401 (no token) or 403 (wrong one)
before anything is read or changed."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from fastapi import Request

from app.server.messages import say
from app.server.refusals import Refused
from app.server.storage import GameRow


@dataclass(frozen=True)
class Access:
    game: GameRow
    can_play: bool  # False: the watch token, read-only


def token_of(request_or_ws) -> str | None:
    token = request_or_ws.headers.get("x-token") or request_or_ws.query_params.get("token")
    return token or None


def same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"),
                               expected.encode("utf-8", "replace"))


def check_table_token(request: Request, table_token: str) -> None:
    token = token_of(request)
    if token is None:
        raise Refused(401, say("token.table_missing"))
    if not same(token, table_token):
        raise Refused(403, say("token.table_wrong"))


def game_access(token: str | None, game: GameRow, *, play: bool) -> Access:
    """The access `token` gives to `game`; raises 401/403 when it is not enough."""
    if token is None:
        raise Refused(401, say("token.game_missing"))
    # Both comparisons always run, so the time taken says nothing about either token.
    is_player = same(token, game.token)
    is_watcher = same(token, game.watch_token)
    if not (is_player or is_watcher):
        raise Refused(403, say("token.game_wrong"))
    if play and not is_player:
        raise Refused(403, say("token.read_only"))
    return Access(game, is_player)
