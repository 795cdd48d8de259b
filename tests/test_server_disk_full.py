"""A full disk: every write answers 507 in words, nothing is acknowledged that was not
stored, and service comes back by itself once space is freed.

The data folder is a small tmpfs, filled by a file written until the kernel says no space
(ENOSPC), then freed by deleting that file.
"""

from __future__ import annotations

import errno
import os

import httpx
import pytest

from app.server.storage import Storage, StorageFull
from tests.db_helpers import tmpfs
from tests.server_helpers import GROUP_9S, RUN_O7_O10, RUN_R2_R5, ServerProcess, table_photo

FIRST_MELD = table_photo(RUN_R2_R5, GROUP_9S)
MORE = table_photo(RUN_R2_R5, GROUP_9S, RUN_O7_O10)


def fill(path) -> int:
    """Write `path` until the disk is full; the bytes it took."""
    written = 0
    chunk = b"\0" * 4096
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        while True:
            try:
                written += os.write(fd, chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC
                return written
    finally:
        os.close(fd)


def test_sqlite_out_of_space_is_storage_full_and_it_holds_until_space_is_back(tmp_path):
    with tmpfs(tmp_path / "disk", "1m") as disk:
        storage = Storage(disk / "db.sqlite3", reserve=0)  # only SQLite's own failure
        game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup", "n": 0})
        storage.add_photo(game.id, b"first", "table")
        assert fill(disk / "filler") > 0
        with pytest.raises(StorageFull, match="disk is full"):
            storage.add_photo(game.id, os.urandom(200_000), "table")
        assert storage.full
        # A write that might still fit is refused too: no turn on a photo not kept.
        with pytest.raises(StorageFull):
            storage.save_state(game.id, {"phase": "setup", "n": 1})
        assert storage.photo_count(game.id) == 1 and storage.game(game.id).state["n"] == 0
        (disk / "filler").unlink()
        assert not storage.full
        big = storage.add_photo(game.id, os.urandom(200_000), "table")
        storage.save_state(game.id, {"phase": "setup", "n": 2})
        assert storage.photo_count(game.id) == 2 and len(storage.photo(game.id, big)[0])
        storage.close()


def test_the_reserve_refuses_writes_before_the_disk_is_quite_full(tmp_path):
    with tmpfs(tmp_path / "disk", "4m") as disk:
        storage = Storage(disk / "db.sqlite3", reserve=3 * 1024 * 1024)
        assert not storage.full
        ballast = disk / "ballast"
        ballast.write_bytes(b"\0" * (1024 * 1024))
        assert storage.full
        with pytest.raises(StorageFull):
            storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"})
        ballast.unlink()
        assert storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"}).id
        storage.close()


def _post_photo(http, game, data):
    return http.post(f"/api/games/{game['id']}/photo", headers={"X-Token": game["token"]},
                     files={"photo": ("t.jpg", data, "image/jpeg")})


def _end_turn(http, game):
    h = {"X-Token": game["token"]}
    turn = http.get(f"/api/games/{game['id']}", headers=h).json()["round"]["turn"]
    return http.post(f"/api/games/{game['id']}/turn/end", headers=h,
                     json={"turn_id": turn["id"]})


def _refused_full(response):
    assert response.status_code == 507, response.text
    assert "disk is full" in response.json()["detail"]


def test_a_real_server_on_a_full_disk_answers_507_and_comes_back(tmp_path):
    with tmpfs(tmp_path / "data", "4m") as data:
        server = ServerProcess(data).start()
        try:
            with httpx.Client(base_url=server.base, timeout=60) as http:
                game = http.post("/api/games", json={"players": ["Ann", "Ben"]},
                                 headers={"X-Token": server.table_token}).json()
                h = {"X-Token": game["token"]}
                assert http.post(f"/api/games/{game['id']}/rounds", headers=h).is_success
                kept = [_post_photo(http, game, FIRST_MELD).json()["photo_id"]]
                first = _end_turn(http, game)
                assert first.status_code == 200, first.text

                fill(data / "filler")
                _refused_full(_post_photo(http, game, MORE))
                _refused_full(_end_turn(http, game))
                _refused_full(http.post(f"/api/games/{game['id']}/frames", headers={
                    **h, "Content-Type": "image/jpeg"}, content=MORE))
                _refused_full(http.post("/api/games", json={"players": ["Cy", "Di"]},
                                        headers={"X-Token": server.table_token}))
                # Reading goes on: the game is as the last stored write left it.
                view = http.get(f"/api/games/{game['id']}", headers=h)
                assert view.status_code == 200
                turns = http.get(f"/api/games/{game['id']}/history", headers=h).json()["turns"]
                assert [t["turn"] for t in turns] == [first.json()["turn"]]

                (data / "filler").unlink()  # space is back: no restart needed
                again = _post_photo(http, game, MORE)
                assert again.status_code == 200, again.text
                kept.append(again.json()["photo_id"])
                second = _end_turn(http, game)
                assert second.status_code == 200, second.text
            server.kill()  # as a power cut: only what was committed is there
            server.start()
            with httpx.Client(base_url=server.base, timeout=60) as http:
                turns = http.get(f"/api/games/{game['id']}/history", headers=h).json()["turns"]
                assert [t["turn"] for t in turns] == [first.json()["turn"],
                                                      second.json()["turn"]]
                for photo_id, sent in zip(kept, (FIRST_MELD, MORE), strict=True):
                    got = http.get(f"/api/games/{game['id']}/photos/{photo_id}", headers=h)
                    assert got.content == sent
        finally:
            server.stop()


def test_a_storage_opened_on_a_nearly_full_disk_reads_and_refuses_writes(tmp_path):
    with tmpfs(tmp_path / "disk", "3m") as disk:
        storage = Storage(disk / "db.sqlite3")
        token = storage.table_token()
        game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"})
        storage.close()
        filled = fill(disk / "filler")
        os.truncate(disk / "filler", filled - 512 * 1024)  # 512 KiB free: under the reserve
        again = Storage(disk / "db.sqlite3")
        assert again.table_token() == token and again.game(game.id).id == game.id
        assert again.full
        with pytest.raises(StorageFull):
            again.save_state(game.id, {"phase": "playing"})
        assert again.game(game.id).state == {"phase": "setup"}
        again.close()
