"""Hands painted over a photo's tiles, of six kinds, fixed by seed (`bench.eval_cover`).

A hand enters from the photo's edge nearest the tile it reaches for (sometimes another
edge), as an arm does, sized from the tile height (a palm about 2.3 tile heights across,
as a real palm beside a 3.5 cm tile). Its skin is one of `TONES` (light to dark), shaded
across the hand, mottled, and given the photo's own sensor noise: a flat, noiseless blob
would be easier to see than a hand is.

- `palm`: the whole hand resting over a tile, a bare arm;
- `sleeve`: the same with a sleeve (grey, black, navy, red, green, white) from the wrist;
- `fingers`: only the fingers over part of a tile, the palm beyond the tiles;
- `holding`: a hand holding a tile (a tile of the photo, cut out and turned) at its
  fingertips, over the tiles;
- `blurred`: a palm moving: motion blur along a random direction;
- `shadowed`: a palm lifted a little, its shadow on the table and tiles beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

KINDS = ("palm", "sleeve", "fingers", "holding", "blurred", "shadowed")
# BGR, light to dark (as photographed indoors).
TONES = ((180, 203, 233), (145, 175, 220), (115, 150, 200), (80, 115, 165), (55, 80, 125),
         (38, 55, 88))
SLEEVES = ((128, 128, 128), (35, 35, 38), (90, 50, 30), (45, 45, 170), (60, 110, 60),
           (225, 225, 225))


@dataclass(frozen=True)
class PaintedHand:
    image: np.ndarray  # BGR uint8
    mask: np.ndarray  # (h, w) bool: where the hand (or what it holds) lies
    kind: str
    tone: int  # index into TONES


def _noise_level(image: np.ndarray) -> float:
    """The photo's sensor noise (std, grey levels), from the median absolute Laplacian."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    lap = cv2.Laplacian(grey, cv2.CV_32F)
    return float(np.clip(np.median(np.abs(lap)) / 2.0, 0.5, 6.0))


