"""The tiles a hand hides from the camera are known to every process on the database
(`app.server.hiddenshare`): the camera streams to process A, End turn reaches process B,
and B's verdict names them (not "left the table"). Two apps on one database, a SQLite file
and a real PostgreSQL; two real processes and a kill -9: tests/test_server_hall_hidden.py.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.live_helpers import FIRST_MELD, phone
from tests.server_helpers import h, make_app, turn_body
from tests.test_server_live_hidden import code, send, settle, with_hand


def _end_turn(client, game) -> dict:
    answer = client.post(f"/api/games/{game['id']}/turn/end", headers=h(game),
                         json=turn_body(client, game))
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_end_turn_on_b_names_the_tiles_a_hand_hides_from_a_camera(client, app, game,
                                                                   tmp_path):
    ws = phone(client, game, "ann-phone")
    try:
        reading = settle(ws)["reading"]
        with TestClient(make_app(tmp_path)) as b:
            assert _end_turn(b, game)["legal"]  # Ann's first meld, judged on B
            for _ in range(5):
                message = send(ws, with_hand(FIRST_MELD, reading))
                assert not message["changed"], message
            assert message["hidden"], "the hand hides no tile from the camera"
            hidden = sorted(code(reading["tiles"][i]) for i in message["hidden"])
            verdict = _end_turn(b, game)  # Ben's turn, with the hand over the table
            assert verdict["player"] == "Ben"
            assert verdict["played"] == [] and verdict["left_table"] == []
            assert not any("left the table" in p for p in verdict["problems"])
            assert sorted(verdict["hidden"]) == hidden
            assert any("hidden under something" in c for c in verdict["check"]), verdict
            # ... and as a message id the page words in its player's language.
            assert verdict["check_ids"][0] == {"id": "check.hidden", "params": {
                "count": len(hidden), "tiles": " ".join(verdict["hidden"])}}
            # The hand goes: A's camera sees every tile, and B hears of it as well.
            for _ in range(3):
                message = send(ws, FIRST_MELD)
            assert message["hidden"] == []
            last = _end_turn(b, game)
            assert last["player"] == "Ann" and last["hidden"] == [] and last["check"] == []
    finally:
        ws.__exit__(None, None, None)


def test_a_still_table_stores_its_hidden_tiles_once(client, app, game):
    storage = app.state.service.storage
    writes = []
    set_hidden = storage.set_hidden
    storage.set_hidden = lambda *args: (writes.append(args), set_hidden(*args))
    ws = phone(client, game, "ann-phone")
    try:
        reading = settle(ws)["reading"]
        assert writes[-1][1:] == (reading["reading_id"], [])
        before = len(writes)
        for _ in range(6):
            send(ws, FIRST_MELD)  # the same table: nothing new to store
        assert len(writes) == before
        message = send(ws, with_hand(FIRST_MELD, reading))
        while not message["hidden"]:
            message = send(ws, with_hand(FIRST_MELD, reading))
        stored = storage.hidden(game["id"], reading["reading_id"])
        assert [t["id"] for t in stored] == sorted(message["hidden"])
        assert [t["code"] for t in stored] == [code(reading["tiles"][i])
                                               for i in sorted(message["hidden"])]
        assert all(len(t["corners"]) == 4 for t in stored)
        # The frames' counts say how often a row was written, as the hall bench reads them.
        stats = client.get(f"/api/games/{game['id']}/frames/stats",
                           headers={"X-Token": game["token"]}).json()
        assert stats["hidden_writes"] == len(writes) >= 2
    finally:
        ws.__exit__(None, None, None)
