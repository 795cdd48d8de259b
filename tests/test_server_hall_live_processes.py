"""The hall's live socket across two real `rummikub serve` processes on one PostgreSQL
database: the console and the big screen connected to process B hear, within 1 s, what a
director and a table do through process A (a turn ended, a game scored, an override, a
referee call). A refused token is an HTTP 4xx with words from the real uvicorn too.

The two processes start once for the module (the models load in each).
"""

from __future__ import annotations

import json
import time
from contextlib import ExitStack

import httpx
import pytest

from tests.server_helpers import ServerProcess, two_processes

PLAYERS = [f"P{n:02d}" for n in range(1, 13)]
WITHIN_S = 1.0


@pytest.fixture(scope="module")
def hall(postgres_server, tmp_path_factory):
    folders = [tmp_path_factory.mktemp(f"live{k}") for k in (1, 2)]
    with two_processes(postgres_server, folders, timeout=180) as servers:
        yield servers


def _socket(sockets: ExitStack, server: ServerProcess, tournament: str, token: str):
    from websockets.sync.client import connect

    ws = sockets.enter_context(connect(f"ws://127.0.0.1:{server.port}/api/tournaments/"
                                       f"{tournament}/live?token={token}", open_timeout=30))
    assert json.loads(ws.recv(timeout=10))["type"] == "hello"
    return ws


def _next_change(ws, part: str, since: float) -> tuple[dict, float]:
    """The first `changed` message naming `part`, and its seconds after `since`."""
    deadline = time.perf_counter() + 10
    while (left := deadline - time.perf_counter()) > 0:
        message = json.loads(ws.recv(timeout=left))
        if message["type"] == "changed" and part in message["parts"]:
            return message, time.perf_counter() - since
    raise AssertionError(f"no change of {part!r} in 10 s")


def _club_in_round_1(http: httpx.Client, made_at: ServerProcess, started_at: ServerProcess,
                     name: str, timer: str) -> dict:
    """A club tournament of PLAYERS made (and seated) through one process, its round 1
    started through `started_at`: the answer that made it (its id and tokens)."""
    made = http.post(f"{made_at.base}/api/tournaments", headers={"X-Token": made_at.table_token},
                     json={"name": name, "format": "club", "timer": timer,
                           "switches": {"rounds": 2, "games_per_round": 1}}).json()
    tid, director = made["tournament"], {"X-Token": made["director_token"]}
    assert http.post(f"{made_at.base}/api/tournaments/{tid}/players", headers=director,
                     json={"players": PLAYERS}).is_success
    assert http.post(f"{started_at.base}/api/tournaments/{tid}/rounds", headers=director,
                     json={"round": 1}).is_success
    return made


def test_what_is_done_through_one_process_reaches_the_other_s_sockets_within_1_s(hall):
    a, b = hall
    with httpx.Client(base_url=a.base, timeout=60) as http:
        made = _club_in_round_1(http, a, a, "Two halls", "2min")
        tid, director = made["tournament"], {"X-Token": made["director_token"]}
        table = http.get(f"/api/tournaments/{tid}/console", headers=director).json()["tables"][0]
        game, phone = f"/api/games/{table['game_id']}", {"X-Token": table["token"]}
        delays = {}
        with ExitStack() as sockets:
            console = _socket(sockets, b, tid, made["director_token"])
            screen = _socket(sockets, b, tid, made["watch_token"])
            sent = time.perf_counter()
            assert http.post(f"{game}/rounds", headers=phone).is_success
            message, delays["round started"] = _next_change(console, "tables", sent)
            assert message["tables"] == [1]

            turn = http.get(game, headers=phone).json()["round"]["turn"]
            sent = time.perf_counter()
            assert http.post(f"{game}/turn/end", headers=phone,
                             json={"turn_id": turn["id"]}).is_success
            message, delays["turn ended"] = _next_change(console, "tables", sent)
            assert message["tables"] == [1]

            sent = time.perf_counter()
            assert http.post(f"{game}/round/end", headers=phone, json={
                "winner": table["players"][0],
                "racks": {p: "K1" for p in table["players"][1:]}}).is_success
            _, delays["game scored: console"] = _next_change(console, "standings", sent)
            _, delays["game scored: screen"] = _next_change(screen, "standings", sent)

            sent = time.perf_counter()
            override = http.post(f"/api/tournaments/{tid}/overrides", headers=director, json={
                "kind": "score", "reason": "recounted", "body": {
                    "round": 1, "table": 1, "game": 1, "player": table["players"][1],
                    "score": 5}})
            assert override.status_code == 201, override.text
            _, delays["override: console"] = _next_change(console, "log", sent)
            _, delays["override: screen"] = _next_change(screen, "standings", sent)

            sent = time.perf_counter()
            assert http.post(f"{game}/call", headers=phone).status_code == 201
            _, delays["referee call"] = _next_change(console, "calls", sent)
    slow = {k: round(v, 3) for k, v in delays.items() if v >= WITHIN_S}
    assert not slow, f"later than {WITHIN_S} s on the other process: {slow} (all: {delays})"


def test_a_refused_token_is_an_http_answer_with_words_from_the_real_server(hall):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    a, _ = hall
    with httpx.Client(base_url=a.base, timeout=60) as http:
        made = http.post("/api/tournaments", headers={"X-Token": a.table_token}, json={
            "name": "Refusals", "format": "club", "timer": "1min"}).json()
    for query, status in (("", 401), ("?token=wrong", 403)):
        with pytest.raises(InvalidStatus) as refused, connect(
                f"ws://127.0.0.1:{a.port}/api/tournaments/{made['tournament']}/live{query}",
                open_timeout=30):
            pass
        response = refused.value.response
        assert response.status_code == status
        assert "token" in json.loads(response.body)["detail"]


def test_the_console_socket_passes_through_the_hall_s_nginx_example(hall):
    """docs/hall/nginx.conf in front of both processes: the console's socket through the
    proxy hears an override made straight at either process within 1 s."""
    from tests.hall_proxy import Nginx, nginx_bin

    if nginx_bin() is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light; .ci/run does it)")
    a, b = hall
    proxy = Nginx([a.port, b.port]).start()
    try:
        with httpx.Client(timeout=60) as http, ExitStack() as sockets:
            made = _club_in_round_1(http, a, b, "Proxied", "1min")
            tid, director = made["tournament"], {"X-Token": made["director_token"]}
            console = _socket(sockets, proxy, tid, made["director_token"])
            for k, server in enumerate((a, b, a, b)):
                sent = time.perf_counter()
                answer = http.post(f"{server.base}/api/tournaments/{tid}/settings",
                                   headers=director, json={"timer": ("40s", "2min")[k % 2]})
                assert answer.status_code == 200, answer.text
                _, delay = _next_change(console, "settings", sent)
                assert delay < WITHIN_S, f"change {k} through the proxy after {delay:.3f} s"
    finally:
        proxy.stop()
