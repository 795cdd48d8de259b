"""A phone that reconnects to another server process: that process's new tracker starts
from the table stored last (`app.server.reconnect`), not from nothing. Two apps on one
database (a SQLite file, or a real PostgreSQL): the phone streams to A, then to B, which
has never seen the game's camera. Two real processes and a kill -9: tests/test_server_hall.py.
"""

from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient

from tests.live_helpers import FIRST_MELD, phone
from tests.server_helpers import h, make_app, turn_body
from tests.test_server_bump import bumped
from tests.test_server_live_hidden import code, send, settle, with_hand


def _end_turn(client, game) -> dict:
    answer = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                         json=turn_body(client, game))
    assert answer.status_code == 200, answer.text
    return answer.json()


def _on_a(client, game) -> dict:
    """On process A: the table settles, Ann lays it as her first meld."""
    ws = phone(client, game, "ann-phone")
    try:
        reading = settle(ws)["reading"]
    finally:
        ws.__exit__(None, None, None)
    assert _end_turn(client, game)["legal"]
    return reading


def test_b_starts_from_the_stored_table_with_a_hand_over_it(client, game, tmp_path):
    reading = _on_a(client, game)
    with TestClient(make_app(tmp_path)) as b:
        ws = phone(b, game, "ann-phone")
        try:
            # The phone comes back to B while a hand rests over the table.
            hand = with_hand(FIRST_MELD, reading)
            first = send(ws, hand)
            # The first message already holds the table, stable, in the stored reading's
            # tiles, and names those the hand hides.
            assert first["stable"] and not first["changed"]
            assert first["reading"]["reading_id"] == reading["reading_id"]
            assert len(first["reading"]["tiles"]) == 7 and first["hidden"]
            for _ in range(5):
                message = send(ws, hand)
                assert not message["changed"], message  # B stores no table without them
            hidden = sorted(code(reading["tiles"][i]) for i in message["hidden"])
            verdict = _end_turn(b, game)
        finally:
            ws.__exit__(None, None, None)
    # Ben's turn, judged on B: nothing was played, nothing left.
    assert verdict["player"] == "Ben" and verdict["played"] == []
    assert verdict["left_table"] == [] and sorted(verdict["hidden"]) == hidden


def test_a_correction_made_on_a_holds_on_b(client, game, tmp_path):
    reading = _on_a(client, game)
    tile = reading["tiles"][0]
    wrong = "K13" if code(tile) != "K13" else "K12"
    corrected = client.post(f"/api/games/{game['id']}/corrections", headers=h(game),
                            json={"tile_id": tile["id"], "code": wrong})
    assert corrected.status_code == 200, corrected.text
    with TestClient(make_app(tmp_path)) as b:
        ws = phone(b, game, "ann-phone")
        try:
            # Every frame reads the tile as it was read first; the correction holds.
            messages = [send(ws, FIRST_MELD) for _ in range(6)]
        finally:
            ws.__exit__(None, None, None)
    assert messages[0]["stable"]
    assert not any(m["changed"] for m in messages), [m["reading"]["reading_id"]
                                                      for m in messages]
    shown = messages[-1]["reading"]["tiles"]
    assert code(shown[0]) == wrong
    assert sorted(code(t) for t in shown) == sorted(
        wrong if t["id"] == tile["id"] else code(t) for t in reading["tiles"])


def test_another_view_starts_empty(client, game, tmp_path):
    """A frame that does not show the stored table where it was (another phone, or this
    one moved): the tracker starts empty, as a new camera's does."""
    reading = _on_a(client, game)
    size = np.linalg.norm(np.subtract(reading["tiles"][0]["corners"][3],
                                      reading["tiles"][0]["corners"][0]))
    moved, _m = bumped(FIRST_MELD, 0.0, (-2.0 * size, 1.5 * size))
    with TestClient(make_app(tmp_path)) as b:
        ws = phone(b, game, "ann-phone")
        try:
            messages = [send(ws, moved) for _ in range(4)]
        finally:
            ws.__exit__(None, None, None)
    assert not messages[0]["stable"]
    # Once held, its own table is stored: a new reading of its tiles, where this view
    # shows them.
    assert any(m["changed"] for m in messages)
    last = messages[-1]["reading"]
    assert last["reading_id"] != reading["reading_id"] and len(last["tiles"]) == 7
