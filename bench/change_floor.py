"""The floor under the hall bench's latency: the phone's send rule and the tracker's hold
alone, with a server that takes no time.

    python -m bench.change_floor [--photos 31] [--phones burst|steady] [--hold-s 0.4|none]

For each real photo of `valid/` (RUMMIKUB_DATA), the hall bench's frames
(`bench.hall_bench.table_changes`: three noisy copies of the table as it is and with one
tile moved to a free place, as `bench.hall_change` makes and checks it), filmed by a 10 frames/s camera; the table changes
at 10 s, at five phases of the camera's looks (0.01-0.09 s after a look). The phone sends
as the page does (`bench.phone_rule.SendRule`) or at a steady 2 frames/s (the page
before); every frame sent goes straight through the real models and a `TableTracker`
(`hold_s`, on the phone's clock). Reported: the time from the change to the tracker's
stable change, median / p95 / max over the changes that came within 10 s, and how many did
not (a moved tile the detector misses at its new place is kept where it lay, hidden:
that is no change). Whatever the server adds (queueing, reading, the sockets) comes on top
(`bench.hall_bench`).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import cv2
import numpy as np

from bench import bench_parser, save_json

PHASES = (0.01, 0.03, 0.05, 0.07, 0.09)
CHANGE_AT = 10.0


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.change_floor", __doc__)
    parser.add_argument("--photos", type=int, default=31)
    parser.add_argument("--phones", choices=("burst", "steady"), default="burst")
    parser.add_argument("--hold-s", default="0.4", help="seconds, or 'none' (frames only)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from bench.hall_bench import _looks, table_changes
    from bench.phone_rule import WATCH_MS, SendRule, SteadyRule, picture_difference
    from vision.game.tracker import TableTracker
    from vision.recognition.decode import Photo
    from vision.recognition.pipeline import TileReader, detection_reduction

    hold_s = None if args.hold_s == "none" else float(args.hold_s)
    try:
        made, left_out = table_changes()
        tables = [tuple(m[1:]) for m in made[:args.photos]]
        keys = [m[0].key for m in made[:args.photos]]
    except (FileNotFoundError, OSError) as error:
        print(f"change_floor: needs the real photos (RUMMIKUB_DATA): {error}", file=sys.stderr)
        return 2
    reader = TileReader.load()
    read: dict[bytes, tuple] = {}

    def reading(data: bytes) -> tuple:
        if data not in read:  # as the server reads a frame (app.server.frames)
            photo = Photo.from_bytes(data)
            image = photo.reduced(detection_reduction(photo, reader.detector))
            small = cv2.resize(image, (160, max(1, round(image.shape[0] * 160 / image.shape[1]))),
                               interpolation=cv2.INTER_AREA)
            read[data] = (reader.read(photo), small, (photo.width, photo.height))
        return read[data]

    latencies, never, sent, never_photos = [], 0, [], []
    for key, frames in zip(keys, tables, strict=True):
        for phase in PHASES:
            change = CHANGE_AT + phase
            tracker = TableTracker(hold_s=hold_s)
            rule = SendRule() if args.phones == "burst" else SteadyRule(2.0)
            last, got, count = None, None, 0
            for k in range(int(2 * CHANGE_AT * 1000 / WATCH_MS)):
                t = k * WATCH_MS / 1000
                state = int(t >= change)
                data = frames[state][k % len(frames[state])]
                look = _looks[data]
                diff, last = picture_difference(look, last), look
                if not rule.look(1000 * t, diff):
                    continue
                count += 1
                det, small, size = reading(data)
                update = tracker.push(det, gray_small=small, t=t, frame_size=size)
                if state and update.changed:
                    got = t - change
                    break
            sent.append(count / (t or 1.0))
            if got is None:
                never += 1
                never_photos.append(key)
            else:
                latencies.append(got)
    result = {"photos": len(tables), "photos_left_out": left_out, "phones": args.phones, "hold_s": hold_s,
              "changes": len(latencies) + never, "never_within_10_s": never,
              "never_photos": sorted(set(never_photos)),
              "median_s": statistics.median(latencies) if latencies else None,
              "p95_s": float(np.percentile(latencies, 95)) if latencies else None,
              "max_s": max(latencies) if latencies else None,
              "frames_sent_per_s": round(statistics.median(sent), 2)}
    print(f"change_floor: {result['photos']} photos x {len(PHASES)} phases, phones "
          f"{args.phones}, hold_s {hold_s}: change -> stable change (no server time) median "
          f"{result['median_s']:.2f} s, p95 {result['p95_s']:.2f} s, max {result['max_s']:.2f} s "
          f"over {len(latencies)} changes; {never} not within 10 s; "
          f"{result['frames_sent_per_s']:.2f} frames sent a second (median); not within 10 s: "
          f"{', '.join(result['never_photos']) or 'none'}; photos left out (no change a "
          f"detector sees): {', '.join(left_out) or 'none'}")
    save_json(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
