"""Joker faces no edition prints, drawn at random for training: "a picture, not a number,
is a joker".

Editions print all sorts of jokers (smileys, a jester, a star, a logo, a butterfly, a
clown); the classifier meets three in training (`training.editions.JOKER_FACES`), so a
face unlike those reads as the numeral it looks most like (an 8, for a butterfly:
docs/decisions/joker-faces.md). `draw_emblem` draws one random picture from a few
families of shapes, in one or two inks, where the edition prints its number:

- `blob`: a smooth filled shape of random radii, sometimes with spots of another ink;
- `rosette`: a k-fold flower or star, k in 3, 4, 6, 7, 8 (never 5: the plain five-pointed
  star stays a face training never draws, `bench.eval_jokers`);
- `mirrored`: random polygons on one side of a vertical axis and their mirror image, with
  or without a bar on the axis (a crown, a mask, a heart, a bird);
- `word`: "JOKER" (or "JOLLY", "JOKE") in a Hershey font, with a small shape above it.

No family draws thin strokes or outlines (but the words' letters): a doodle or a ring can
look like a numeral (a 1, a 7, a 0) and would teach that numerals are jokers. What
`bench.eval_jokers` asks stays unseen: no family draws an ellipse, a ring or a letter
other than those words, so its butterfly (four ellipses and a bar), its plain
five-pointed star and its ring with an R are never drawn; shapes of the `mirrored` family
can look like a butterfly's wings, which is the kind of likeness the bench asks the
classifier to generalise from. Deterministic given the seed.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

FAMILIES = ("blob", "rosette", "mirrored", "word")
WORDS = ("JOKER", "JOKER", "JOLLY", "JOKE")
# second inks of a two-colour joker (BGR): the classic red, black, blue and orange
SECOND_INKS = ((40, 35, 200), (30, 30, 32), (170, 90, 20), (20, 120, 235))
SS = 4  # supersampling of the drawn mask


def family_of(seed: int, families: tuple = FAMILIES) -> str:
    return families[seed % len(families)]


def draw_emblem(face: np.ndarray, ink, body, cx: float, cy: float, r: float, seed: int,
                families: tuple = FAMILIES):
    """Paint a random joker picture of about radius `r` centred on (cx, cy) into the
    float32 BGR `face`, in `ink` (and sometimes a second ink), of one of `families`."""
    rng = np.random.default_rng(seed)
    h, w = face.shape[:2]
    first = np.zeros((h * SS, w * SS), np.uint8)
    second = np.zeros_like(first)
    c = np.array([cx, cy], np.float64) * SS
    rr = r * SS * rng.uniform(0.85, 1.1)
    two = rng.random() < 0.35
    DRAW[family_of(seed, families)](rng, first, second if two else first, c, rr)
    size = (w, h)
    for m, colour in ((first, ink), (second, SECOND_INKS[int(rng.integers(4))])):
        if not m.any():
            continue
        mask = cv2.resize(m, size, interpolation=cv2.INTER_AREA).astype(np.float32)[..., None]
        mask /= 255
        face[:] = face * (1 - mask) + np.asarray(colour, np.float32) * mask


def _poly(m, pts):
    cv2.fillPoly(m, [np.round(np.asarray(pts)).astype(np.int32)], 255, cv2.LINE_AA)


def _radial(rng, n: int, smooth: int) -> np.ndarray:
    """Random radii on n angles, smoothed round the circle (a blob's outline)."""
    radii = rng.uniform(0.45, 1.0, n)
    k = np.ones(smooth) / smooth
    return np.convolve(np.concatenate([radii[-smooth:], radii, radii[:smooth]]), k,
                       "same")[smooth:-smooth]


def _blob(rng, m, m2, c, r):
    n = 72
    radii = np.interp(np.linspace(0, 12, n, endpoint=False), np.arange(12), _radial(rng, 12, 3),
                      period=12)
    a = np.linspace(0, 2 * math.pi, n, endpoint=False) + rng.uniform(0, 2 * math.pi)
    pts = np.stack([c[0] + r * radii * np.cos(a), c[1] + r * radii * np.sin(a)], 1)
    _poly(m, pts)
    if rng.random() < 0.5:  # a spot or two inside, in the other ink
        for _ in range(int(rng.integers(1, 3))):
            p = c + rng.uniform(-0.35, 0.35, 2) * r
            s = r * rng.uniform(0.12, 0.25)
            _poly(m2, [(p[0], p[1] - s), (p[0] + s, p[1]), (p[0], p[1] + s), (p[0] - s, p[1])])


def _rosette(rng, m, m2, c, r):
    k = int(rng.choice([3, 4, 6, 7, 8]))
    inner = rng.uniform(0.3, 0.75)
    n = 240
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    phase = rng.uniform(0, 2 * math.pi)
    if rng.random() < 0.5:  # round petals
        rad = inner + (1 - inner) * np.abs(np.cos(k * (a + phase) / 2))
    else:  # pointed
        rad = inner + (1 - inner) * (1 - np.abs(((k * (a + phase) / (2 * math.pi)) % 1) * 2 - 1))
    pts = np.stack([c[0] + r * rad * np.cos(a), c[1] + r * rad * np.sin(a)], 1)
    _poly(m, pts)
    if rng.random() < 0.6:  # a heart of another shape
        s = r * inner * rng.uniform(0.35, 0.6)
        q = [(c[0] + s * math.cos(t), c[1] + s * math.sin(t))
             for t in np.linspace(0, 2 * math.pi, int(rng.integers(3, 9)), endpoint=False)]
        if m2 is not m:  # drawn over the flower in the second ink
            _poly(m2, q)
        else:  # one ink: cut out of the flower
            hole = np.zeros_like(m)
            _poly(hole, q)
            m[hole > 0] = 0


def _mirrored(rng, m, m2, c, r):
    for i in range(int(rng.integers(1, 4))):
        for _ in range(20):  # a polygon with some body: a sliver reads as a stroke
            n = int(rng.integers(4, 7))
            x = rng.uniform(0.0, 1.0, n) * r
            y = rng.uniform(-1.0, 1.0, n) * r
            order = np.argsort(np.arctan2(y - y.mean(), x - x.mean()))
            x, y = x[order], y[order]
            area = 0.5 * abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))
            if area > 0.18 * r * r:
                break
        target = m if i == 0 else (m2 if rng.random() < 0.5 else m)
        for sx in (1, -1):
            _poly(target, np.stack([c[0] + sx * x, c[1] + y], 1))
    if rng.random() < 0.5:  # a bar on the axis
        t = max(SS, int(r * rng.uniform(0.08, 0.18)))
        y0, y1 = sorted(rng.uniform(-1, 1, 2) * r)
        cv2.line(m2, (int(c[0]), int(c[1] + y0)), (int(c[0]), int(c[1] + y1)), 255, t,
                 cv2.LINE_AA)


def _word(rng, m, m2, c, r):
    word = WORDS[int(rng.integers(len(WORDS)))]
    font = int(rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX,
                           cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX]))
    thick = max(SS, int(r * 0.09))
    (tw, th), _ = cv2.getTextSize(word, font, 1.0, thick)
    scale = 1.9 * r / tw
    org = (int(c[0] - tw * scale / 2), int(c[1] + r * 0.6))
    cv2.putText(m, word, org, font, scale, 255, thick, cv2.LINE_AA)
    # a small shape above the word: a diamond, a triangle or a blob of points
    n = int(rng.choice([3, 4, 6]))
    s = r * rng.uniform(0.35, 0.55)
    top = c + np.array([0, -r * 0.35])
    a0 = rng.uniform(0, 2 * math.pi)
    _poly(m2, [(top[0] + s * math.cos(a0 + 2 * math.pi * i / n),
                top[1] + s * math.sin(a0 + 2 * math.pi * i / n)) for i in range(n)])


DRAW = {"blob": _blob, "rosette": _rosette, "mirrored": _mirrored, "word": _word}
