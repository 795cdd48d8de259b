"""What every live socket does the same way: receive the next message within the rate
(`app/server/limits.py`), telling the sender once per run of refusals and closing on a
flood. The routes decide what a message means."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import WebSocket

from app.server.limits import SOCKET_BURST, SOCKET_RATE, MessageRate

RATE_WORDS = (f"too many messages: a live socket may send {SOCKET_RATE:g} a second "
              f"(bursts of {SOCKET_BURST}); the ones over that were dropped")
FLOOD_WORDS = "too many messages, too fast: socket closed"


async def receive_within(ws: WebSocket, rate: MessageRate,
                         say: Callable[[dict], None]) -> dict | None:
    """The next message the rate lets through, or None when the socket is done (the
    client went away, or it flooded and was closed with 1008). A refused message is
    dropped; `say` tells the sender once per run of refusals, not once per message."""
    while True:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return None
        if rate.take():
            return message
        if rate.flooding:
            await ws.close(code=1008, reason=FLOOD_WORDS)
            return None
        if rate.refused_in_a_row == 1:
            say({"type": "error", "detail": RATE_WORDS, "refused": rate.refused})
