"""`rummikub watch`: a video file feeds a game on a real server through the frames API,
as a laptop's webcam would; the server's stable table and the turn judged from it are the
proof. No browser needed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.page_helpers import ROOT, Server, api, turn_photos


@pytest.fixture()
def server(tmp_path):
    s = Server(tmp_path / "data").start()
    yield s
    s.stop()


def watch(*args: str, timeout: float = 90.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", "watch", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def video_of(path, image, seconds=4.0, fps=10):
    import cv2

    h, w = image.shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    for _ in range(int(seconds * fps)):
        writer.write(image)
    writer.release()
    return path


def new_game(server):
    game = api(server, "POST", "/api/games", server.table_token,
               {"players": ["Ann", "Ben"], "timer": {"enabled": False}})
    api(server, "POST", f"/api/games/{game['id']}/rounds", game["token"], {"starter": "Ann"})
    return game


def test_watch_feeds_a_video_to_the_game_and_the_turn_is_judged(server, tmp_path):
    import cv2

    before, _after = turn_photos()
    video = video_of(tmp_path / "table.avi", cv2.imread(str(before)))
    game = new_game(server)

    # `--game=ID` form: a url-safe id or token may begin with "-".
    done = watch("--server", server.url, f"--game={game['id']}", f"--token={game['token']}",
                 "--video", str(video), "--fps", "5")
    assert done.returncode == 0, done.stderr
    assert "watching game" in done.stdout
    assert "table: " in done.stdout and ", valid" in done.stdout, done.stdout
    assert "sent " in done.stdout.splitlines()[-1]

    table = api(server, "GET", f"/api/games/{game['id']}", game["token"])["table"]
    assert table["table_valid"] and sum(s["valid"] for s in table["sets"]) == 4
    turn = api(server, "GET", f"/api/games/{game['id']}", game["token"])["round"]["turn"]
    verdict = api(server, "POST", f"/api/games/{game['id']}/turn/end", game["token"],
                  {"turn_id": turn["id"]})
    assert verdict["legal"] and verdict["meld_total"] >= 100


def test_watch_says_in_one_line_what_is_wrong(server, tmp_path):
    game = new_game(server)
    common = ["--server", server.url, f"--game={game['id']}"]

    wrong = watch(*common, "--token", "not-the-token", "--video", "x.avi")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert wrong.stderr.startswith("rummikub watch: game ")

    missing = watch(*common, f"--token={game['token']}", "--video", str(tmp_path / "none.avi"))
    assert missing.returncode == 2 and "not a video file" in missing.stderr, missing.stderr

    no_camera = watch(*common, f"--token={game['token']}", "--camera", "97")
    assert no_camera.returncode == 2, no_camera.stderr
    assert no_camera.stderr == "rummikub watch: --camera 97: no camera with that number can " \
                               "be opened\n"

    nowhere = watch("--server", "http://127.0.0.1:9", "--game", "g", "--token", "t",
                    "--video", "x.avi")
    assert nowhere.returncode == 2 and "cannot reach it" in nowhere.stderr, nowhere.stderr
    assert "Traceback" not in wrong.stderr + missing.stderr + nowhere.stderr
