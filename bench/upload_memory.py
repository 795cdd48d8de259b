"""What the worst accepted photo costs the game server in memory: peak RSS (VmHWM of the
server process) over the idle server's, one upload at a time and eight at once.

    python -m bench.upload_memory [--at-once 8] [--decode-memory MB] [--json OUT]
    python -m bench.upload_bench --memory   (the same)

Small files that decode big ("bombs"): one colour over the whole image compresses to
almost nothing. Each kind is uploaded to a fresh `rummikub serve` process (VmHWM only
grows) after one small warm-up photo, as `POST /api/games/{id}/photo`:
- PNG at the limit for formats decoded whole (`uploads.WHOLE_MAX_PIXELS`, 50 MP);
- progressive JPEG at that limit (libjpeg holds every coefficient whatever its scale);
- baseline JPEG of 119 MP (decoded at 1/8 for the detector);
- and, refused from their headers: a PNG and a progressive JPEG of 119 MP.
Then the worst kind, `--at-once` uploads at the same moment (threads), on a fresh server:
the decode budget (`--decode-memory`, default the server's 768 MB) lets the ones that do
not fit wait.
"""

from __future__ import annotations

import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from bench import bench_parser, save_json
from bench.serve_bench import free_port

ROOT = Path(__file__).resolve().parent.parent


def bombs() -> dict[str, tuple[bytes, str]]:
    """name -> (bytes, content type)."""
    out = {}
    fill = (40, 120, 60)
    for name, (w, h), ext, params in (
        ("PNG 50 MP", (8160, 6120), ".png", [cv2.IMWRITE_PNG_COMPRESSION, 9]),
        ("progressive JPEG 50 MP", (8160, 6120), ".jpg",
         [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
        ("baseline JPEG 119 MP", (12600, 9440), ".jpg", [cv2.IMWRITE_JPEG_QUALITY, 90]),
        ("PNG 119 MP (refused)", (12600, 9440), ".png", [cv2.IMWRITE_PNG_COMPRESSION, 9]),
        ("progressive JPEG 119 MP (refused)", (12600, 9440), ".jpg",
         [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
    ):
        image = np.full((h, w, 3), fill, np.uint8)
        ok, data = cv2.imencode(ext, image, params)
        assert ok
        out[name] = (data.tobytes(), "image/png" if ext == ".png" else "image/jpeg")
        del image
    return out


def vm_hwm_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", text).group(1)) / 1024


class Server:
    """A fresh `rummikub serve` on a free port, with one game and a warm-up upload."""

    def __init__(self, tmp: Path, decode_memory: int | None):
        import subprocess

        import httpx

        self.port = free_port()
        extra = ["--decode-memory", str(decode_memory)] if decode_memory else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port",
             str(self.port), "--data", str(tmp), "--no-qr", *extra],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(self.base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.2)
        from app.server.storage import Storage

        storage = Storage(tmp / "rummikub.sqlite3")
        table = storage.table_token()
        storage.close()
        self.game = httpx.post(self.base + "/api/games", json={"players": ["Ann", "Ben"]},
                               headers={"X-Token": table}).json()
        from bench.floor import base_photo

        self.upload(base_photo()[0], "image/jpeg")  # models and buffers warm
        time.sleep(0.5)
        self.idle_mb = vm_hwm_mb(self.proc.pid)

    def upload(self, data: bytes, kind: str) -> tuple[int, float]:
        import httpx

        start = time.perf_counter()
        response = httpx.post(f"{self.base}/api/games/{self.game['id']}/photo",
                              headers={"X-Token": self.game["token"]},
                              files={"photo": ("p", data, kind)}, timeout=600)
        return response.status_code, time.perf_counter() - start

    def peak_mb(self) -> float:
        return vm_hwm_mb(self.proc.pid) - self.idle_mb

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)


def measure(at_once: int = 8, decode_memory: int | None = None) -> dict:
    files = bombs()
    report = {"one_at_a_time": {}, "at_once": None, "decode_memory_mb": decode_memory or 768}
    for name, (data, kind) in files.items():
        with tempfile.TemporaryDirectory() as tmp:
            server = Server(Path(tmp), decode_memory)
            try:
                status, seconds = server.upload(data, kind)
                report["one_at_a_time"][name] = {
                    "bytes": len(data), "status": status, "seconds": round(seconds, 2),
                    "idle_mb": round(server.idle_mb), "peak_over_idle_mb": round(
                        server.peak_mb())}
            finally:
                server.stop()
    accepted = {k: v for k, v in report["one_at_a_time"].items() if v["status"] == 200}
    worst = max(accepted, key=lambda k: accepted[k]["peak_over_idle_mb"])
    data, kind = files[worst]
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp), decode_memory)
        try:
            answers: list = []
            threads = [threading.Thread(target=lambda: answers.append(server.upload(data, kind)))
                       for _ in range(at_once)]
            start = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            report["at_once"] = {
                "file": worst, "uploads": at_once,
                "statuses": sorted(a[0] for a in answers),
                "seconds": round(time.perf_counter() - start, 2),
                "idle_mb": round(server.idle_mb), "peak_over_idle_mb": round(server.peak_mb())}
        finally:
            server.stop()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.upload_memory", __doc__)
    parser.add_argument("--at-once", type=int, default=8)
    parser.add_argument("--decode-memory", type=int, default=None, metavar="MB")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report = measure(args.at_once, args.decode_memory)
    print(f"upload memory: peak RSS (VmHWM) of the server over its idle peak; decode budget "
          f"{report['decode_memory_mb']} MB")
    for name, row in report["one_at_a_time"].items():
        print(f"  {name:>34}: {row['bytes'] / 2**20:5.2f} MB file -> {row['status']}, "
              f"+{row['peak_over_idle_mb']} MB over {row['idle_mb']} MB, {row['seconds']} s")
    many = report["at_once"]
    print(f"  {many['uploads']} x {many['file']} at once: {many['statuses']}, "
          f"+{many['peak_over_idle_mb']} MB over {many['idle_mb']} MB, {many['seconds']} s")
    save_json(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
