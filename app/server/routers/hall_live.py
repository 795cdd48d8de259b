"""The hall's live socket: `/api/tournaments/{id}/live`, for the director's console (the
director token) and the big screen (the watch token). It says what changed; the page
fetches it (`app/server/hallfeed.py`)."""

from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from app.server.auth import same, token_of
from app.server.hallfeed import PARTS, SCREEN_PARTS, HallFeed, TooMany
from app.server.limits import MessageRate
from app.server.routers.sockets import receive_within
from app.server.routers.tournaments import watcher

router = APIRouter(tags=["tournaments"])


def feed(ws: WebSocket) -> HallFeed:
    return ws.app.state.hallfeed


async def _refuse(ws: WebSocket, status: int, detail: str, message_id=None) -> None:
    """Refused before the socket is accepted: an HTTP answer with words where the server
    can send one (uvicorn can), else a close code of 4000 + the status."""
    if "websocket.http.response" in ws.scope.get("extensions", {}):
        body = {"detail": detail, **({"message_id": message_id} if message_id else {})}
        await ws.send_denial_response(JSONResponse(body, status_code=status))
    else:
        await ws.close(code=4000 + status, reason=detail[:120])


@router.websocket("/api/tournaments/{tournament_id}/live")
async def live(ws: WebSocket, tournament_id: str):
    """What changed in the tournament, as it is stored: `{"type": "changed", "parts":
    [...], "tables": [...]}` with parts among "tables", "calls", "standings", "settings"
    and "log" (the watch token hears "standings" only, and no table numbers); the page
    fetches those parts. First `{"type": "hello", "role", "parts"}`. Text `{"type":
    "ping"}` gets `{"type": "pong"}`. The token (`?token=`) is checked before the socket
    is accepted: a refusal is an HTTP 401/403/404 with `{"detail"}`."""
    try:
        row = watcher(ws, tournament_id)
    except HTTPException as error:
        await _refuse(ws, error.status_code, str(error.detail),
                      getattr(error, "message_id", None))
        return
    director = same(token_of(ws) or "", row.director_token)
    hall_feed = feed(ws)
    try:
        listening = hall_feed.subscribe(row.id, director)
    except TooMany as error:
        await _refuse(ws, 429, str(error))
        return
    await ws.accept()

    async def sender():
        try:
            await ws.send_json({"type": "hello", "role": "director" if director else "screen",
                                "parts": list(PARTS) if director else sorted(SCREEN_PARTS)})
            while True:
                for message in await listening.next():
                    await ws.send_json(message)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass  # the socket went away; the receiving side ends too

    sending = asyncio.get_running_loop().create_task(sender())
    rate = MessageRate()
    try:
        while (message := await receive_within(ws, rate, listening.say)) is not None:
            try:
                kind = json.loads(message.get("text") or "").get("type")
            except (ValueError, AttributeError):
                kind = None
            if kind == "ping":
                listening.say({"type": "pong"})
            else:
                listening.say({"type": "error", "detail": "this socket only listens: send "
                               "nothing but {\"type\": \"ping\"}"})
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        hall_feed.unsubscribe(row.id, listening)
        sending.cancel()
