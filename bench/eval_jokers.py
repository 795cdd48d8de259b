"""Joker faces no edition of training prints: is a tile with a butterfly, a plain star or
a round logo on it still read as a joker?

    python -m bench.eval_jokers [--looks 12] [--models DIR] [--json OUT]

Each face (`training.render3d.tiles.unfamiliar_joker`: a butterfly, a plain five-pointed
star, a ring with a big R, in the edition's ink on its body) is drawn on a tile of each
held-out edition of `training.editions.HELD_OUT` (`--looks` draws of its ink and body
each), lying upright on a plain table, and read by the classifier alone on the tile's own
quad (no detector: what is asked is the reading, not the finding). Beside it, as a
baseline in the same run, the same edition's own joker face and its numbered tiles.
Reported: the share read as J, what the others were read as, and how many of those the
reader would mark "?" for the players to check (best probability under its
`uncertain_below`). Then the whole reader (detector, crop, the not-a-tile rule, the joker
look of `vision.recognition.joker_look` where its file ships, "?" marks) on a 1000x750
table with the tile between two numbered tiles of its edition, 90 px high, slightly
tilted, and again alone and beside one of them (a rack's last tiles, where the joker
look's photo-wide rule differs: `joker_look.MIN_SQUASHED`): read right, misread, or not
found. Target: every unfamiliar joker face read as J.

Training never draws these three faces, except on its rendered stands with depth
(`training.render3d.scene._texture`, 15 % of their jokers) when a run asks for stands
(`--depth`); it learns other pictures as jokers from `training.joker_faces` (`--jokers`),
whose families hold no ellipse, ring or five-pointed star (docs/decisions/joker-faces.md).
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np

from bench import model_eval_parser, run_models_eval

SIZE = 160  # px: the tile's height on the picture
CODES = ("K1", "R5", "B8", "O12", "K13", "R10")  # numbered tiles beside them
ROW_SIZE = 90  # px: a tile's height in the whole reader's 1000x750 picture
# The whole reader's layouts: (tiles beside the face, the first seed of their pictures).
LAYOUTS = {"row": (2, 53_000), "alone": (0, 54_000), "beside one": (1, 55_000)}


def _on_table(face: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A picture with the BGRA `face` lying upright on a plain table, and its quad."""
    import cv2

    h, w = face.shape[:2]
    scale = SIZE / h
    tw, th = int(round(w * scale)), SIZE
    table = np.array(rng.uniform(60, 170, 3), np.float32)
    img = np.empty((SIZE * 2, SIZE * 2, 3), np.float32)
    img[:] = table
    tile = cv2.resize(face, (tw, th), interpolation=cv2.INTER_AREA).astype(np.float32)
    x0, y0 = (img.shape[1] - tw) // 2, (img.shape[0] - th) // 2
    alpha = tile[..., 3:] / 255
    img[y0:y0 + th, x0:x0 + tw] = tile[..., :3] * alpha + img[y0:y0 + th, x0:x0 + tw] * (1 - alpha)
    img = np.clip(img + rng.normal(0, 2.0, img.shape), 0, 255).astype(np.uint8)
    quad = np.float32([[x0, y0], [x0 + tw, y0], [x0 + tw, y0 + th], [x0, y0 + th]])
    return img, quad


def _in_a_row(face: np.ndarray, beside: list, rng: np.random.Generator):
    """A 1000x750 table with `face` after the first of the `beside` tiles (none, one or two)
    and before the second, each ROW_SIZE px high, seen slightly tilted as a phone above a
    table sees it, and the face's quad."""
    import cv2

    from training import render as R

    h = ROW_SIZE
    w = int(round(h * face.shape[1] / face.shape[0]))
    table = np.empty((750, 1000, 3), np.float32)
    table[:] = rng.uniform(60, 170, 3)
    row = [*beside[:1], face, *beside[1:2]]
    x0, y0 = 500 - len(row) * w // 2 - 2, 375 - h // 2
    at = min(len(beside), 1)  # the face's place in the row
    quad = None
    for j, f in enumerate(row):
        x = x0 + j * (w + 2)
        q = np.float32([[x, y0], [x + w, y0], [x + w, y0 + h], [x, y0 + h]])
        R._draw_tile(table, f, q, np.float32([0, h * 0.09]))
        if j == at:
            quad = q
    tilt = np.float32([[rng.uniform(0, 40), rng.uniform(0, 30)],
                       [1000 - rng.uniform(0, 40), rng.uniform(0, 30)], [1000, 750], [0, 750]])
    H = cv2.getPerspectiveTransform(tilt, np.float32([[0, 0], [1000, 0], [1000, 750], [0, 750]]))
    img = cv2.warpPerspective(np.clip(table + rng.normal(0, 2.0, table.shape), 0, 255),
                              H, (1000, 750)).astype(np.uint8)
    return img, cv2.perspectiveTransform(quad[None], H)[0]


