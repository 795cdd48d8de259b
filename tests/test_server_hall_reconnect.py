"""A phone streaming to one of two real `rummikub serve` processes on one PostgreSQL: the
process is killed (SIGKILL) mid-stream, the phone reconnects to the other, whose tracker
starts from the last stable reading stored (`app.server.reconnect`): its first messages
already hold the table, and a turn judged there with a hand over the table plays nothing
and takes nothing away."""

from __future__ import annotations

import json
from contextlib import contextmanager

import httpx
import pytest

from tests.live_helpers import FIRST_MELD
from tests.server_helpers import ServerProcess, two_processes
from tests.test_server_live_hidden import code, with_hand


@pytest.fixture
def pair(postgres_server, tmp_path):
    with two_processes(postgres_server, [tmp_path / f"p{k}" for k in (1, 2)]) as servers:
        yield servers


def _connect(server: ServerProcess, game: dict):
    from websockets.sync.client import connect

    url = (server.base.replace("http", "ws") + f"/api/games/{game['id']}/live"
           f"?token={game['token']}&camera=ann-phone")
    return connect(url, open_timeout=30, max_size=None)


def _reading(ws, frame: bytes) -> dict:
    ws.send(frame)
    while (message := json.loads(ws.recv(timeout=60)))["type"] != "reading":
        assert message["type"] not in ("error", "camera-taken", "refused"), message
    return message


def _end_turn(http: httpx.Client, game: dict) -> dict:
    h = {"X-Token": game["token"]}
    turn = http.get(f"/api/games/{game['id']}", headers=h).json()["round"]["turn"]
    answer = http.post(f"/api/games/{game['id']}/turn/end", headers=h,
                       json={"turn_id": turn["id"]})
    assert answer.status_code == 200, answer.text
    return answer.json()


@contextmanager
def first_meld_through_a(pair):
    """A game made on A, its round started on B; a phone streams Ann's first meld to A until
    it is stable, and her turn is judged on B. Yields (B's client, the game, the phone on A,
    the stable reading)."""
    a, b = (httpx.Client(base_url=s.base, timeout=60) for s in pair)
    game = a.post("/api/games", json={"players": ["Ann", "Ben"]},
                  headers={"X-Token": pair[0].table_token}).json()
    assert b.post(f"/api/games/{game['id']}/rounds",
                  headers={"X-Token": game["token"]}).is_success
    with _connect(pair[0], game) as phone:
        assert json.loads(phone.recv(timeout=30))["type"] == "game"
        stored = None
        for _ in range(8):
            message = _reading(phone, FIRST_MELD)
            stored = message["reading"] if message["changed"] else stored
        assert stored is not None and len(stored["tiles"]) == 7
        assert _end_turn(b, game)["legal"]  # Ann's first meld, judged on B
        yield b, game, phone, stored


def kill_while_streaming(server: ServerProcess, phone, frame: bytes) -> None:
    """The process dies (SIGKILL) while the phone streams: its socket goes."""
    from websockets.exceptions import ConnectionClosed

    phone.send(frame)
    server.kill()
    with pytest.raises((ConnectionClosed, OSError, TimeoutError)):
        for _ in range(100):
            phone.recv(timeout=10)


def test_a_phone_on_a_killed_process_goes_on_from_the_stored_table_on_the_other(pair):
    with first_meld_through_a(pair) as (b, game, phone, stored):
        kill_while_streaming(pair[0], phone, FIRST_MELD)
    hand = with_hand(FIRST_MELD, stored)
    with _connect(pair[1], game) as phone:
        # B's first message holds the table stored through A.
        first = json.loads(phone.recv(timeout=30))
        assert first["type"] == "game"
        assert first["game"]["table"]["reading_id"] == stored["reading_id"]
        # Ben's turn; a hand over the table from B's first frame on. B's tracker starts
        # from the stored table: stable at once, and the hidden tiles stay on it.
        message = _reading(phone, hand)
        assert message["stable"] and not message["changed"], message
        assert message["reading"]["reading_id"] == stored["reading_id"] and message["hidden"]
        for _ in range(5):
            message = _reading(phone, hand)
            assert not message["changed"], message
        hidden = sorted(code(stored["tiles"][i]) for i in message["hidden"])
        verdict = _end_turn(b, game)
    assert verdict["player"] == "Ben"
    assert verdict["played"] == [] and verdict["left_table"] == []
    assert sorted(verdict["hidden"]) == hidden and verdict["check"]