def _entry(centre: np.ndarray, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    """Unit vector from the hand towards the photo edge its arm comes from."""
    cx, cy = centre
    edges = {(0.0, 1.0): h - cy, (0.0, -1.0): cy, (1.0, 0.0): w - cx, (-1.0, 0.0): cx}
    ranked = sorted(edges, key=edges.get)
    side = ranked[0] if rng.random() < 0.7 else ranked[int(rng.integers(1, 3))]
    angle = np.arctan2(side[1], side[0]) + rng.uniform(-0.5, 0.5)
    return np.array([np.cos(angle), np.sin(angle)])


def _shape(h: int, w: int, palm_c: np.ndarray, d: np.ndarray, size: float,
           spread: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hand, arm, fingertips centre): masks uint8 of a hand whose arm runs along `d`."""
    hand = np.zeros((h, w), np.uint8)
    arm = np.zeros((h, w), np.uint8)
    n = np.array([-d[1], d[0]])  # across the hand
    angle = float(np.degrees(np.arctan2(d[1], d[0])))
    c = tuple(int(round(v)) for v in palm_c)
    cv2.ellipse(hand, c, (int(size * 1.5), int(size * 1.2)), angle, 0, 360, 255, -1)
    for k in range(4):
        base = palm_c - d * size * 0.9 + n * (k - 1.5) * size * 0.6 * spread
        tip = base - d * size * (1.6 + 0.3 * (k in (1, 2)))
        cv2.line(hand, tuple(int(v) for v in base), tuple(int(v) for v in tip), 255,
                 max(2, int(size * 0.42)))
    thumb = palm_c + n * size * 1.1
    cv2.line(hand, tuple(int(v) for v in thumb),
             tuple(int(v) for v in thumb - d * size * 1.0 + n * size * 0.6), 255,
             max(2, int(size * 0.48)))
    far = palm_c + d * 4 * max(h, w)
    quad = np.array([palm_c + n * size, palm_c - n * size, far - n * size * 1.6,
                     far + n * size * 1.6], np.int32)
    cv2.fillPoly(arm, [quad], 255)
    return hand, arm, palm_c - d * size * 2.4


def _skin(shape, tone: np.ndarray, d: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Skin (h, w, 3) float: lit from one side, mottled."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    light = rng.uniform(-1, 1, 2)
    ramp = (xx * light[0] + yy * light[1]) / max(h, w)
    small = rng.standard_normal((max(2, h // 90), max(2, w // 90))).astype(np.float32)
    mottle = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    gain = 1 + 0.12 * ramp + 0.025 * mottle
    return tone[None, None, :] * gain[..., None]


def paint(image: np.ndarray, tile: np.ndarray, size: float, kind: str,
          rng: np.random.Generator, corners: np.ndarray | None = None,
          tone: int | None = None) -> PaintedHand:
    """`image` (BGR uint8) with a hand of `kind` reaching for the tile at `tile` (4, 2);
    `size` is the tile height in px, `corners` every tile found (for `holding`); `tone`
    (an index into `TONES`) instead of the one `rng` draws."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    h, w = image.shape[:2]
    img = image.astype(np.float32)
    centre = tile.mean(axis=0)
    d = _entry(centre, w, h, rng)
    s = 0.9 * size * rng.uniform(0.85, 1.15)
    tone_i = int(rng.integers(len(TONES)))  # drawn even when given: the same stream after
    tone_i = tone_i if tone is None else int(tone)
    tone = np.array(TONES[tone_i], np.float32) * rng.uniform(0.9, 1.1)
    if kind == "fingers":
        # fingertips over half the tile: the palm centre lies a hand's length beyond it
        palm_c = centre + d * s * (2.4 + rng.uniform(0.0, 0.5))
    else:
        palm_c = centre + d * s * rng.uniform(-0.3, 0.6)
    hand, arm, tips = _shape(h, w, palm_c, d, s, rng.uniform(0.9, 1.2))
    skin_mask = np.maximum(hand, arm)
    body = _skin((h, w), tone, d, rng)
    if kind == "sleeve":
        wrist = palm_c + d * s * rng.uniform(1.2, 2.0)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        beyond = ((xx - wrist[0]) * d[0] + (yy - wrist[1]) * d[1]) > 0
        cloth = (arm > 0) & beyond
        sleeve = np.array(SLEEVES[int(rng.integers(len(SLEEVES)))], np.float32)
        fold = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), s * 0.4)
        fold = fold / (np.abs(fold).max() + 1e-6)
        body[cloth] = sleeve * (1 + 0.15 * fold[cloth, None])
        skin_mask = np.maximum(skin_mask, (cloth * 255).astype(np.uint8))
    if kind == "shadowed":
        off = (-d + rng.uniform(-0.5, 0.5, 2)) * s * rng.uniform(0.6, 1.2)
        m = np.float32([[1, 0, off[0]], [0, 1, off[1]]])
        shadow = cv2.warpAffine(skin_mask, m, (w, h)).astype(np.float32) / 255
        shadow = cv2.GaussianBlur(shadow, (0, 0), s * 0.4)
        img *= 1 - rng.uniform(0.3, 0.5) * shadow[..., None]
    alpha = cv2.GaussianBlur(skin_mask.astype(np.float32) / 255, (0, 0), 1.2)
    if kind == "holding" and corners is not None and len(corners):
        # a tile of the photo, cut out, turned and held at the fingertips
        src = corners[int(rng.integers(len(corners)))].astype(np.float32)
        tw = float(np.linalg.norm(src[1] - src[0]))
        th = float(np.linalg.norm(src[3] - src[0]))
        turn = rng.uniform(0, 2 * np.pi)
        u = np.array([np.cos(turn), np.sin(turn)])
        v = np.array([-u[1], u[0]])
        at = tips - d * th * 0.2
        dst = np.float32([at - u * tw / 2 - v * th / 2, at + u * tw / 2 - v * th / 2,
                          at + u * tw / 2 + v * th / 2, at - u * tw / 2 + v * th / 2])
        hmat = cv2.getPerspectiveTransform(src, dst)
        held = cv2.warpPerspective(image, hmat, (w, h)).astype(np.float32)
        quad = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(quad, np.round(dst).astype(np.int32), 255)
        body = np.where(quad[..., None] > 0, held, body)
        # the held tile lies over the hand and whatever is under it
        alpha = np.maximum(alpha, cv2.GaussianBlur(quad.astype(np.float32) / 255, (0, 0), 0.8))
        skin_mask = np.maximum(skin_mask, quad)
    body = body + rng.normal(0, _noise_level(image), body.shape).astype(np.float32)
    if kind == "blurred":
        length = max(3, int(s * rng.uniform(0.4, 1.2)))
        theta = rng.uniform(0, np.pi)
        kern = np.zeros((length, length), np.float32)
        c = (length - 1) / 2
        cv2.line(kern, (int(c - np.cos(theta) * c), int(c - np.sin(theta) * c)),
                 (int(c + np.cos(theta) * c), int(c + np.sin(theta) * c)), 1.0, 1)
        kern /= kern.sum()
        # a moving hand: its colour and its edge both smeared, the table sharp behind it
        premult = cv2.filter2D(body * alpha[..., None], -1, kern)
        alpha = cv2.filter2D(alpha, -1, kern)
        body = premult / np.maximum(alpha[..., None], 1e-3)
        skin_mask = (alpha > 0.5).astype(np.uint8) * 255
    out = img * (1 - alpha[..., None]) + body * alpha[..., None]
    return PaintedHand(np.clip(out, 0, 255).astype(np.uint8), skin_mask > 127, kind, tone_i)
