"""Fuzz: over a thousand malformed requests, uploads and socket messages (seeded).

Every answer is a 4xx (or a harmless 2xx/202, e.g. a garbage frame accepted and then
refused by the reader), never a 5xx; the server keeps answering; the game is unchanged.
Requests that carry the game's real token are always malformed in a way that must leave
the game alone; well-formed changes are tried only with missing or wrong tokens.
"""

from __future__ import annotations

import json
import random
import re
import string
import time
from collections import Counter

from fastapi.testclient import TestClient

from app.server.limits import SOCKET_BURST, SOCKET_RATE
from tests.server_helpers import GROUP_9S, RUN_R2_R5, make_app, new_game, table_photo, upload

SEED = 20261201
REQUESTS = 1200
PHOTO = table_photo(RUN_R2_R5, GROUP_9S)
TILE_CODE = re.compile(r"^\s*([KRBOG](1[0-3]|[1-9])|J)\s*$", re.IGNORECASE)


def random_text(rng: random.Random, n: int | None = None) -> str:
    n = rng.randint(0, 40) if n is None else n
    alphabet = string.printable + "éß漢字🀄\u0000\u202e"
    return "".join(rng.choice(alphabet) for _ in range(n))


def random_json(rng: random.Random, depth: int = 0):
    kind = rng.choice(["int", "float", "str", "bool", "null", "list", "dict"]
                      if depth < 3 else ["int", "str", "bool"])
    if kind == "int":
        return rng.choice([0, -1, 1, 2**63, -(2**70), rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, -1e308, 1e308, 3.14])
    if kind == "str":
        return random_text(rng)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {random_text(rng, rng.randint(0, 8)): random_json(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def garbage_image(rng: random.Random) -> tuple[bytes, str]:
    """Bytes that are no readable image, with a content type (often a plausible one)."""
    choice = rng.randrange(6)
    if choice == 0:
        data = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 2000)))
    elif choice == 1:
        data = PHOTO[: rng.randint(1, len(PHOTO) - 100)]  # truncated
    elif choice == 2:
        from tests.test_server_bad_input import png_header

        data = png_header(rng.randint(5000, 2**31 - 1), rng.randint(5000, 2**31 - 1))
    elif choice == 3:
        data = b"\xff\xd8\xff\xe0" + bytes(rng.getrandbits(8) for _ in range(500))
    elif choice == 4:
        data = random_text(rng, 300).encode("utf-8", "replace")
    else:
        data = b"GIF89a" + bytes(rng.getrandbits(8) for _ in range(200))
    content_type = rng.choice(["image/jpeg", "image/png", "image/jpeg", "text/plain",
                               "application/octet-stream", "", "image/", "multipart/mixed"])
    return data, content_type


def not_a_name(rng: random.Random) -> str:
    name = random_text(rng, rng.randint(1, 60))
    return name if name.strip() not in ("Ann", "Ben") else name + "x"


def not_a_code(rng: random.Random) -> str:
    code = random_text(rng, rng.randint(1, 6))
    return code if not TILE_CODE.match(code) else code + "?"


def malformed_change(rng: random.Random, gid: str) -> tuple[str, str, dict]:
    """A request with the real token that must be refused without changing anything."""
    kind = rng.randrange(9)
    if kind == 0:
        body = rng.choice([random_json(rng), [1, 2], "text", 5]) or 0
        if isinstance(body, dict):
            body["unexpected field"] = 1
        return "post", f"/api/games/{gid}/turn/end", {"json": body}
    if kind == 1:
        body = rng.choice([{"photo_id": random_text(rng, 12) or "x"},
                           {"photo_id": random_json(rng, 3) or 0}])
        if isinstance(body["photo_id"], str):
            body["photo_id"] += "-no-such-photo"
        return "post", f"/api/games/{gid}/turn/end", {"json": body}
    if kind == 2:
        body = rng.choice([
            {"winner": not_a_name(rng), "racks": {}},
            {"winner": "Ann", "racks": {"Ben": not_a_code(rng)}},
            {"racks": {"Ann": "R5", "Ben": "K3"}},  # neither a winner nor an empty pool
            {"winner": "Ann", "racks": random_json(rng, 2) or 0, "pool_empty": "maybe"},
            random_json(rng, 2) or [],
        ])
        return "post", f"/api/games/{gid}/round/end", {"json": body}
    if kind == 3:
        body = rng.choice([{"tile_id": rng.choice([-1, 10_001, 999, "x", None, 1.5]),
                            "code": "R1"},
                           {"tile_id": 0, "code": not_a_code(rng)},
                           {"tile_id": 0}, random_json(rng, 2) or "x"])
        return "post", f"/api/games/{gid}/corrections", {"json": body}
    if kind == 4:
        data, content_type = garbage_image(rng)
        route = rng.choice(["photo", "start-draw", "racks"])
        field = rng.choice(["photo", "photo", "picture", "file"])
        return "post", f"/api/games/{gid}/{route}", {
            "files": {field: ("x.jpg", data, content_type)},
            "data": {"player": rng.choice(["Ben", not_a_name(rng)])}}
    if kind == 5:
        data, content_type = garbage_image(rng)
        return "post", f"/api/games/{gid}/frames", {"content": data,
                                                    "headers": {"content-type": content_type}}
    if kind == 6:
        # Broken bodies under a JSON content type.
        raw = rng.choice([b"{", b'{"a": }', b"\xff\xfe\x00", b"[" * 5000, b"nul",
                          json.dumps(random_json(rng)).encode()[:-1] or b"{"])
        route = rng.choice(["turn/end", "round/end", "corrections", "racks", "rounds"])
        return "post", f"/api/games/{gid}/{route}", {
            "content": raw, "headers": {"content-type": "application/json"}}
    if kind == 7:
        # A multipart body that is not one.
        return "post", f"/api/games/{gid}/{rng.choice(['photo', 'racks', 'start-draw'])}", {
            "content": random_text(rng, 200).encode("utf-8", "replace"),
            "headers": {"content-type": rng.choice(["multipart/form-data",
                                                    "multipart/form-data; boundary=zz",
                                                    "application/x-www-form-urlencoded"])}}
    # A round is running: starting another is refused whatever the body says.
    return "post", f"/api/games/{gid}/rounds", {"json": rng.choice([{}, {"starter": "Ben"},
                                                                    random_json(rng, 2)])}


