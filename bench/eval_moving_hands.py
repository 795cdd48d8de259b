"""A hand moving over a real table and resting there, in every skin tone: does the live
table stay as it is?

    python -m bench.eval_moving_hands [--photos N] [--json OUT]

Every real photo of `valid/` (RUMMIKUB_DATA) is filmed as a phone streams it to the server
(a frame every `STEP_S` s, each with its own sensor noise, the server's tracker settings:
hold 3 frames or 0.4 s): the table still until the stable reading holds, then a palm
(`bench.hands.paint`) reaching for one tile, moving on to the two tiles nearest it
(`HAND_STEPS`), and resting over the last one, then the table still again. Once per skin
tone of `bench.hands.TONES` (light to dark: the darkest ones are the colour of a dark wood
table), so 6 passes a photo. The table never changes.

Reported: the stable table's changes from the hand's first frame on, and of them the false
ones: a change after which the stable table is further from the photo's labels than
before it (a tile taken off under the hand, a find on the hand, a misreading believed);
the others are tiles that had not yet joined before the hand came. Also the passes that
end further from the labels than before the hand. Target: 0 false changes.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from bench import bench_parser, save_json

STEP_S = 0.15  # s between frames: the phone page's burst while something moves
HAND_STEPS = (0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)  # tile the palm is over, per frame
STILL_BEFORE, STILL_AFTER = 12, 8  # frames: the table settled, then the hand


def palm_frames(labelled, image: np.ndarray, rng: np.random.Generator,
                tone: int | None = None, size: float | None = None) -> list[np.ndarray]:
    """`image` with a palm (of `tone`, else one `rng` draws) over a tile, then the two
    tiles nearest it; `size` the tile height (else the labels' median). Also the hall
    bench's passing hand (`bench.hall_bench --hands`)."""
    from bench.hands import paint

    centres = np.array([t.polygon.mean(axis=0) for t in labelled.tiles], np.float32)
    first = int(rng.integers(len(centres)))
    near = np.argsort(np.linalg.norm(centres - centres[first], axis=1))[:3]
    if size is None:
        size = float(np.median([np.linalg.norm(t.polygon[3] - t.polygon[0])
                                for t in labelled.tiles]))
    hand_seed = int(rng.integers(2**31))
    return [paint(image, labelled.tiles[int(near[min(k, len(near) - 1)])].polygon
                  .astype(np.float32), size, "palm", np.random.default_rng(hand_seed),
                  tone=tone).image for k in range(3)]


def wrong(codes: Counter, truth: Counter) -> int:
    """Tiles a stable table has that the photo has not, and the other way round."""
    return sum(((codes - truth) + (truth - codes)).values())


def film(reader, labelled, image: np.ndarray, tone: int, seed: int) -> dict:
    """One pass: what the stable table did."""
    from app.server.livetable import GRAY_WIDTH, make_tracker
    from vision.recognition import quality
    from vision.recognition.decode import Photo

    rng = np.random.default_rng(seed + 1)
    truth = Counter(t.code for t in labelled.tiles)
    hands = palm_frames(labelled, image, np.random.default_rng(seed), tone)
    frames = ([image] * STILL_BEFORE + [hands[k] for k in HAND_STEPS]
              + [image] * STILL_AFTER)
    tracker = make_tracker(None, hold=3, hold_s=0.4)
    before, during, t, last = None, [], 0.0, None
    for k, picture in enumerate(frames):
        noisy = np.clip(picture.astype(np.float32) + rng.normal(0, 2.0, picture.shape), 0, 255)
        ok, data = cv2.imencode(".jpg", noisy.astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 85])
        photo = Photo.from_bytes(data.tobytes())
        found = reader.read(photo)
        scale = GRAY_WIDTH / photo.width
        small = cv2.resize(noisy.astype(np.uint8),
                           (GRAY_WIDTH, max(1, round(photo.height * scale))),
                           interpolation=cv2.INTER_AREA)
        update = tracker.push(found, gray_small=small, t=t,
                              unfit=quality.check(photo, found).problems(),
                              frame_size=(photo.width, photo.height))
        t += STEP_S
        codes = Counter(update.stable.codes) if update.stable is not None else None
        if k == STILL_BEFORE - 1:
            before = codes
        elif k >= STILL_BEFORE and update.changed and last is not None:
            phase = "hand" if k < STILL_BEFORE + len(HAND_STEPS) else "after"
            during.append({"frame": k, "phase": phase,
                           "left": sorted((last - codes).elements()),
                           "joined": sorted((codes - last).elements()),
                           # a change that takes the table away from its labels
                           "false": wrong(codes, truth) > wrong(last, truth)})
        last = codes
    left = (before - codes) if codes is not None and before is not None else Counter()
    return {"settled": before is not None, "changes": during,
            "false_changes": sum(c["false"] for c in during),
            "left": sorted(left.elements()),
            "ends_worse": before is not None and wrong(codes, truth) > wrong(before, truth)}


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.eval_moving_hands", __doc__)
    parser.add_argument("--photos", type=int, default=0, help="the first N photos (0: all)")
    parser.add_argument("--only", nargs="*", default=None, help="these photos' keys")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from bench.hands import TONES
    from training.real_data import load_split
    from vision.recognition.pipeline import TileReader

    try:
        photos = [p for p in load_split("valid") if p.tiles]
    except (FileNotFoundError, OSError) as error:
        print(f"eval_moving_hands: needs the real photos (RUMMIKUB_DATA): {error}",
              file=sys.stderr)
        return 2
    photos = list(enumerate(photos[:args.photos] if args.photos else photos))
    # a photo's hands are drawn from its place in valid/, so --only draws the same ones
    photos = [(i, p) for i, p in photos if args.only is None or p.key in args.only]
    reader = TileReader.load()
    began = time.perf_counter()
    rows = []
    for index, labelled in photos:
        image = labelled.read()
        for tone in range(len(TONES)):
            row = film(reader, labelled, image, tone, 39_000 + 10 * index + tone)
            rows.append({"photo": labelled.key, "tone": tone, **row})
    passes = [r for r in rows if r["settled"]]
    false = [r for r in passes if r["false_changes"]]
    result = {"photos": len(photos), "passes": len(passes),
              "unsettled": len(rows) - len(passes),
              "passes_with_false_changes": len(false),
              "false_changes": sum(r["false_changes"] for r in passes),
              # what the false changes did, while the hand was there or after it had gone
              "false_kinds": dict(Counter(
                  f"{c['phase']}: " + " and ".join(
                      w for w, on in (("a tile left", c["left"]), ("a tile joined", c["joined"]))
                      if on) for r in passes for c in r["changes"] if c["false"])),
              "changes": sum(len(r["changes"]) for r in passes),
              "ended_worse": sum(r["ends_worse"] for r in passes),
              "by_tone": {tone: sum(1 for r in false if r["tone"] == tone)
                          for tone in range(len(TONES))}, "rows": rows}
    print(f"moving hands over {len(photos)} real valid/ photos, {len(TONES)} skin tones "
          f"each ({time.perf_counter() - began:.0f} s): {len(passes)} passes "
          f"({result['unsettled']} never settled before the hand)")
    print(f"  changes from the hand's first frame on: {result['changes']}, of them false "
          f"{result['false_changes']} (in {len(false)} passes); target 0 false")
    print(f"  by tone, light to dark: {list(result['by_tone'].values())}")
    print(f"  the false changes, by when and what: {result['false_kinds']}")
    print(f"  passes ending further from the labels than before the hand: "
          f"{result['ended_worse']}")
    for r in false:
        steps = "; ".join(f"frame {c['frame']} ({c['phase']}{', false' if c['false'] else ''})"
                          f" -{' '.join(c['left'])} +{' '.join(c['joined'])}"
                          for c in r["changes"])
        print(f"    {r['photo']} tone {r['tone']}: {steps}; at the end left "
              f"{' '.join(r['left']) or 'nothing'}")
    save_json(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
