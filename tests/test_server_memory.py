"""Bounded memory for small files that decode big (issue #20): formats decoded whole have
a lower pixel limit, and the pixels decoded at once, by all uploads together, stay within
the server's decode memory (measured as the server process's peak RSS, VmHWM)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import cv2
import httpx
import numpy as np
import pytest

from app.server.uploads import WHOLE_BYTES_PER_PIXEL, WHOLE_MAX_PIXELS
from tests.server_helpers import RUN_R2_R5, ServerProcess, new_game, table_photo, upload

BUDGET_MB = 200


def _bomb(size: tuple[int, int], ext: str = ".png", **flags) -> bytes:
    image = np.full((size[1], size[0], 3), (40, 120, 60), np.uint8)
    params = [cv2.IMWRITE_PNG_COMPRESSION, 9] if ext == ".png" else \
        [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, int(bool(flags))]
    ok, data = cv2.imencode(ext, image, params)
    assert ok
    return data.tobytes()


@pytest.mark.parametrize("ext,progressive", [(".png", False), (".jpg", True)])
def test_a_small_file_decoding_whole_to_119_mp_is_refused_from_its_header(client, app, ext,
                                                                          progressive):
    bomb = _bomb((12600, 9440), ext, **({"progressive": True} if progressive else {}))
    assert len(bomb) < 2 * 2**20
    game = new_game(client, app)
    response = upload(client, game, "photo", bomb,
                      content_type="image/png" if ext == ".png" else "image/jpeg")
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert "decoded whole" in detail and f"at most {WHOLE_MAX_PIXELS // 10**6}" in detail


def _hwm_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", text).group(1)) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux /proc")
def test_eight_bombs_at_once_stay_within_the_decode_memory(tmp_path):
    # 30 MP of PNG: each holds about 180 MB decoded, so a 200 MB budget lets one decode
    # at a time (the two photo slots alone would let two: 360 MB).
    size = (6400, 4700)
    assert size[0] * size[1] * WHOLE_BYTES_PER_PIXEL / 2**20 < BUDGET_MB
    bomb = _bomb(size)
    server = ServerProcess(tmp_path, extra=("--decode-memory", str(BUDGET_MB))).start()
    try:
        with httpx.Client(base_url=server.base, timeout=300) as http:
            game = http.post("/api/games", json={"players": ["Ann", "Ben"]},
                             headers={"X-Token": server.table_token}).json()
            url, headers = f"/api/games/{game['id']}/photo", {"X-Token": game["token"]}
            warm = http.post(url, headers=headers,
                             files={"photo": ("t.jpg", table_photo(RUN_R2_R5), "image/jpeg")})
            assert warm.status_code == 200, warm.text
            idle = _hwm_mb(server.proc.pid)
            statuses = []

            def send():
                with httpx.Client(base_url=server.base, timeout=300) as own:
                    statuses.append(own.post(url, headers=headers, files={
                        "photo": ("b.png", bomb, "image/png")}).status_code)

            threads = [threading.Thread(target=send) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            peak = _hwm_mb(server.proc.pid) - idle
        assert statuses == [200] * 8
        # One decode at a time (~180 MB) and what the requests hold besides.
        assert peak < 1.5 * BUDGET_MB, f"peak {peak:.0f} MB over the idle server"
    finally:
        server.stop()