def unauthorised(rng: random.Random, gid: str, watch: str) -> tuple[str, str, dict, str | None]:
    """Any change (well-formed or not) without the right token."""
    token = rng.choice([None, watch, random_text(rng, 22), "", "x" * 5000])
    route = rng.choice(["rounds", "turn/pause", "turn/resume", "turn/extend", "turn/end",
                        "round/end", "finish", "photo", "frames", "corrections", "racks",
                        "start-draw"])
    kwargs = rng.choice([{}, {"json": random_json(rng)},
                         {"files": {"photo": ("x.jpg", PHOTO, "image/jpeg")}},
                         {"content": PHOTO, "headers": {"content-type": "image/jpeg"}}])
    return "post", f"/api/games/{gid}/{route}", kwargs, token


def odd_path(rng: random.Random, gid: str, token: str) -> tuple[str, str, dict, str | None]:
    """Unknown games, odd ids, odd methods, odd paths."""
    game_id = rng.choice([gid, "nope", random_text(rng, 10).replace("/", "") or "z",
                          "a" * 3000, "..", "%00", gid + "x"])
    tail = rng.choice(["", "/reading", "/history", "/sheet.csv", "/photos/abc",
                       "/photos/" + "p" * 500, "/frames/stats", "/unknown", "/turn",
                       "/turn/end/more"])
    method = rng.choice(["get", "post", "put", "delete", "patch"])
    return method, f"/api/games/{game_id}{tail}", {}, rng.choice([token, None, "bad"])


def snapshot(app, gid):
    storage = app.state.storage
    return (storage.game(gid).state, storage.turns(gid), storage.rounds(gid),
            storage.photo_count(gid), [g.id for g in storage.games()])


def test_a_thousand_malformed_requests_get_4xx_and_change_nothing(tmp_path):
    rng = random.Random(SEED)
    app = make_app(tmp_path, upload_limit=2_000_000)
    statuses: Counter = Counter()
    server_errors = []
    started = time.monotonic()
    with TestClient(app, raise_server_exceptions=False) as client:
        game = new_game(client, app, timer={"enabled": False})
        gid, token, watch = game["id"], game["token"], game["watch_token"]
        client.post(f"/api/games/{gid}/rounds", headers={"X-Token": token})
        assert upload(client, game, "photo", PHOTO).status_code == 200
        before = snapshot(app, gid)

        for n in range(REQUESTS):
            pick = rng.random()
            if pick < 0.5:
                method, path, kwargs = malformed_change(rng, gid)
                sent_token = token
            elif pick < 0.8:
                method, path, kwargs, sent_token = unauthorised(rng, gid, watch)
            else:
                method, path, kwargs, sent_token = odd_path(rng, gid, token)
            kwargs = dict(kwargs)
            headers = dict(kwargs.pop("headers", {}))
            if sent_token is not None:
                headers["X-Token"] = sent_token.encode("utf-8", "replace").decode("latin-1")
            if method in ("get", "delete"):
                kwargs = {}
            try:
                response = client.request(method.upper(), path, headers=headers, **kwargs)
            except Exception as error:  # the client itself refused to send it: skip
                statuses[f"unsendable {type(error).__name__}"] += 1
                continue
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                server_errors.append((n, method, path, response.text[:200]))

        with client.websocket_connect(f"/api/games/{gid}/live?token={token}") as ws:
            ws.receive_json()
            # In bursts the socket's rate allows (more would be dropped unread).
            for burst in range(3):
                if burst:
                    time.sleep(SOCKET_BURST / SOCKET_RATE)
                for _ in range(SOCKET_BURST - 1):
                    if rng.random() < 0.5:
                        ws.send_text(random_text(rng, rng.randint(0, 100)))
                    else:
                        ws.send_bytes(garbage_image(rng)[0] or b"\0")
                ws.send_text('{"type": "ping"}')
                while (message := ws.receive_json())["type"] != "pong":
                    assert "too many messages" not in message.get("detail", ""), message

        # Let the frame worker finish the garbage frames it accepted.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            stats = app.state.hub.stats(gid)
            if stats["read"] + stats["bad"] + stats["dropped"] >= stats["received"]:
                break
            time.sleep(0.05)
        assert client.get("/api/health").status_code == 200
        after = snapshot(app, gid)

    sent = sum(v for k, v in statuses.items() if isinstance(k, int))
    assert sent >= 1000, statuses
    assert server_errors == [], server_errors[:5]
    assert after == before
    assert stats["read"] == 0  # no garbage frame was ever taken for a table
    assert time.monotonic() - started < 120
