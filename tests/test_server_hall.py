"""A hall: two real `rummikub serve` processes on one PostgreSQL database, and any process
answers any request. A game played with requests alternating between them; 20 turn ends
at once across both (one is judged); a correction made through one process is seen within
1 s by a phone's live socket and its poll on the other; timed-out turns judged exactly once
while both tick; and one process killed (SIGKILL) mid-turn: the other judges the turn and
no acknowledged turn is lost.

The two processes start once for the module (the models load in each); the kill comes
last.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.server_helpers import GROUP_9S, RUN_R2_R5, table_photo, two_processes

FIRST_MELD = table_photo(RUN_R2_R5, GROUP_9S)


@pytest.fixture(scope="module")
def hall(postgres_server, tmp_path_factory):
    folders = [tmp_path_factory.mktemp(f"p{k}") for k in (1, 2)]
    with two_processes(postgres_server, folders) as servers:
        yield servers


def _clients(hall):
    return [httpx.Client(base_url=s.base, timeout=60) for s in hall]


def _new_game(http: httpx.Client, token: str, timer: dict | None = None) -> tuple[str, dict]:
    body = {"players": ["Ann", "Ben"]}
    if timer:
        body["timer"] = timer
    answer = http.post("/api/games", json=body, headers={"X-Token": token})
    assert answer.status_code in (200, 201), answer.text
    game = answer.json()
    return game["id"], {"X-Token": game["token"]}


def _running(http: httpx.Client, game_id: str, h: dict) -> dict:
    return http.get(f"/api/games/{game_id}", headers=h).json()["round"]["turn"]


def test_the_processes_are_two_and_share_the_database(hall):
    a, b = _clients(hall)
    health = [c.get("/api/health").json() for c in (a, b)]
    assert all(x["database"] == "postgresql" and x["database_ok"] for x in health)
    assert health[0]["process"] != health[1]["process"]


def test_a_game_played_with_requests_alternating_between_the_processes(hall):
    a, b = _clients(hall)
    game_id, h = _new_game(a, hall[0].table_token)
    assert b.post(f"/api/games/{game_id}/rounds", headers=h).is_success
    photo = a.post(f"/api/games/{game_id}/photo", headers=h,
                   files={"photo": ("t.jpg", FIRST_MELD, "image/jpeg")})
    assert photo.status_code == 200, photo.text
    ended = []
    for k in range(4):
        seen_on, end_on = (a, b) if k % 2 == 0 else (b, a)
        turn = _running(seen_on, game_id, h)
        answer = end_on.post(f"/api/games/{game_id}/turn/end", headers=h,
                             json={"turn_id": turn["id"]})
        assert answer.status_code == 200, answer.text
        ended.append((answer.json()["turn"], answer.json()["player"]))
        # The other process sees the next turn at once.
        assert _running(seen_on, game_id, h)["number"] == turn["number"] + 1
    assert [e[1] for e in ended] == ["Ann", "Ben", "Ann", "Ben"]
    assert ended[0] != ended[1]
    for http in (a, b):
        history = http.get(f"/api/games/{game_id}/history", headers=h).json()["turns"]
        assert [(t["turn"], t["player"]) for t in history] == ended
    assert ended[0][0] == 1 and history[0]["legal"] and history[0]["first_meld_ok"]


def test_twenty_turn_ends_at_once_across_both_processes_judge_the_turn_once(hall):
    a, b = _clients(hall)
    game_id, h = _new_game(a, hall[0].table_token)
    assert a.post(f"/api/games/{game_id}/rounds", headers=h).is_success
    # A table to judge: the judging takes a while, so both processes are in it at once.
    assert a.post(f"/api/games/{game_id}/photo", headers=h,
                  files={"photo": ("t.jpg", FIRST_MELD, "image/jpeg")}).status_code == 200
    turn = _running(b, game_id, h)
    start = threading.Barrier(20)

    def end(k: int) -> httpx.Response:
        with httpx.Client(base_url=hall[k % 2].base, timeout=60) as http:
            start.wait()
            return http.post(f"/api/games/{game_id}/turn/end", headers=h,
                             json={"turn_id": turn["id"]})

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(end, range(20)))
    codes = sorted(r.status_code for r in answers)
    assert codes == [200] + [409] * 19, [r.text for r in answers if r.status_code != 409]
    refused = [r.json()["detail"] for r in answers if r.status_code == 409]
    assert all("already ended" in d and "Nothing was changed" in d for d in refused)
    for http in (a, b):
        history = http.get(f"/api/games/{game_id}/history", headers=h).json()["turns"]
        assert [t["turn"] for t in history] == [turn["number"]]


def _tile(reading: dict | None, tile_id: int) -> tuple | None:
    found = [t for t in (reading or {}).get("tiles", []) if t.get("id") == tile_id]
    return (found[0]["color"], found[0]["number"], found[0]["joker"]) if found else None


def test_a_correction_through_one_process_reaches_a_phone_on_the_other_within_1s(hall):
    from websockets.sync.client import connect

    a, b = _clients(hall)
    game_id, h = _new_game(a, hall[0].table_token)
    assert a.post(f"/api/games/{game_id}/rounds", headers=h).is_success
    reading = a.post(f"/api/games/{game_id}/photo", headers=h,
                     files={"photo": ("t.jpg", FIRST_MELD, "image/jpeg")}).json()
    tile = reading["tiles"][0]
    code = "K13" if tile["number"] != 13 else "R12"
    socket_url = hall[0].base.replace("http", "ws") + f"/api/games/{game_id}/live" \
        f"?token={h['X-Token']}"
    with connect(socket_url, open_timeout=30) as phone:
        first = json.loads(phone.recv(timeout=30))
        assert first["type"] == "game"
        before = _tile(first["game"]["table"], tile["id"])
        assert before == _tile(reading, tile["id"])
        started = time.monotonic()
        answer = b.post(f"/api/games/{game_id}/corrections", headers=h,
                        json={"tile_id": tile["id"], "code": code})
        assert answer.status_code == 200, answer.text
        answered = time.monotonic()
        corrected = _tile(answer.json(), tile["id"])
        assert corrected != before
        seen = None
        while seen is None and time.monotonic() - answered < 5:
            message = json.loads(phone.recv(timeout=5))
            if message["type"] == "game" and _tile(message["game"]["table"], tile["id"]) == corrected:
                seen = time.monotonic()
    assert seen is not None, "the phone on the other process never saw the correction"
    assert seen - answered < 1.0, f"seen {seen - answered:.2f} s after B answered"
    assert seen - started < 5
    # The page's poll (GET the game each second) on the first process sees it too.
    polled = a.get(f"/api/games/{game_id}", headers=h).json()
    assert _tile(polled["table"], tile["id"]) == corrected


def test_timed_out_turns_are_judged_once_while_both_processes_tick(hall):
    a, b = _clients(hall)
    games = [_new_game(a, hall[0].table_token, {"enabled": True, "seconds": 1.5})
             for _ in range(3)]
    for game_id, h in games:
        assert b.post(f"/api/games/{game_id}/rounds", headers=h).is_success
    time.sleep(2.5)  # each first turn ran out; both processes' ticks found it
    for game_id, h in games:
        # Stop the clock of the next turn, so the history is read while nothing moves.
        turn = _running(a, game_id, h)
        if turn["number"] == 1:  # not judged yet: say so, rather than pass vacuously
            pytest.fail(f"game {game_id}: the timed-out first turn was not judged in 1 s")
        paused = b.post(f"/api/games/{game_id}/turn/pause", headers=h,
                        json={"turn_id": turn["id"]})
        history = a.get(f"/api/games/{game_id}/history", headers=h).json()["turns"]
        numbers = [t["turn"] for t in history]
        assert len(numbers) == len(set(numbers)), f"a turn judged twice: {numbers}"
        assert numbers == list(range(1, len(numbers) + 1))
        assert history[0]["timed_out"] and history[0]["player"] == "Ann"
        assert paused.status_code in (200, 409), paused.text


@pytest.fixture(scope="module")
def proxy(hall):
    """nginx with the hall's example config (docs/hall/nginx.conf) before both processes."""
    from tests.hall_proxy import Nginx, nginx_bin

    if nginx_bin() is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light; .ci/run does)")
    nginx = Nginx([s.port for s in hall])
    checked = nginx.check()
    assert checked.returncode == 0, checked.stderr
    nginx.start()
    yield nginx
    nginx.stop()


