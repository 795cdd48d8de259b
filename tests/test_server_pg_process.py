"""`rummikub serve --db postgresql://...` as a hall runs it: a real server process on a
real PostgreSQL database plays a turn, is killed (SIGKILL), starts again, and every
acknowledged turn, photo and the table token are there."""

from __future__ import annotations

import httpx

from tests.server_helpers import GROUP_9S, RUN_R2_R5, ServerProcess, table_photo

FIRST_MELD = table_photo(RUN_R2_R5, GROUP_9S)


def test_a_server_on_postgresql_keeps_every_acknowledged_turn_through_a_kill(tmp_path,
                                                                           postgres_url):
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")  # as a user types
    server = ServerProcess(tmp_path / "data", db=url).start()
    try:
        with httpx.Client(base_url=server.base, timeout=60) as http:
            health = http.get("/api/health").json()
            assert health["database"] == "postgresql" and health["database_ok"]
            game = http.post("/api/games", json={"players": ["Ann", "Ben"]},
                             headers={"X-Token": server.table_token}).json()
            h = {"X-Token": game["token"]}
            assert http.post(f"/api/games/{game['id']}/rounds", headers=h).is_success
            photo = http.post(f"/api/games/{game['id']}/photo", headers=h,
                              files={"photo": ("t.jpg", FIRST_MELD, "image/jpeg")})
            assert photo.status_code == 200, photo.text
            turns = []
            for _ in range(2):
                running = http.get(f"/api/games/{game['id']}", headers=h).json()
                turns.append(http.post(f"/api/games/{game['id']}/turn/end", headers=h, json={
                    "turn_id": running["round"]["turn"]["id"]}).json()["turn"])
        token = server.table_token
        server.kill()
        server.start()
        assert server.table_token == token  # the phones' link still works
        assert not (tmp_path / "data" / "rummikub.sqlite3").exists()  # nothing went to a file
        with httpx.Client(base_url=server.base, timeout=60) as http:
            history = http.get(f"/api/games/{game['id']}/history", headers=h).json()["turns"]
            assert [t["turn"] for t in history] == turns
            got = http.get(f"/api/games/{game['id']}/photos/{photo.json()['photo_id']}",
                           headers=h)
            assert got.content == FIRST_MELD
    finally:
        server.stop()
