"""An error never costs the next request: an unexpected failure is a logged 500 with
`{"detail"}`, and the keep-alive connection it came on stays usable (issue #20). Run on a
real uvicorn process: the connection handling is uvicorn's, not the TestClient's."""

from __future__ import annotations

import json
import socket
import sqlite3

import httpx
import pytest

from tests.server_helpers import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = ServerProcess(tmp_path_factory.mktemp("errors")).start()
    yield process
    process.stop()


def _request(sock: socket.socket, method: str, path: str, token: str | None = None,
             body: bytes = b"") -> tuple[int, dict, dict]:
    """One HTTP/1.1 request on an open socket; (status, headers, JSON body)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: keep-alive",
             f"Content-Length: {len(body)}"]
    if token:
        lines.append(f"X-Token: {token}")
    if body:
        lines.append("Content-Type: application/json")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in
               (line.split(":", 1) for line in header_lines)}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection mid-answer")
        rest += chunk
    return int(status_line.split()[1]), headers, json.loads(rest[:length] or b"null")


def test_after_a_500_the_same_connection_serves_the_next_request(server):
    with httpx.Client(base_url=server.base, timeout=30) as http:
        broken = http.post("/api/games", json={"players": ["Ann", "Ben"]},
                           headers={"X-Token": server.table_token}).json()
        fine = http.post("/api/games", json={"players": ["Cy", "Di"]},
                         headers={"X-Token": server.table_token}).json()
    # A stored value the game flow cannot follow (a round that is a number): reading the
    # game fails inside the server, as a bug or a damaged row would make it.
    db = sqlite3.connect(str(server.data_dir / "rummikub.sqlite3"))
    with db:
        db.execute("UPDATE games SET state=? WHERE id=?",
                   (json.dumps({"phase": "playing", "round": 7}), broken["id"]))
    db.close()

    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        for _ in range(3):
            status, headers, body = _request(sock, "GET", f"/api/games/{broken['id']}",
                                             broken["token"])
            assert status == 500
            assert body == {"detail": "the server failed on this request; the game is "
                                      "unchanged",
                            "message_id": {"id": "server.failed", "params": {}}}
            assert headers.get("connection", "").lower() != "close"
            # The next request on the SAME socket is answered.
            status, _, game = _request(sock, "GET", f"/api/games/{fine['id']}", fine["token"])
            assert status == 200 and game["id"] == fine["id"]
        status, _, health = _request(sock, "GET", "/api/health")
        assert status == 200 and health["ok"]