def _socket_game(phone, want, seconds: float = 5) -> dict:
    """The first `game` message on the socket whose game `want` accepts."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        message = json.loads(phone.recv(timeout=max(0.1, deadline - time.monotonic())))
        if message["type"] == "game" and want(message["game"]):
            return message["game"]
    raise AssertionError("the socket never told the game")


def test_a_game_and_its_live_socket_through_the_hall_proxy(hall, proxy):
    from websockets.sync.client import connect

    with httpx.Client(base_url=proxy.base, timeout=60) as http:
        assert http.get("/api/health").json()["database_ok"]
        assert "<html" in http.get("/").text.lower()
        game_id, h = _new_game(http, hall[0].table_token)
        assert http.post(f"/api/games/{game_id}/rounds", headers=h).is_success
        photo = http.post(f"/api/games/{game_id}/photo", headers=h,
                          files={"photo": ("t.jpg", FIRST_MELD, "image/jpeg")})
        assert photo.status_code == 200, photo.text
        socket_url = proxy.base.replace("http", "ws") + f"/api/games/{game_id}/live" \
            f"?token={h['X-Token']}"
        with connect(socket_url, open_timeout=30) as phone:
            first = _socket_game(phone, lambda g: True, 30)
            assert first["round"]["turn"]["number"] == 1
            phone.send(json.dumps({"type": "ping"}))
            # A turn ended through the proxy, then one straight at each process (one of
            # them is the socket's, the other tells it over the database).
            turn = _running(http, game_id, h)
            answer = http.post(f"/api/games/{game_id}/turn/end", headers=h,
                               json={"turn_id": turn["id"]})
            assert answer.status_code == 200, answer.text
            assert _socket_game(phone, lambda g: g["round"]["turn"]["number"] == 2)
            for server in hall:
                with httpx.Client(base_url=server.base, timeout=60) as direct:
                    turn = _running(direct, game_id, h)
                    assert direct.post(f"/api/games/{game_id}/turn/end", headers=h,
                                       json={"turn_id": turn["id"]}).status_code == 200
                started = time.monotonic()
                assert _socket_game(phone, lambda g, n=turn["number"] + 1:
                                    g["round"]["turn"]["number"] == n)
                assert time.monotonic() - started < 1.0
        history = http.get(f"/api/games/{game_id}/history", headers=h).json()["turns"]
        assert [t["turn"] for t in history] == [1, 2, 3]


def test_a_process_killed_mid_turn_loses_no_turn_and_the_other_judges_its_timeout(hall):
    a, b = _clients(hall)
    game_id, h = _new_game(a, hall[0].table_token, {"enabled": True, "seconds": 2.5})
    assert a.post(f"/api/games/{game_id}/rounds", headers=h).is_success
    acknowledged = []
    for http in (a, b, a):  # each answered 200: stored before it was answered
        turn = _running(http, game_id, h)
        answer = http.post(f"/api/games/{game_id}/turn/end", headers=h,
                           json={"turn_id": turn["id"]})
        assert answer.status_code == 200, answer.text
        acknowledged.append(answer.json()["turn"])
    mid = _running(a, game_id, h)
    hall[0].kill()  # SIGKILL, the turn running: the phones go to the other process
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(b, game_id, h)["number"] == mid["number"]:
        time.sleep(0.2)
    history = b.get(f"/api/games/{game_id}/history", headers=h).json()["turns"]
    numbers = [t["turn"] for t in history]
    assert numbers[:3] == acknowledged
    judged = [t for t in history if t["turn"] == mid["number"]]
    assert len(judged) == 1 and judged[0]["timed_out"], history
    assert len(numbers) == len(set(numbers))


def test_the_proxy_sends_every_table_to_the_process_left(hall, proxy):
    hall[0].kill()  # as the test before left it (run alone, it is killed here)
    with httpx.Client(base_url=proxy.base, timeout=60) as http:
        for _ in range(3):  # whichever process each game was sent to before
            game_id, h = _new_game(http, hall[1].table_token)
            assert http.post(f"/api/games/{game_id}/rounds", headers=h).is_success
            turn = _running(http, game_id, h)
            answer = http.post(f"/api/games/{game_id}/turn/end", headers=h,
                               json={"turn_id": turn["id"]})
            assert answer.status_code == 200, answer.text


def test_no_process_logged_a_failed_judging_or_an_unexpected_error(hall):
    """Two processes judging one turn at once would meet on its row in `turns` (one
    primary key per turn): the history stays right, but the loser fails and logs it."""
    logs = []
    for server in hall:
        server.stop()
        logs.append(server.proc.stdout.read())
    assert all(logs), "a server process printed nothing"
    for log in logs:
        assert "judging the timed-out turn" not in log, log[-3000:]
        assert "unexpected error" not in log and "Traceback" not in log, log[-3000:]
