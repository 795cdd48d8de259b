"""A phone on the game's live socket (`/api/games/{id}/live`), as the camera tests use it:
connect as a named camera, send the table photo as a frame, wait for the server's answers."""

from __future__ import annotations

from tests.server_helpers import GROUP_9S, RUN_R2_R5, table_photo

FIRST_MELD = table_photo(RUN_R2_R5, GROUP_9S)


def phone(client, game, camera: str | None):
    named = f"&camera={camera}" if camera else ""
    ws = client.websocket_connect(f"/api/games/{game['id']}/live?token={game['token']}{named}")
    ws.__enter__()
    assert ws.receive_json()["type"] == "game"
    return ws


def until_pong(ws) -> list[dict]:
    """Every message the socket had before the answer to a ping sent now."""
    ws.send_text('{"type": "ping"}')
    messages = []
    while (message := ws.receive_json()) != {"type": "pong"}:
        messages.append(message)
    return messages


def read_frame(ws) -> dict:
    """Send the table photo as a frame; its reading."""
    ws.send_bytes(FIRST_MELD)
    while (message := ws.receive_json())["type"] != "reading":
        assert message["type"] not in ("error", "camera-taken"), message
    return message


def stats(client, game) -> dict:
    return client.get(f"/api/games/{game['id']}/frames/stats",
                      headers={"X-Token": game["token"]}).json()


def taken(messages) -> list[dict]:
    return [m for m in messages if m["type"] == "camera-taken"]
