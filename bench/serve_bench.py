"""Four tables streaming camera frames to one game server: is every table served in time?

    python -m bench.serve_bench [--tables 4] [--fps 5] [--seconds 60] [--json OUT]

Starts `rummikub serve` as its own process on a free 127.0.0.1 port (a fresh database in
a temporary folder), creates one game per table, and has each table send JPEG frames of
real photos (`valid/` of the dataset when present, else `sample_images/`) over the live
WebSocket at `--fps` frames a second. A table shows one photo for two seconds, then the
next (players changing the table), so the tracker's stable table changes too.

First one table sends 1 frame/s for `--floor-seconds`: its median latency is the floor
(one frame read with nothing waiting), measured in the same run under the same machine
load, so the four-table latency can be read as a ratio to it. Reports per table: frames sent, read, dropped (replaced by a newer frame while the server
was busy: latest wins), p50 / p95 latency from sending a frame to receiving the reading
made from it, stable-table changes; and the server's memory (RSS) after warm-up, at the
end and at its peak, sampled every second. Targets: p95 < 1 s, every table served (reads
on every table), memory flat.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TARGET_P95_S = 1.0
SWITCH_EVERY_S = 2.0


def photos() -> tuple[list[bytes], str]:
    from vision.recognition.settings import dataset_dir

    valid = sorted(glob.glob(str(dataset_dir() / "valid" / "images" / "*.jpg")))
    if valid:
        return [Path(p).read_bytes() for p in valid], f"{len(valid)} real photos of valid/"
    samples = sorted(glob.glob(str(ROOT / "sample_images" / "*.jpg")))
    return [Path(p).read_bytes() for p in samples], f"{len(samples)} rendered sample photos"


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path, port: int, workers: int = 1, *, extra: tuple[str, ...] = (),
                 log: Path | None = None, wait_s: float = 120) -> subprocess.Popen:
    """A real `rummikub serve` on 127.0.0.1:`port`, returned once /api/health answers 200
    (`extra`: more options; `log`: where its stderr goes, else a pipe read on failure)."""
    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--data", str(data_dir), "--no-qr", "--frame-workers", str(workers), *extra],
        cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=log.open("w") if log is not None else subprocess.PIPE, text=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = log.read_text() if log is not None else proc.stderr.read()
            raise SystemExit(f"server exited: {said[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"server did not start in {wait_s:.0f} s")


class Table:
    def __init__(self, number: int, game: dict, frames: list[bytes]):
        self.number = number
        self.game = game
        self.frames = frames
        self.sent: dict[int, float] = {}
        self.latency: list[float] = []
        self.dropped = 0
        self.errors = 0
        self.changes = 0

    async def run(self, port: int, fps: float, seconds: float) -> None:
        from websockets.asyncio.client import connect

        url = (f"ws://127.0.0.1:{port}/api/games/{self.game['id']}/live"
               f"?token={self.game['token']}")
        async with connect(url, max_size=None) as ws:
            receiver = asyncio.create_task(self._receive(ws))
            start = time.perf_counter()
            seq = 0
            while (now := time.perf_counter()) - start < seconds:
                frame = self.frames[int((now - start) / SWITCH_EVERY_S) % len(self.frames)]
                seq += 1
                self.sent[seq] = time.perf_counter()
                await ws.send(frame)
                # A camera's clock: frame k leaves at k / fps, whatever the server does.
                await asyncio.sleep(max(0.0, start + seq / fps - time.perf_counter()))
            # The last frames' answers may still be on their way.
            await asyncio.sleep(2.0)
            receiver.cancel()

    async def _receive(self, ws) -> None:
        async for raw in ws:
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "reading" and message["frame"].get("seq") is not None:
                sent = self.sent.get(message["frame"]["seq"])
                if sent is not None:
                    self.latency.append(time.perf_counter() - sent)
                self.changes += bool(message.get("changed"))
            elif kind == "dropped":
                self.dropped += 1
            elif kind == "error":
                self.errors += 1


async def run_tables(port: int, tables: list[Table], fps: float, seconds: float,
                     pid: int, memory: list[tuple[float, float]]) -> None:
    async def sample():
        start = time.perf_counter()
        while True:
            memory.append((time.perf_counter() - start, rss_mb(pid)))
            await asyncio.sleep(1.0)

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*(t.run(port, fps, seconds) for t in tables))
    sampler.cancel()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--fps", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--frame-workers", type=int, default=1,
                        help="the server's frame-reading threads (its --frame-workers)")
    parser.add_argument("--floor-seconds", type=float, default=10.0,
                        help="length of the one-table, 1 frame/s run that measures the floor")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)

    import httpx

    frames, source = photos()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = start_server(Path(tmp) / "data", port, args.frame_workers)
        try:
            from app.server.storage import Storage

            storage = Storage(Path(tmp) / "data" / "rummikub.sqlite3")
            table_token = storage.table_token()
            storage.close()
            tables = []
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                for n in range(args.tables):
                    game = http.post("/api/games", json={"players": ["Ann", "Ben"]},
                                     headers={"X-Token": table_token}).json()
                    http.post(f"/api/games/{game['id']}/rounds",
                              headers={"X-Token": game["token"]})
                    # Each table starts at another photo.
                    shift = (n * len(frames)) // max(1, args.tables)
                    tables.append(Table(n + 1, game, frames[shift:] + frames[:shift]))
                # Warm-up: one photo read per table, so model loading is not measured.
                for t in tables:
                    http.post(f"/api/games/{t.game['id']}/photo",
                              headers={"X-Token": t.game["token"]},
                              files={"photo": ("w.jpg", t.frames[0], "image/jpeg")})
            # The floor, measured in this run under the same machine load: one table at
            # 1 frame/s, so no frame ever waits for another.
            floor_table = Table(0, tables[0].game, tables[0].frames)
            asyncio.run(run_tables(port, [floor_table], 1.0, args.floor_seconds, server.pid,
                                   []))
            load_start = os.getloadavg()
            rss_start = rss_mb(server.pid)
            memory: list[tuple[float, float]] = []
            asyncio.run(run_tables(port, tables, args.fps, args.seconds, server.pid, memory))
            load_end = os.getloadavg()
            rss_end = rss_mb(server.pid)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                server_stats = [http.get(f"/api/games/{t.game['id']}/frames/stats",
                                         headers={"X-Token": t.game["token"]}).json()
                                for t in tables]
        finally:
            server.terminate()
            server.wait(10)

    rows = []
    all_latency = []
    for t, stats in zip(tables, server_stats, strict=True):
        lat = np.asarray(t.latency) if t.latency else np.asarray([np.nan])
        all_latency.extend(t.latency)
        rows.append({"table": t.number, "sent": len(t.sent), "read": len(t.latency),
                     "dropped": t.dropped, "errors": t.errors,
                     "server_received": stats["received"], "server_read": stats["read"],
                     "server_dropped": stats["dropped"], "changes": t.changes,
                     "p50_s": float(np.percentile(lat, 50)), "p95_s": float(np.percentile(lat, 95)),
                     "max_s": float(np.max(lat))})
    overall = np.asarray(all_latency) if all_latency else np.asarray([np.nan])
    # Flat memory: the last third of the run against the middle third (after the tracker,
    # photo store and caches have settled).
    third = len(memory) // 3
    middle = [m for _, m in memory[third:2 * third]] or [rss_start]
    last = [m for _, m in memory[2 * third:]] or [rss_end]
    floor = float(np.median(floor_table.latency)) if floor_table.latency else float("nan")
    result = {
        "tables": args.tables, "fps": args.fps, "frame_workers": args.frame_workers, "seconds": args.seconds, "photos": source,
        "cpus": os.cpu_count(), "python": platform.python_version(),
        "per_table": rows,
        "floor_p50_s": floor, "load_average_start": load_start, "load_average_end": load_end,
        "p50_s": float(np.percentile(overall, 50)), "p95_s": float(np.percentile(overall, 95)),
        "rss_mb_start": rss_start, "rss_mb_end": rss_end,
        "rss_mb_peak": max([m for _, m in memory] + [rss_end]),
        "rss_mb_middle_third_median": float(np.median(middle)),
        "rss_mb_last_third_median": float(np.median(last)),
    }
    print(f"serve_bench: {args.tables} tables x {args.fps:g} frames/s for {args.seconds:g} s, "
          f"frames from {source}, {os.cpu_count()} CPUs")
    print(f"{'table':>5} {'sent':>5} {'read':>5} {'dropped':>7} {'errors':>6} {'changes':>7} "
          f"{'p50 ms':>7} {'p95 ms':>7} {'max ms':>7}")
    for r in rows:
        print(f"{r['table']:>5} {r['sent']:>5} {r['read']:>5} {r['dropped']:>7} "
              f"{r['errors']:>6} {r['changes']:>7} {r['p50_s'] * 1000:>7.0f} "
              f"{r['p95_s'] * 1000:>7.0f} {r['max_s'] * 1000:>7.0f}")
    print(f"all tables: p50 {result['p50_s'] * 1000:.0f} ms, p95 {result['p95_s'] * 1000:.0f} ms "
          f"(target p95 < {TARGET_P95_S * 1000:.0f} ms)")
    print(f"floor (one table, 1 frame/s, same run): p50 {floor * 1000:.0f} ms; p95 of the four "
          f"tables = {result['p95_s'] / floor:.1f} x floor")
    print(f"machine load average (1 min) {load_start[0]:.1f} at the start, {load_end[0]:.1f} at "
          f"the end, on {os.cpu_count()} CPUs")
    print(f"server memory (RSS): {rss_start:.0f} MB after warm-up, {rss_end:.0f} MB at the end, "
          f"peak {result['rss_mb_peak']:.0f} MB; median {result['rss_mb_middle_third_median']:.0f}"
          f" MB in the middle third vs {result['rss_mb_last_third_median']:.0f} MB in the last")
    served = all(r["read"] > 0 for r in rows)
    ok = served and result["p95_s"] < TARGET_P95_S
    print("every table served: " + ("yes" if served else "NO") + "; target "
          + ("met" if ok else "NOT met"))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
