"""Shared pieces of the server tests: one loaded TileReader, table photos composed from
the rendered sample photo, an app on a temporary database, a real server process.

The table photos are made from `sample_images/table_runs_groups.jpg` and its true labels:
the tiles are painted out (inpainted) to get the bare table, then the tiles of chosen
sets are put back, so each photo shows exactly the table a turn should leave.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"

# Sets of the sample table, each as (codes, box of their centres: x0, y0, x1, y1).
RUN_R2_R5 = ({"R2", "R3", "R4", "R5"}, (700, -40, 1030, 190))  # 14 points
GROUP_9S = ({"B9", "K9", "O9"}, (800, 175, 1040, 360))  # 27 points
RUN_B1_B4 = ({"B1", "B2", "B3", "B4"}, (520, 600, 850, 790))  # 10 points
RUN_O7_O10 = ({"O7", "O8", "O9", "O10"}, (-30, 45, 250, 250))  # 34 points
PAIR_O11_O12 = ({"O11", "O12"}, (-20, 360, 120, 490))  # too short: an invalid set


class FakeClock:
    """A wall clock the test moves by hand."""

    def __init__(self, start: float = 1_800_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@lru_cache(maxsize=1)
def reader():
    from vision.recognition.pipeline import TileReader

    return TileReader.load()


@lru_cache(maxsize=1)
def _sample():
    image = cv2.imread(str(SAMPLES / "table_runs_groups.jpg"))
    tiles = json.loads((SAMPLES / "table_runs_groups.json").read_text())["tiles"]
    mask = _mask(image.shape, tiles, 8)
    bare = cv2.inpaint(image, mask, 5, cv2.INPAINT_TELEA)
    # A tile cut by the photo's edge leaves a smudge the detector half believes in:
    # cover that corner with bare table from nearby.
    bare[600:750, 0:100] = bare[600:750, 300:400]
    return image, tiles, bare


def _mask(shape, tiles, grow: int) -> np.ndarray:
    mask = np.zeros(shape[:2], np.uint8)
    for tile in tiles:
        cv2.fillPoly(mask, [np.array(tile["corners"], np.int32)], 255)
    return cv2.dilate(mask, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))


def _centre_in(tile, box) -> bool:
    x, y = np.mean(np.array(tile["corners"]), axis=0)
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


@lru_cache(maxsize=32)
def _table_photo(sets: tuple) -> bytes:
    image, tiles, bare = _sample()
    keep = [t for t in tiles for codes, box in sets if t["code"] in codes and _centre_in(t, box)]
    out = bare.copy()
    mask = _mask(image.shape, keep, 3)
    out[mask > 0] = image[mask > 0]
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok
    return data.tobytes()


def table_photo(*sets) -> bytes:
    """A JPEG of the sample table holding only the given sets (see the constants)."""
    return _table_photo(tuple((frozenset(codes), box) for codes, box in sets))


def sample_bytes(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


# Where `make_app` keeps the games when not told: None is a SQLite file in the test's
# folder; tests/conftest.py sets a PostgreSQL URL for the tests run on both databases.
DATABASE: str | None = None


def make_app(tmp_path: Path, **settings):
    from app.server import ServerSettings, create_app

    settings.setdefault("reader", reader())
    settings.setdefault("data_dir", tmp_path)
    if DATABASE is not None:
        settings.setdefault("db_path", DATABASE)
    settings.setdefault("static_dir", None)
    return create_app(ServerSettings(**settings))


def h(game: dict) -> dict:
    """The headers of a call made from the game's phone (its token)."""
    return {"X-Token": game["token"]}


def new_game(client, app, players=("Ann", "Ben"), **body) -> dict:
    response = client.post("/api/games", json={"players": list(players), **body},
                           headers={"X-Token": app.state.table_token})
    assert response.status_code == 201, response.text
    return response.json()


def start_round(client, game: dict, **body):
    """Start the game's next round (the response)."""
    return client.post(f"/api/games/{game['id']}/rounds", headers=h(game),
                       **({"json": body} if body else {}))


def game_in_round(client, app, players=("Ann", "Ben"), **body) -> dict:
    """A new game (as `new_game` makes it) with its first round started."""
    game = new_game(client, app, players, **body)
    response = start_round(client, game)
    assert response.status_code == 200, response.text
    return game


def turn_body(client, game: dict, **body) -> dict:
    """A turn call's JSON body naming the running turn, as the page sends it."""
    view = client.get(f"/api/games/{game['id']}", headers=h(game)).json()
    return {"turn_id": view["round"]["turn"]["id"], **body}


def upload(client, game: dict, route: str, photo: bytes, *, token: str | None = None,
           content_type: str = "image/jpeg", **extra):
    return client.post(f"/api/games/{game['id']}/{route}",
                       headers={"X-Token": token or game["token"]},
                       files={"photo": ("photo.jpg", photo, content_type)}, **extra)


# ----------------------------------------------------------------------------- a real server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """`rummikub serve` in a child process on 127.0.0.1 and a free port."""

    def __init__(self, data_dir: Path, port: int | None = None, https: bool = False,
                 db: str | None = None, extra: tuple[str, ...] = ()):
        self.data_dir = Path(data_dir)
        self.db = db  # --db: a PostgreSQL URL; default the SQLite file in data_dir
        self.extra = tuple(extra)  # more `rummikub serve` options
        self.port = port or free_port()
        self.https = https
        self.base = f"{'https' if https else 'http'}://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.table_token: str | None = None

    def start(self, timeout: float = 60.0) -> ServerProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port",
             str(self.port), "--data", str(self.data_dir), "--no-qr"]
            + (["--https"] if self.https else []) + (["--db", self.db] if self.db else [])
            + list(self.extra),
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stdout.read()}")
            try:
                # The certificate is self-signed: its fingerprint is what a player checks.
                if httpx.get(self.base + "/api/health", timeout=1,
                             verify=False).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            self.kill()
            raise RuntimeError("server did not start in time")
        from app.server.storage import Storage

        storage = Storage(self.db or self.data_dir / "rummikub.sqlite3")
        self.table_token = storage.table_token()
        storage.close()
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when the power goes."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@contextlib.contextmanager
def two_processes(postgres_server, folders: list[Path], timeout: float = 120.0):
    """A hall: two `rummikub serve` processes (data in `folders`) on one fresh PostgreSQL
    database, dropped afterwards. The first starts alone: it migrates the database."""
    url = postgres_server.new_database()
    servers = [ServerProcess(folder, db=url) for folder in folders]
    try:
        for server in servers:
            server.start(timeout=timeout)
        yield servers
    finally:
        for server in servers:
            server.stop()
        postgres_server.drop_database(url, missing_ok=True)
