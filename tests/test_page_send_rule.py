"""The phone page's send rule (app/static/js/send_rule.js) in headless Debian chromium: it is
the rule the hall bench's phones follow (bench/phone_rule.py), and the page's camera loop
sends a burst after its view changed and 2 frames a second while it is still."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench import phone_rule
from tests.page_helpers import chromium_path, launch

STATIC = Path(__file__).resolve().parent.parent / "app" / "static"


@pytest.fixture(scope="module")
def page():
    """A page of a plain static server over app/static, in chromium."""
    chromium_path()
    from playwright.sync_api import sync_playwright

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(STATIC))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
            page.evaluate("async () => { window.rule = await import('/js/send_rule.js'); }")
            yield page
            browser.close()
    finally:
        server.shutdown()


def looks() -> list[float]:
    """10 s of a phone's looks (one per 100 ms), as differences from the look before: still,
    a tile moved between two looks, still, a hand moving for 2 s, still, the first look."""
    diffs = [float("inf")] + [1.0] * 29 + [25.0] + [1.5] * 29 + [40.0] * 20 + [1.0] * 21
    return diffs


def test_the_bench_phone_sends_as_the_page_does(page):
    diffs = looks()
    js = page.evaluate("""(diffs) => { const r = new window.rule.SendRule(); const sent = [];
        diffs.forEach((d, k) => { if (r.look(k * window.rule.WATCH_MS,
                                                d === null ? Infinity : d)) sent.push(k); });
        return sent; }""", [None if d == float("inf") else d for d in diffs])
    rule = phone_rule.SendRule()
    python = [k for k, d in enumerate(diffs) if rule.look(k * phone_rule.WATCH_MS, d)]
    assert js == python
    sent = np.array(python) * phone_rule.WATCH_MS  # ms
    # Settled after the first look and after the tile moved (look 30): a burst of ~6 a
    # second for 1.5 s each time, 2 a second otherwise; never beyond the socket's 10/s.
    after_move = sent[(sent > 3000) & (sent <= 4600)]
    assert len(after_move) >= 9, sent
    still = sent[(sent > 1700) & (sent < 3000)]
    assert np.all(np.diff(still) == 500), sent
    hand = sent[(sent >= 6000) & (sent < 8000)]  # the hand moving: 2 a second
    assert len(hand) == 4 and np.all(np.diff(hand) == 500), sent
    assert max(np.sum((sent >= t) & (sent < t + 1000)) for t in range(0, 10000, 100)) <= 7
    assert np.all(np.diff(sent) >= phone_rule.WATCH_MS)


def test_the_page_measures_its_pictures_as_the_bench_phone(page):
    rng = np.random.default_rng(5)
    grey = rng.uniform(0, 255, (48, 64)).astype(np.float32)
    blurred = page.evaluate("(g) => Array.from(window.rule.blur3(Float32Array.from(g), 64, 48))",
                            grey.ravel().tolist())
    expected = cv2.blur(grey, (3, 3), borderType=cv2.BORDER_REPLICATE)
    assert np.allclose(np.array(blurred).reshape(48, 64), expected, atol=1e-3)
    other = np.clip(expected * 1.02 + rng.normal(0, 1, expected.shape), 0, 255).astype(np.float32)
    other[10:14, 20:23] += 60  # a tile's worth of pixels changed
    js = page.evaluate("([a, b]) => window.rule.pictureDifference(Float32Array.from(a), "
                       "Float32Array.from(b))", [other.ravel().tolist(), expected.ravel().tolist()])
    assert js == pytest.approx(phone_rule.picture_difference(other, expected), abs=1e-2)
    assert js > phone_rule.MOVE_DIFF


def test_the_camera_loop_bursts_after_its_view_changed(page):
    """LiveCamera on a canvas filmed as its video (no socket: it posts its frames): frames
    sent per second while still, and in the 1.5 s after a tile-sized patch moved."""
    times = page.evaluate("""async () => {
        const { LiveCamera } = await import('/js/camera.js');
        const canvas = document.createElement('canvas');
        canvas.width = 640; canvas.height = 480;
        const ctx = canvas.getContext('2d');
        const paint = (x) => { ctx.fillStyle = '#2e6b3a'; ctx.fillRect(0, 0, 640, 480);
            ctx.fillStyle = '#f4ecd8'; ctx.fillRect(x, 200, 40, 56); };
        paint(100);
        const video = document.createElement('video');
        video.muted = true; video.srcObject = canvas.captureStream(30);
        document.body.appendChild(video);
        await video.play();
        const sent = [];
        const api = { liveSocketUrl: () => 'ws://127.0.0.1:9/none',
                      frame: async () => { sent.push(performance.now()); } };
        const cam = new LiveCamera(api, video, {});
        cam.connect();
        const t0 = performance.now();
        cam.timer = setInterval(() => cam.look(), 100);
        const wait = (ms) => new Promise((r) => setTimeout(r, ms));
        await wait(4000);
        const moved = performance.now();
        paint(300);
        await wait(3500);
        cam.stop();
        return { t0, moved, sent };
    }""")
    sent = np.array(times["sent"])
    moved = times["moved"]
    still = sent[(sent >= moved - 2000) & (sent < moved)]
    burst = sent[(sent >= moved) & (sent < moved + 1500)]
    later = sent[(sent >= moved + 2000) & (sent < moved + 3500)]
    assert 3 <= len(still) <= 5, (still - moved).round()
    assert len(burst) >= 6, (burst - moved).round()
    assert 2 <= len(later) <= 4, (later - moved).round()
