"""Camera frames across tables (issue #20): every table gets its turn of the reader, and a
frame showing the table as the last read one is not read by the models."""

from __future__ import annotations

import asyncio
import time

import cv2
import numpy as np
import pytest

from app.server.frames import FrameHub
from app.server.games import GameService
from app.server.still import STILL_MAX_DIFF, same_table, still_difference, still_picture
from app.server.storage import Storage
from tests.server_helpers import RUN_B1_B4, RUN_R2_R5, reader, table_photo
from vision.recognition.decode import Photo
from vision.recognition.detections import TileDetections


class SlowReader:
    """A reader whose every read takes the same time and finds nothing: the test is about
    who is read, not what."""

    detector = None

    def __init__(self, seconds: float = 0.01):
        self.seconds = seconds
        self.reads = 0

    def read(self, photo):
        self.reads += 1
        time.sleep(self.seconds)
        return TileDetections.empty()


def _changing_frames(n: int) -> list[bytes]:
    rng = np.random.default_rng(1)
    return [cv2.imencode(".jpg", rng.integers(0, 255, (120, 160, 3), np.uint8))[1].tobytes()
            for _ in range(n)]


def test_sixteen_tables_lose_frames_alike(tmp_path):
    """Frames come in table order each round (as phones started in turn would send); the
    reader can read about half. A first-come queue served table 1 more than table 16."""

    async def run():
        storage = Storage(tmp_path / "frames.sqlite3")
        slow = SlowReader()
        service = GameService(storage, slow)
        hub = FrameHub(service, slow, workers=1)
        games = [service.create(["Ann", "Ben"]).id for _ in range(16)]
        frames = _changing_frames(7)
        k = 0
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            for game_id in games:
                k += 1
                hub.put(game_id, frames[k % len(frames)])
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.3)
        stats = [hub.stats(g) for g in games]
        await hub.close()
        storage.close()
        return stats

    stats = asyncio.run(run())
    reads = [s["read"] for s in stats]
    assert min(reads) > 0 and sum(s["dropped"] for s in stats) > 0, reads
    assert max(reads) - min(reads) <= 2, reads


def _still(data: bytes) -> np.ndarray:
    return still_picture(Photo.from_bytes(data))


def _noisy(data: bytes, seed: int, sigma: float = 3.0, gain: float = 1.0) -> bytes:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    noise = np.random.default_rng(seed).normal(0, sigma, image.shape)
    out = np.clip(image * gain + noise, 0, 255).astype(np.uint8)
    return cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 80])[1].tobytes()


def test_camera_noise_and_flicker_are_the_same_table_and_a_new_set_is_not():
    table = table_photo(RUN_R2_R5)
    a, b = _still(_noisy(table, 1)), _still(_noisy(table, 2, gain=1.02))
    assert same_table(b, a), still_difference(b, a)
    more = _still(_noisy(table_photo(RUN_R2_R5, RUN_B1_B4), 3))
    assert not same_table(more, a)
    assert still_difference(more, a) > 3 * STILL_MAX_DIFF


@pytest.fixture
def counting(monkeypatch):
    real = reader()
    calls = []
    original = type(real).read

    def read(self, photo, *args, **kwargs):
        calls.append(photo)
        return original(self, photo, *args, **kwargs)

    monkeypatch.setattr(type(real), "read", read)
    return calls


def test_a_still_table_is_read_once_and_still_becomes_the_stable_table(client, app,
                                                                        counting):
    from tests.server_helpers import new_game

    game = new_game(client, app)
    headers = {"X-Token": game["token"], "content-type": "image/jpeg"}
    table = table_photo(RUN_R2_R5)
    frames = [_noisy(table, seed) for seed in range(8)]
    for data in frames:
        assert client.post(f"/api/games/{game['id']}/frames", content=data,
                           headers=headers).status_code == 202
        deadline = time.monotonic() + 30
        while app.state.hub.stats(game["id"])["received"] > sum(
                app.state.hub.stats(game["id"])[k] for k in ("read", "dropped")):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    stats = app.state.hub.stats(game["id"])
    assert stats["read"] == 8 and stats["still"] == 7 and stats["dropped"] == 0, stats
    assert len(counting) == 1
    # The tracker still counted the still frames: the table held, and was stored.
    assert stats["changes"] == 1
    reading = client.get(f"/api/games/{game['id']}/reading",
                         headers={"X-Token": game["token"]}).json()
    assert sorted(t["number"] for t in reading["tiles"]) == [2, 3, 4, 5]
    # A new set on the table is read.
    more = _noisy(table_photo(RUN_R2_R5, RUN_B1_B4), 99)
    client.post(f"/api/games/{game['id']}/frames", content=more, headers=headers)
    deadline = time.monotonic() + 30
    while app.state.hub.stats(game["id"])["read"] < 9:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert len(counting) == 2 and app.state.hub.stats(game["id"])["still"] == 7
