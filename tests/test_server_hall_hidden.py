"""Two real `rummikub serve` processes on one PostgreSQL: a phone streams to A while a hand
rests over the table, End turn reaches B, and B's verdict names the hidden tiles (A stored
them with the reading: `app.server.hiddenshare`). Then A is killed (SIGKILL): B still knows
them before the phone is back, and the phone reconnected to B finds them hidden there."""

from __future__ import annotations

import json

import pytest

from tests.live_helpers import FIRST_MELD
from tests.server_helpers import two_processes
from tests.test_server_hall_reconnect import (
    _connect,
    _end_turn,
    _reading,
    first_meld_through_a,
    kill_while_streaming,
)
from tests.test_server_live_hidden import code, with_hand


@pytest.fixture
def pair(postgres_server, tmp_path):
    with two_processes(postgres_server, [tmp_path / f"p{k}" for k in (1, 2)]) as servers:
        yield servers


def _hidden_turn(verdict: dict, player: str, hidden: list[str]) -> None:
    assert verdict["player"] == player
    assert verdict["played"] == [] and verdict["left_table"] == []
    assert not any("left the table" in p for p in verdict["problems"])
    assert sorted(verdict["hidden"]) == hidden
    assert any("hidden under something" in c for c in verdict["check"]), verdict


def test_the_hidden_tiles_of_a_camera_on_a_are_known_on_b_and_after_a_dies(pair):
    with first_meld_through_a(pair) as (b, game, phone, stored):
        hand = with_hand(FIRST_MELD, stored)
        for _ in range(5):
            message = _reading(phone, hand)
            assert not message["changed"], message
        assert message["hidden"], "the hand hides no tile from the camera"
        hidden = sorted(code(stored["tiles"][i]) for i in message["hidden"])
        # Ben's turn ends on B, which holds no camera: the hidden tiles are named.
        _hidden_turn(_end_turn(b, game), "Ben", hidden)
        # A dies while the phone streams the hand.
        kill_while_streaming(pair[0], phone, hand)
    # Before the phone is back, Ann's turn ends on B: the tiles are still hidden there.
    _hidden_turn(_end_turn(b, game), "Ann", hidden)
    with _connect(pair[1], game) as phone:
        assert json.loads(phone.recv(timeout=30))["type"] == "game"
        # B's tracker starts from the stored table, the hand still over it.
        for _ in range(5):
            message = _reading(phone, hand)
            assert message["stable"] and not message["changed"], message
        assert message["reading"]["reading_id"] == stored["reading_id"]
        assert sorted(code(stored["tiles"][i]) for i in message["hidden"]) == hidden
        _hidden_turn(_end_turn(b, game), "Ben", hidden)
