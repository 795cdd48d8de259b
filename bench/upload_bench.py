"""What a big phone photo costs the game server: a table photo uploaded at 1000x750, 12 MP
and 50 MP, each time as a ratio to the 1000x750 upload and to the floor (`bench.floor`:
JPEG decode + one pass of both models on the 1000x750 photo) timed in the same run.

    python -m bench.upload_bench [--runs 7] [--whole] [--json OUT]
    python -m bench.upload_bench --memory [--at-once 8]   (peak memory: bench.upload_memory)

The app runs in this process (FastAPI's TestClient, a fresh database in a temporary
folder) and each upload is `POST /api/games/{id}/photo` as the page sends it: the
multipart body parsed, the photo checked, read by the photo pipeline, judged and stored.
The big photos are the benchmark photo (`bench.floor.base_photo`) enlarged to 4000x3000
and 8160x6120 and saved as JPEG (quality 90), so every size shows the same table and
should read the same tiles (`tiles` in the report). The sizes take turns within each
round, so a change in the machine's load falls on all of them alike; the ratio is the
median over `--runs` rounds of each round's ratio (`bench.vision_bench.per_round_ratio`).

`--whole` times the server as it was before it read photos through
`vision.recognition.decode.Photo`: every photo decoded whole (`decode_image`) and the pipeline
run on that image.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from bench import bench_parser, save_json

SIZES = {"1000x750": None, "12 MP": (4000, 3000), "50 MP": (8160, 6120)}


def photos() -> tuple[dict[str, bytes], str]:
    from bench.floor import base_photo

    data, source = base_photo()
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    out = {}
    for name, size in SIZES.items():
        if size is None:
            out[name] = data
            continue
        big = cv2.resize(image, size, interpolation=cv2.INTER_CUBIC)
        ok, encoded = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        out[name] = encoded.tobytes()
        del big
    return out, source


class WholePhotoReader:
    """The reader as the server used it before: given the whole decoded image."""

    def __init__(self, inner):
        self.inner = inner
        self.detector = None  # so the upload check decodes the whole photo

    def read(self, photo):
        return self.inner.read(photo.image())


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.upload_bench", __doc__)
    parser.add_argument("--runs", type=int, default=7, help="uploads per size (default 7)")
    parser.add_argument("--whole", action="store_true",
                        help="decode every photo whole, as the server did before")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--memory", action="store_true",
                        help="measure peak memory instead (`bench.upload_memory`)")
    args, rest = parser.parse_known_args(argv)
    if args.memory:
        from bench.upload_memory import main as memory_main

        return memory_main(rest + (["--json", str(args.json)] if args.json else []))
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")

    from fastapi.testclient import TestClient

    from app.server import ServerSettings, create_app
    from bench.floor import Floor
    from bench.vision_bench import per_round_ratio
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load()
    data, source = photos()
    floor = Floor(reader, data["1000x750"])
    floor_s: list[float] = []
    if args.whole:
        reader = WholePhotoReader(reader)
    report = {"photo": source, "runs": args.runs, "whole": args.whole, "sizes": {}}
    times: dict[str, list[float]] = {name: [] for name in data}
    tiles: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(ServerSettings(data_dir=Path(tmp), static_dir=None, reader=reader,
                                        upload_limit=32 * 1024 * 1024))
        with TestClient(app) as client:
            game = client.post("/api/games", json={"players": ["Ann", "Ben"]},
                               headers={"X-Token": app.state.table_token}).json()
            headers = {"X-Token": game["token"]}
            client.post(f"/api/games/{game['id']}/rounds", headers=headers)
            url = f"/api/games/{game['id']}/photo"
            for run in range(args.runs + 1):  # the first run warms up and is not counted
                floor_seconds = floor.time_once()
                if run:
                    floor_s.append(floor_seconds)
                for name, photo in data.items():
                    start = time.perf_counter()
                    response = client.post(url, headers=headers,
                                           files={"photo": ("photo.jpg", photo, "image/jpeg")})
                    seconds = time.perf_counter() - start
                    if response.status_code != 200:
                        print(f"{name}: {response.status_code} {response.text}", file=sys.stderr)
                        return 1
                    tiles[name] = len(response.json()["tiles"])
                    if run:
                        times[name].append(seconds)
    base = times["1000x750"]
    how = "each photo decoded whole (as before)" if args.whole else "reduced decodes"
    floor_ms = 1000 * statistics.median(floor_s)
    report["floor_ms"] = round(floor_ms, 1)
    print(f"upload bench: {source}; {how}; median of {args.runs} rounds; floor (JPEG decode + "
          f"one pass of both models on the 1000x750 photo) {floor_ms:.1f} ms")
    for name, photo in data.items():
        median = statistics.median(times[name])
        ratio = per_round_ratio(times[name], base)
        over_floor = per_round_ratio(times[name], floor_s)
        report["sizes"][name] = {"bytes": len(photo), "median_ms": round(median * 1000, 1),
                                 "ratio": round(ratio, 2), "floor_ratio": round(over_floor, 2),
                                 "tiles": tiles[name]}
        print(f"  {name:>9}: {len(photo) / 2**20:5.1f} MB  {median * 1000:7.1f} ms  "
              f"{ratio:5.2f}x the 1000x750 upload  {over_floor:5.2f}x the floor  "
              f"{tiles[name]} tiles")
    save_json(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
