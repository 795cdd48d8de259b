"""Limits on everything a client can send (issue #20): strict, bounded settings; messages
per second on a live socket; an upload without its token refused before its body is read."""

from __future__ import annotations

import socket
import time

import pytest
from starlette.websockets import WebSocketDisconnect

from app.server.limits import SOCKET_BURST, MessageRate
from tests.server_helpers import ServerProcess, new_game


def create(client, app, **body):
    return client.post("/api/games", json={"players": ["Ann", "Ben"], **body},
                       headers={"X-Token": app.state.table_token})


@pytest.mark.parametrize("body,words", [
    ({"settings": {"rack_joker_penalty": int("9" * 4300)}}, "rack_joker_penalty"),
    ({"settings": {"rack_joker_penalty": 101}}, "less than or equal to 100"),
    ({"settings": {"turn_seconds": True}}, "turn_seconds"),
    ({"settings": {"jokers": 2.0}}, "jokers"),
    ({"settings": {"jokers": "4"}}, "jokers"),
    ({"settings": {"copies": 0}}, "copies"),
    ({"settings": {"joker_sets_splittable": 1}}, "joker_sets_splittable"),
    ({"settings": {"timeout_penalty": "jail"}}, "timeout_penalty"),
    ({"settings": {"no_such_rule": 1}}, "no_such_rule"),
    ({"timer": {"seconds": True}}, "timer.seconds"),
    ({"timer": {"extensions": "2"}}, "timer.extensions"),
    ({"timer": {"enabled": "yes"}}, "timer.enabled"),
])
def test_a_setting_of_the_wrong_kind_or_size_is_a_422_naming_it(client, app, body, words):
    response = create(client, app, **body)
    assert response.status_code in (400, 422), response.text
    assert words in response.json()["detail"]
    assert app.state.storage.games() == []


def test_settings_of_the_right_kind_are_taken_by_either_spelling(client, app):
    response = create(client, app, settings={"rack-joker-penalty": 50, "turn_seconds": 90,
                                             "joker_sets_splittable": False})
    assert response.status_code == 201, response.text
    settings = response.json()["settings"]
    assert settings["rack_joker_penalty"] == 50 and settings["turn_seconds"] == 90
    assert settings["joker_sets_splittable"] is False
    off = create(client, app, settings={"turn_seconds": "off"})
    assert off.status_code == 201 and off.json()["settings"]["turn_seconds"] is None


def test_the_message_rate_refills_with_time():
    now = [0.0]
    rate = MessageRate(rate=10, burst=20, flood=100, clock=lambda: now[0])
    assert sum(rate.take() for _ in range(30)) == 20
    now[0] += 0.5  # five more
    assert sum(rate.take() for _ in range(30)) == 5
    assert not rate.flooding
    assert sum(rate.take() for _ in range(100)) == 0 and rate.flooding


def test_a_socket_sending_too_fast_is_told_and_then_closed(client, app, monkeypatch):
    # the socket's clock stands still: on a loaded machine the sends below can take over
    # the tenth of a second a token takes to come back, and the burst would never be spent
    from app.server.routers import table

    monkeypatch.setattr(table, "MessageRate", lambda: MessageRate(clock=lambda: 0.0))
    game = new_game(client, app)
    with client.websocket_connect(f"/api/games/{game['id']}/live?token={game['token']}") as ws:
        assert ws.receive_json()["type"] == "game"
        for _ in range(SOCKET_BURST + 5):
            ws.send_text('{"type": "ping"}')
        ws.send_text('{"type": "ping"}')
        # Read up to the refusal, which is said once. A socket that reads slower than the
        # server answers loses its oldest answers (its queue holds 16: `frames.offer`), so
        # under load fewer than the burst's pongs may come before it, never more.
        answers = []
        while not answers or answers[-1]["type"] != "error":
            answers.append(ws.receive_json())
            assert len(answers) <= SOCKET_BURST + 1, answers
        pongs = [a for a in answers if a["type"] == "pong"]
        assert "too many messages" in answers[-1]["detail"]
        assert 1 <= len(pongs) == len(answers) - 1 <= SOCKET_BURST
        # A flood: the socket is closed with the reason.
        for _ in range(150):
            ws.send_text('{"type": "ping"}')
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(200):
                ws.receive_json()
        assert closed.value.code == 1008 and "too many messages" in closed.value.reason


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = ServerProcess(tmp_path_factory.mktemp("limits")).start()
    yield process
    process.stop()


@pytest.mark.parametrize("route", ["photo", "start-draw", "racks", "frames"])
def test_an_upload_without_its_token_is_refused_before_its_body_arrives(server, route):
    import httpx

    game = httpx.post(f"{server.base}/api/games", json={"players": ["Ann", "Ben"]},
                      headers={"X-Token": server.table_token}).json()
    kind = "image/jpeg" if route == "frames" else "multipart/form-data; boundary=x"
    head = (f"POST /api/games/{game['id']}/{route} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: {kind}\r\nContent-Length: 60000000\r\n\r\n")
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        start = time.monotonic()
        sock.sendall(head.encode() + b"--x\r\n")  # the 60 MB body is never sent
        answer = ""
        while not answer.endswith("}"):
            chunk = sock.recv(65536).decode("latin-1")
            if not chunk:
                break
            answer += chunk
        took = time.monotonic() - start
    assert answer.startswith("HTTP/1.1 401"), answer
    assert "needs its token" in answer and took < 5
