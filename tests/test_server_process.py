"""The server as it runs at a table: `rummikub serve` in its own process, on a free port.

The kill test plays part of a game, SIGKILLs the process while a camera is still sending
frames, starts it again on the same database, and finds every acknowledged turn, the
score sheet and the running turn's timer as they were.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from tests.server_helpers import (
    GROUP_9S,
    RUN_B1_B4,
    RUN_O7_O10,
    RUN_R2_R5,
    ServerProcess,
    table_photo,
)

FIRST_MELD = table_photo(RUN_R2_R5, GROUP_9S)
SHORT_MELD = table_photo(RUN_R2_R5, GROUP_9S, RUN_B1_B4)
MORE = table_photo(RUN_R2_R5, GROUP_9S, RUN_O7_O10)


@pytest.fixture
def server(tmp_path):
    process = ServerProcess(tmp_path / "data").start()
    yield process
    process.stop()


def _photo(http, base, game, data):
    response = http.post(f"{base}/api/games/{game['id']}/photo",
                         headers={"X-Token": game["token"]},
                         files={"photo": ("t.jpg", data, "image/jpeg")})
    assert response.status_code == 200, response.text


def _turn_id(http, base, game) -> dict:
    view = http.get(f"{base}/api/games/{game['id']}", headers={"X-Token": game["token"]})
    return {"turn_id": view.json()["round"]["turn"]["id"]}


def _end_turn(http, base, game):
    response = http.post(f"{base}/api/games/{game['id']}/turn/end",
                         headers={"X-Token": game["token"]}, json=_turn_id(http, base, game))
    assert response.status_code == 200, response.text
    return response.json()


def test_a_real_server_plays_a_turn_and_serves_the_live_socket(server):
    from websockets.sync.client import connect

    with httpx.Client(base_url=server.base, timeout=30) as http:
        game = http.post("/api/games", json={"players": ["Ann", "Ben"]},
                         headers={"X-Token": server.table_token}).json()
        http.post(f"/api/games/{game['id']}/rounds", headers={"X-Token": game["token"]})
        url = f"ws://127.0.0.1:{server.port}/api/games/{game['id']}/live?token={game['token']}"
        with connect(url) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "game"
            for _ in range(4):
                ws.send(FIRST_MELD)
                while (message := json.loads(ws.recv(timeout=10)))["type"] != "reading":
                    pass
        assert message["stable"] and len(message["reading"]["tiles"]) == 7
        verdict = _end_turn(http, server.base, game)
        assert verdict["legal"] and verdict["meld_total"] == 41
        assert http.get("/docs").status_code == 200
        assert "/api/games/{game_id}/turn/end" in http.get("/openapi.json").json()["paths"]


def test_sigkill_mid_game_loses_no_acknowledged_turn_score_or_timer(tmp_path):
    server = ServerProcess(tmp_path / "data").start()
    try:
        base = server.base
        with httpx.Client(base_url=base, timeout=30) as http:
            game = http.post("/api/games", json={"players": ["Ann", "Ben"],
                                                 "timer": {"seconds": 300}},
                             headers={"X-Token": server.table_token}).json()
            gid, headers = game["id"], {"X-Token": game["token"]}
            # Round 1: one turn, then Ann goes out.
            http.post(f"/api/games/{gid}/rounds", headers=headers, json={"starter": "Ann"})
            _photo(http, base, game, FIRST_MELD)
            acknowledged = [_end_turn(http, base, game)]
            ended = http.post(f"/api/games/{gid}/round/end", headers=headers,
                              json={"winner": "Ann", "racks": {"Ben": "R5 J K13"}})
            assert ended.status_code == 200
            # Round 2: two turns, the third running.
            http.post(f"/api/games/{gid}/rounds", headers=headers, json={"starter": "Ben"})
            _photo(http, base, game, SHORT_MELD)
            acknowledged.append(_end_turn(http, base, game))
            _photo(http, base, game, MORE)
            acknowledged.append(_end_turn(http, base, game))
            http.post(f"/api/games/{gid}/turn/pause", headers=headers,
                      json=_turn_id(http, base, game))
            http.post(f"/api/games/{gid}/turn/resume", headers=headers,
                      json=_turn_id(http, base, game))
            before = http.get(f"/api/games/{gid}", headers=headers).json()

        # A camera keeps sending frames while the server dies.
        stop = threading.Event()

        def camera():
            with httpx.Client(base_url=base, timeout=5) as cam:
                while not stop.is_set():
                    try:
                        cam.post(f"/api/games/{gid}/frames", content=MORE,
                                 headers={**headers, "content-type": "image/jpeg"})
                    except httpx.HTTPError:
                        pass
                    time.sleep(0.05)

        sender = threading.Thread(target=camera, daemon=True)
        sender.start()
        time.sleep(1.0)
        killed_at = time.time()
        server.kill()
        stop.set()
        sender.join(10)

        server.start()
        with httpx.Client(base_url=base, timeout=30) as http:
            after = http.get(f"/api/games/{gid}", headers=headers).json()
            turns = http.get(f"/api/games/{gid}/history", headers=headers).json()["turns"]
            restarted_at = time.time()
    finally:
        server.stop()

    assert turns == acknowledged
    # Round 2 starts on a bare table: Ben melds 51; Ann then takes B1-B4 away, a foul.
    assert [t["legal"] for t in turns] == [True, True, False]
    assert after["sheet"] == before["sheet"] and after["sheet"]["totals"] == {"Ann": 43,
                                                                             "Ben": -43}
    turn_before, turn_after = before["round"]["turn"], after["round"]["turn"]
    assert (turn_after["number"], turn_after["player"]) == (4, "Ben")
    assert turn_after["started_at"] == turn_before["started_at"]
    assert not turn_after["paused"]
    # The clock kept running through the crash: what is left is what was left, less the
    # time that passed (never more, and not reset to a full turn).
    elapsed_before = turn_before["elapsed_s"]
    assert elapsed_before + (restarted_at - killed_at) - 1 <= turn_after["elapsed_s"]
    assert turn_after["elapsed_s"] <= (restarted_at - turn_before["started_at"]) + 1
    assert turn_after["remaining_s"] < 300 - elapsed_before
    assert after["round"]["pool"] == before["round"]["pool"]
    assert [p["melded"] for p in after["players"]] == [p["melded"] for p in before["players"]]


def test_https_serves_the_certificate_whose_fingerprint_it_printed(tmp_path):
    import hashlib
    import ssl

    server = ServerProcess(tmp_path / "data", https=True).start()
    try:
        pem = ssl.get_server_certificate(("127.0.0.1", server.port))
        served = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()
        with httpx.Client(base_url=server.base, verify=False, timeout=30) as http:
            assert http.get("/api/health").json()["ok"]
    finally:
        server.stop()
    printed = server.proc.stdout.read()
    fingerprint = next(line.split()[-1] for line in printed.splitlines()
                       if "SHA-256 fingerprint" in line)
    assert fingerprint.replace(":", "") == served
    assert "https://" in printed and "?t=" in printed