def evaluate(models_dir=None, looks: int = 12, log=print) -> dict:
    from training import render as R
    from training.editions import HELD_OUT
    from training.render3d.tiles import UNFAMILIAR_JOKERS, unfamiliar_joker
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir)
    classifier = reader.classifier
    # below this best probability the reader marks a tile "?" for the players to check
    unsure = reader.uncertain_below
    faces = {kind: [] for kind in (*UNFAMILIAR_JOKERS, "own joker", "numbers")}
    for e_i, (name, edition) in enumerate(HELD_OUT.items()):
        for k in range(looks):
            rng = np.random.default_rng(51_000 + 100 * e_i + k)
            # the tiles beside it in a run, for the whole reader (a generator of their own,
            # so the classifier's pictures stay as they were)
            side_rng = np.random.default_rng(52_000 + 100 * e_i + k)
            beside = [R._face_for(c, edition.look(c, side_rng))
                      for c in (CODES[(k + 1) % len(CODES)], CODES[(k + 2) % len(CODES)])]
            look = edition.look("J", rng)
            for kind in UNFAMILIAR_JOKERS:
                faces[kind].append((name, "J", unfamiliar_joker(look, kind), rng, beside))
            faces["own joker"].append((name, "J", R._face_for("J", look), rng, beside))
            code = CODES[k % len(CODES)]
            faces["numbers"].append((name, code, R._face_for(code, edition.look(code, rng)),
                                     rng, beside))
    out = {}
    for kind, rows in faces.items():
        read = Counter()
        right = flagged = 0
        # what the whole reader (detector, crop, not-a-tile rule) makes of it in a run of
        # three, and on a rack's last tiles: alone, and beside one other
        whole = {layout: Counter() for layout in LAYOUTS}
        for i, (_name, code, face, rng, beside) in enumerate(rows):
            img, quad = _on_table(face, rng)
            _upright, probs = classifier.classify(img, quad[None])
            got = classifier.labels[int(np.argmax(probs[0]))]
            right += got == code
            if got != code:
                read[got] += 1
                flagged += float(probs[0].max()) < unsure
            for layout, (others, seeds) in LAYOUTS.items():
                row, quad = _in_a_row(face, beside[:others], np.random.default_rng(seeds + i))
                whole[layout][_whole_reading(reader, row, quad, code)] += 1
        out[kind] = {"right": right, "of": len(rows), "misread_as": dict(read.most_common()),
                     "misread_marked_unsure": flagged, "whole_reader": dict(whole["row"]),
                     "whole_reader_alone": dict(whole["alone"]),
                     "whole_reader_beside_one": dict(whole["beside one"])}
        log(f"{kind}: {right}/{len(rows)} read right"
            + (f"; misread as {dict(read.most_common(5))}, {flagged} of them marked '?' "
               f"(best probability under {unsure})" if read else "")
            + f"; the whole reader: {_said(whole['row'])}; alone: {_said(whole['alone'])}; "
            f"beside one tile: {_said(whole['beside one'])}")
    return out


WHOLE = ("read right", "read right, marked '?'", "misread", "misread, marked '?'", "not found")


def _whole_reading(reader, img, quad, code) -> str:
    """The whole reader on the picture: is the tile found (a find whose centre lies on
    it), and read as `code`?"""
    import cv2

    tiles = reader.read(img)
    for i in range(len(tiles)):
        centre = tiles.corners[i].mean(0)
        if cv2.pointPolygonTest(quad.reshape(-1, 1, 2), (float(centre[0]), float(centre[1])),
                                False) >= 0:
            said = "read right" if tiles.codes[i] == code else "misread"
            return said + (", marked '?'" if tiles.uncertain[i] else "")
    return "not found"


def _said(whole: Counter) -> str:
    return ", ".join(f"{whole[k]} {k}" for k in WHOLE if whole[k])


def main(argv: list[str] | None = None) -> int:
    parser = model_eval_parser("python -m bench.eval_jokers", __doc__)
    parser.add_argument("--looks", type=int, default=12, help="draws per edition and face")
    args = parser.parse_args(argv)
    print(f"joker faces no training edition prints, on the held-out editions ({args.looks} looks "
          "each), read by the classifier on the tile's quad")
    return run_models_eval("eval_jokers", lambda: evaluate(args.models, args.looks),
                           args.json)


if __name__ == "__main__":
    sys.exit(main())
