"""What a tile crop shows apart from the network: its body colour, its ink colour, its ink.

All measured on the classifier's own upright crops (`vision.recognition.rectify`), so
calibration and reading look at exactly the same pixels. The body is most of a tile's face, so its
colour is the median of the crop's middle-bright pixels (the ink is darker, the few
table pixels at rounded corners fall outside); dividing by it removes the light's
colour and strength tile by tile, which is what lets one calibration photo speak for
photos taken under another lamp.
"""

from __future__ import annotations

import cv2
import numpy as np

# Where the number (or smiley) sits: above the logo that some editions emboss at the foot.
INK_ROWS = (0.06, 0.74)
INK_MIN_DELTA = 14.0  # Lab distance from the body below which a pixel is body, not ink
INK_CORE = 15  # pixels furthest from the body that give the ink's colour
NEUTRAL = 200.0  # grey level a body is scaled to before measuring ink
CHROMA_INK = 20.0  # Lab chroma from which a crop's coloured core is its ink


def body_colors(crops: np.ndarray) -> np.ndarray:
    """(N, 3) float32 BGR body colour of each (N, H, W, 3) uint8 crop."""
    crops = np.asarray(crops)
    if len(crops) == 0:
        return np.zeros((0, 3), np.float32)
    px = crops.reshape(len(crops), -1, 3).astype(np.float32)
    gray = px.mean(axis=2)
    k_lo, k_hi = int(0.40 * (gray.shape[1] - 1)), int(0.92 * (gray.shape[1] - 1))
    ranked = np.partition(gray, (k_lo, k_hi), axis=1)
    lo, hi = ranked[:, k_lo], ranked[:, k_hi]
    keep = ((gray >= lo[:, None]) & (gray <= hi[:, None])).astype(np.float32)
    out = np.einsum("np,npc->nc", keep, px) / np.maximum(keep.sum(axis=1), 1.0)[:, None]
    return np.maximum(out, 1.0).astype(np.float32)


def balance(crops: np.ndarray, target_bgr, bodies: np.ndarray | None = None) -> np.ndarray:
    """Crops scaled channel by channel so each tile's body becomes `target_bgr` (uint8)."""
    crops = np.asarray(crops)
    if len(crops) == 0:
        return crops.copy()
    bodies = body_colors(crops) if bodies is None else bodies
    gains = np.clip(np.asarray(target_bgr, np.float32)[None] / bodies, 0.4, 2.5)
    out = crops.astype(np.float32) * gains[:, None, None, :]
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def _lab(crops_float01: np.ndarray) -> np.ndarray:
    n, h, w, _ = crops_float01.shape
    flat = crops_float01.reshape(n * h, w, 3).astype(np.float32)
    return cv2.cvtColor(flat, cv2.COLOR_BGR2Lab).reshape(n, h, w, 3)


