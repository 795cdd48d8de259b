"""What the browser tests of the table page share: a real server process, Debian's
chromium driven by Playwright, and a rendered table as the fake camera's video.

The browser tests skip (saying why) only where chromium or Playwright is missing; `.ci/run`
installs chromium, so CI runs them.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 860}


def chromium_path() -> str:
    """Debian's chromium (never a downloaded browser); skips the test where it is absent."""
    path = os.environ.get("RUMMIKUB_CHROMIUM") or shutil.which("chromium") or \
        shutil.which("chromium-browser")
    if not path:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does it)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (dev extra)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`rummikub serve` on 127.0.0.1 in its own process, on a fresh data folder."""

    def __init__(self, data_dir: Path, port: int | None = None):
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.table_token: str | None = None
        self.proc: subprocess.Popen | None = None
        self.log = self.data_dir / "server.log"

    def start(self, timeout: float = 60.0) -> Server:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        out = open(self.log, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port",
             str(self.port), "--data", str(self.data_dir), "--no-qr"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/api/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError(f"the server did not answer: {self.log.read_text()[-2000:]}")
        # The join link the terminal shows: http://<address>:<port>/?t=<table token>
        for _ in range(50):
            m = re.search(r"\?t=([A-Za-z0-9_-]{16,})", self.log.read_text())
            if m:
                self.table_token = m.group(1)
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"no join link printed: {self.log.read_text()[-2000:]}")
        return self

    @property
    def join_url(self) -> str:
        return f"{self.url}/?t={self.table_token}"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def api(server: Server, method: str, path: str, token: str | None = None, json_body=None,
        data: bytes | None = None, content_type: str | None = None):
    """One API call from the test itself (to check what the page did), JSON or text back."""
    import json

    headers = {}
    if token:
        headers["X-Token"] = token
    body = data
    if json_body is not None:
        body = json.dumps(json_body).encode()
        headers["Content-Type"] = "application/json"
    elif content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(server.url + path, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
        return json.loads(text) if "json" in r.headers.get("content-type", "") else text


def write_y4m(path: Path, frames_bgr: list[np.ndarray], fps: int = 10) -> Path:
    """A YUV4MPEG2 (4:2:0) video Chromium's fake camera plays in a loop."""
    import cv2

    h, w = frames_bgr[0].shape[:2]
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for frame in frames_bgr:
            f.write(b"FRAME\n")
            f.write(cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())
    return path


def table_video(path: Path, photo: Path = SAMPLES / "table_runs_groups.jpg",
                size=(800, 600), seconds: float = 2.0, fps: int = 10) -> Path:
    """A still table filmed for a few seconds: the rendered photo, scaled, with a little
    sensor noise per frame (the tracker sees a camera, not one repeated picture)."""
    import cv2

    image = cv2.resize(cv2.imread(str(photo)), size, interpolation=cv2.INTER_AREA)
    rng = np.random.default_rng(0)
    frames = []
    for _ in range(int(seconds * fps)):
        noise = rng.normal(0, 2.0, image.shape)
        frames.append(np.clip(image + noise, 0, 255).astype(np.uint8))
    return write_y4m(path, frames, fps)


# Two photos of one rendered table (bench.synth_tables, seed 13), kept as files so the page
# tests do not move when the renderer changes; `render_turn_photos` makes them again.
TURN_DIR = ROOT / "tests" / "page_data"
TURN_SEED = 13


def turn_photos() -> tuple[Path, Path]:
    """(before, after) photos of one table, 800 x 600: `before` holds four valid sets worth
    120 points (O3 K3 B3, K7-K11, J R7 O7, R5-R10: a legal initial meld); `after` adds
    the invalid group B10 R10 R12 O10 and the loose tiles O2, O13 and R9."""
    return TURN_DIR / "table_before.jpg", TURN_DIR / "table_after.jpg"


def render_turn_photos(out_dir: Path = TURN_DIR, seed: int = TURN_SEED) -> tuple[Path, Path]:
    """Render the two photos of `turn_photos` (needs Pillow, the dev extra).

    The table is `synth_table` laid in rows, seen almost from above; `before` is it without
    its last set and its loose tiles, painted with the same surface and light.
    """
    from dataclasses import replace

    import cv2

    from bench.synth_tables import jpeg_roundtrip, render_table, synth_table

    rng = np.random.default_rng(seed)
    after = synth_table(rng, width=800, height=600, n_sets=5, n_loose=3, mode="rows",
                        oblique=0.1, pair_p=0.0, flip_p=0.0, tile_w=44)
    keep = [i for s in after.sets[:4] for i in s]
    index = {old: new for new, old in enumerate(keep)}
    before = replace(after, codes=[after.codes[i] for i in keep], quads=after.quads[keep],
                     sets=[[index[i] for i in s] for s in after.sets[:4]], loose=[],
                     plane_quads=after.plane_quads[keep])
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, table in (("before", before), ("after", after)):
        image = jpeg_roundtrip(render_table(np.random.default_rng(1000 + seed), table))
        path = out_dir / f"table_{name}.jpg"
        cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        paths.append(path)
    return paths[0], paths[1]


# A name for 127.0.0.1 that is not "localhost": a page opened through it is not a secure
# context, as a phone on the LAN opening http://<laptop>:8000 is not.
LAN_NAME = "table.test"


def launch(playwright, video: Path | None = None):
    """Headless Debian chromium; with `video`, that file is the (granted) camera."""
    args = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--autoplay-policy=no-user-gesture-required",
            f"--host-resolver-rules=MAP {LAN_NAME} 127.0.0.1"]
    if video is not None:
        args += ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                 f"--use-file-for-fake-video-capture={video}"]
    return playwright.chromium.launch(executable_path=chromium_path(), args=args)


def untimed_round(page, server: Server) -> None:
    """Ann and Ben's game, without a turn timer, created on the table page and its first
    round started: the page is on its play screen."""
    from playwright.sync_api import expect

    page.goto(f"http://{LAN_NAME}:{server.port}/?t={server.table_token}")
    names = page.locator("#players .player")
    names.nth(0).fill("Ann")
    names.nth(1).fill("Ben")
    page.uncheck("#timer-on")
    page.click("#create-game")
    expect(page.locator("#screen-start")).to_be_visible()
    page.click("#start-round")
    expect(page.locator("#screen-play")).to_be_visible()


def phone_context(browser, server: Server, *, camera: bool = False):
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                  has_touch=True, accept_downloads=True)
    if camera:
        context.grant_permissions(["camera"], origin=server.url)
    return context


def verdict_panel(page, server: Server, lang: str, verdict: dict, pick: str):
    """What the page's verdict panel shows for `verdict` in `lang`: `format.verdictHtml`
    rendered into a detached element `el`, then the JS expression `pick` over it."""
    page.goto(f"http://{LAN_NAME}:{server.port}/?t={server.table_token}")
    render = """async ([lang, v]) => {
        const i18n = await import('/js/i18n.js');
        await i18n.setLanguage(lang);
        const f = await import('/js/format.js');
        const el = document.createElement('details');
        el.innerHTML = f.verdictHtml(v);
        return (() => { PICK })();
    }"""
    return page.evaluate(render.replace("PICK", pick), [lang, verdict])
