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
`uncertain_below`). Target: every unfamiliar joker face read as J. (Training meets these faces only on its rendered stands, on 15 % of
their jokers, `training.render3d.scene._texture`: rare.)
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np

from bench import model_eval_parser, run_models_eval

SIZE = 160  # px: the tile's height on the picture
CODES = ("K1", "R5", "B8", "O12", "K13", "R10")  # numbered tiles beside them


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
            look = edition.look("J", rng)
            for kind in UNFAMILIAR_JOKERS:
                faces[kind].append((name, "J", unfamiliar_joker(look, kind), rng))
            faces["own joker"].append((name, "J", R._face_for("J", look), rng))
            code = CODES[k % len(CODES)]
            faces["numbers"].append((name, code, R._face_for(code, edition.look(code, rng)),
                                     rng))
    out = {}
    for kind, rows in faces.items():
        read = Counter()
        right = flagged = 0
        for _name, code, face, rng in rows:
            img, quad = _on_table(face, rng)
            _upright, probs = classifier.classify(img, quad[None])
            got = classifier.labels[int(np.argmax(probs[0]))]
            right += got == code
            if got != code:
                read[got] += 1
                flagged += float(probs[0].max()) < unsure
        out[kind] = {"right": right, "of": len(rows), "misread_as": dict(read.most_common()),
                     "misread_marked_unsure": flagged}
        log(f"{kind}: {right}/{len(rows)} read right"
            + (f"; misread as {dict(read.most_common(5))}, {flagged} of them marked '?' "
               f"(best probability under {unsure})" if read else ""))
    return out


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