def ink_features(crops: np.ndarray, bodies: np.ndarray | None = None):
    """Per crop: ink colour (N, 3) Lab of a neutral-bodied tile (NaN where no ink shows) and
    ink map (N, h, w) float32 in 0..1 over the number's rows (colour-blind: the shape).

    Each crop is first scaled so its body is neutral grey, so the ink colour is the
    print's own colour, whatever the light.
    """
    crops = np.asarray(crops)
    n = len(crops)
    if n == 0:
        return np.zeros((0, 3), np.float32), np.zeros((0, 0, 0), np.float32)
    bodies = body_colors(crops) if bodies is None else bodies
    h = crops.shape[1]
    r0, r1 = int(INK_ROWS[0] * h), int(INK_ROWS[1] * h)
    norm = crops[:, r0:r1, 3:-3].astype(np.float32) * (NEUTRAL / bodies)[:, None, None, :]
    lab = _lab(np.clip(norm / 255.0, 0, 1))
    body_lab = _lab(np.full((1, 1, 1, 3), NEUTRAL / 255.0, np.float32))[0, 0, 0]
    delta = np.linalg.norm(lab - body_lab, axis=3)
    flat = delta.reshape(n, -1)
    # The ink's core: a thin 1 has few pixels, and its edges blend into the body.
    core = np.partition(flat, -INK_CORE, axis=1)[:, -INK_CORE]
    strong = flat >= np.maximum(core, INK_MIN_DELTA)[:, None]
    count = strong.sum(axis=1)
    weights = strong.astype(np.float32)
    colours = np.einsum("np,npc->nc", weights, lab.reshape(n, -1, 3)) / np.maximum(count, 1)[:, None]
    # A coloured print among dark pixels that are not print (a black rack's lip or its
    # shadow inside a crop seen at an angle, a dark knot): the core above is the darkest
    # pixels and reads black. Where the crop's middle holds a core of clearly coloured
    # pixels, their colour is the ink's; a black print has none (its edges' colour
    # fringes are few and faint). Through a profile, on rendered held-out editions' scenes
    # (seeds 470,000+), colour misreadings went from 14 to 6 of 3,027 tiles.
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    c0, c1 = int(0.12 * chroma.shape[2]), int(0.88 * chroma.shape[2]) + 1
    middle = np.zeros(chroma.shape[1:], bool)
    middle[:, c0:c1] = True
    cflat = np.where(middle.ravel()[None] & (flat >= INK_MIN_DELTA), chroma.reshape(n, -1), 0.0)
    ccore = np.partition(cflat, -INK_CORE, axis=1)[:, -INK_CORE]
    coloured = ccore >= CHROMA_INK
    if coloured.any():
        cstrong = (cflat >= ccore[:, None]) & (cflat > 0)
        cw = cstrong.astype(np.float32)
        ccol = np.einsum("np,npc->nc", cw, lab.reshape(n, -1, 3)) / np.maximum(
            cw.sum(axis=1), 1)[:, None]
        colours = np.where(coloured[:, None], ccol, colours)
    colours[count < 4] = np.nan
    level = (weights * flat).sum(axis=1) / np.maximum(count, 1)
    maps = np.clip(delta / np.maximum(level, INK_MIN_DELTA)[:, None, None], 0, 1)
    maps[count < 4] = 0.0
    return colours.astype(np.float32), maps.astype(np.float32)


def shape_similarity(maps_a: np.ndarray, maps_b: np.ndarray) -> np.ndarray:
    """(Na, Nb) correlation of ink maps, after a slight blur so a pixel's shift is forgiven."""
    def prep(maps):
        if len(maps) == 0:
            return np.zeros((0, 1), np.float32)
        blurred = np.stack([cv2.GaussianBlur(m, (0, 0), 1.0) for m in maps])
        flat = blurred.reshape(len(maps), -1)
        flat = flat - flat.mean(axis=1, keepdims=True)
        return flat / np.maximum(np.linalg.norm(flat, axis=1, keepdims=True), 1e-6)

    return prep(maps_a) @ prep(maps_b).T


def chroma_hue(lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chroma and hue angle in degrees [0, 360) of Lab colours."""
    a, b = lab[..., 1], lab[..., 2]
    return np.hypot(a, b), np.degrees(np.arctan2(b, a)) % 360.0


# Least spread of an ink's lightness, chroma and hue (Lab units) between photos: light,
# blur and JPEG move a print's lightness and saturation much more than its hue.
SPREAD_FLOOR = (10.0, 8.0, 5.0)


def colour_distance2(ink: np.ndarray, slots_lab: np.ndarray, slots_spread: np.ndarray
                     ) -> np.ndarray:
    """(N, S) squared distance of ink colours (N, 3 Lab) to slot colours (S, 3), in units of
    each slot's spread, split into lightness, chroma and hue differences (as CIE94 does).
    NaN where an ink is NaN."""
    ink = np.asarray(ink, np.float32)[:, None, :]
    mu = np.asarray(slots_lab, np.float32)[None]
    spread = np.asarray(slots_spread, np.float32)[None]
    d_l = ink[..., 0] - mu[..., 0]
    c_ink, c_mu = np.hypot(ink[..., 1], ink[..., 2]), np.hypot(mu[..., 1], mu[..., 2])
    d_c = c_ink - c_mu
    d_ab2 = (ink[..., 1] - mu[..., 1]) ** 2 + (ink[..., 2] - mu[..., 2]) ** 2
    d_h2 = np.maximum(d_ab2 - d_c**2, 0.0)
    s_ab = np.hypot(spread[..., 1], spread[..., 2])
    s_l = np.maximum(spread[..., 0], SPREAD_FLOOR[0])
    s_c = np.maximum(s_ab, SPREAD_FLOOR[1])
    s_h = np.maximum(0.7 * s_ab, SPREAD_FLOOR[2])
    return (d_l / s_l) ** 2 + (d_c / s_c) ** 2 + d_h2 / s_h**2

