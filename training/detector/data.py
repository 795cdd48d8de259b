"""Training samples for the detector: augmented crops of real photos (and rendered scenes)
with CenterNet targets at output stride 4.

A sample is an (S, S) BGR crop plus a list of oriented tile rectangles in crop pixels.
`make_targets` turns the rectangles into the heatmap / offset / size / angle maps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

STRIDE = 4


@dataclass
class Scene:
    image: np.ndarray  # BGR uint8
    polygons: list[np.ndarray]  # each (K, 2) float32 photo pixels: a tile's visible top face
    ignore: list[np.ndarray]  # polygons of regions to neither reward nor punish


def real_scenes(split: str = "train") -> list[Scene]:
    from training.real_data import load_split

    scenes = []
    for photo in load_split(split):
        scenes.append(Scene(photo.read(), [t.polygon for t in photo.tiles], []))
    return scenes


def rect_of(polygon: np.ndarray):
    """(cx, cy, long, short, phi) of the min-area rectangle; phi = long-axis angle (rad)."""
    (cx, cy), (w, h), angle = cv2.minAreaRect(polygon.astype(np.float32))
    phi = math.radians(angle)
    if w >= h:
        long_, short = w, h
    else:
        long_, short = h, w
        phi += math.pi / 2
    return cx, cy, long_, short, phi


def _median_long(scene: Scene) -> float | None:
    if not scene.polygons:
        return None
    return float(np.median([rect_of(p)[2] for p in scene.polygons]))


def augment(scene: Scene, rng: np.random.Generator, size: int = 384,
            min_long: float = 12.0, max_long: float = 190.0):
    """A random view of `scene`: scale, any rotation, flip, mild perspective, crop, light.

    Returns (crop BGR (size,size,3), targets list of (cx, cy, long, short, phi),
    ignores list of polygons) in crop pixels.
    """
    h, w = scene.image.shape[:2]
    median = _median_long(scene)
    if median is None:
        scale = math.exp(rng.uniform(math.log(0.15), math.log(1.2)))
    else:
        target = math.exp(rng.uniform(math.log(min_long * 1.3), math.log(max_long * 0.8)))
        scale = target / median
    angle = rng.uniform(0, 2 * math.pi) if rng.random() < 0.75 else rng.normal(0, 0.15)
    flip = rng.random() < 0.5
    # Affine: photo -> crop. Centre a random tile (or random point) in the crop.
    if scene.polygons and rng.random() < 0.85:
        poly = scene.polygons[rng.integers(len(scene.polygons))]
        anchor = poly.mean(0)
    else:
        anchor = np.array([rng.uniform(0, w), rng.uniform(0, h)])
    ca, sa = math.cos(angle) * scale, math.sin(angle) * scale
    fx = -1.0 if flip else 1.0
    linear = np.array([[ca * fx, -sa], [sa * fx, ca]])
    shift = np.array([size / 2, size / 2]) + rng.uniform(-0.4, 0.4, 2) * size - linear @ anchor
    matrix = np.eye(3)
    matrix[:2, :2] = linear
    matrix[:2, 2] = shift
    if rng.random() < 0.5:  # mild perspective about the crop centre
        p = rng.normal(0, 0.0006, 2) * (384 / size)
        persp = np.array([[1, 0, 0], [0, 1, 0], [p[0], p[1], 1]])
        c = np.array([[1, 0, -size / 2], [0, 1, -size / 2], [0, 0, 1]])
        matrix = np.linalg.inv(c) @ persp @ c @ matrix
    border = tuple(int(v) for v in rng.integers(0, 256, 3))
    interp = cv2.INTER_AREA if scale < 0.6 else cv2.INTER_LINEAR
    if scale < 0.5:  # pre-shrink so the warp does not alias
        k = scale / 0.7
        small = cv2.resize(scene.image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
        pre = np.diag([1 / k, 1 / k, 1.0])
        crop = cv2.warpPerspective(small, matrix @ pre, (size, size), flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=border)
    else:
        crop = cv2.warpPerspective(scene.image, matrix, (size, size), flags=interp,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=border)
    frame = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32)
    targets, ignores = [], []
    for poly in scene.polygons:
        q = cv2.perspectiveTransform(poly.reshape(-1, 1, 2).astype(np.float64), matrix).reshape(-1, 2)
        hull = cv2.convexHull(q.astype(np.float32)).reshape(-1, 2)
        full = cv2.contourArea(hull)
        if full < 4:
            continue
        inter_area, inter = cv2.intersectConvexConvex(hull, frame)
        if inter_area <= 0 or inter is None:
            continue
        frac = inter_area / full
        if frac >= 0.999:
            targets.append(rect_of(hull))
        elif frac >= 0.45:
            targets.append(rect_of(inter.reshape(-1, 2)))
        else:
            ignores.append(inter.reshape(-1, 2).astype(np.float32))
    for poly in scene.ignore:
        q = cv2.perspectiveTransform(poly.reshape(-1, 1, 2).astype(np.float64), matrix).reshape(-1, 2)
        ignores.append(q.astype(np.float32))
    crop = photometric(crop, rng)
    return crop, targets, ignores


def photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    x = img.astype(np.float32)
    gain = np.exp(rng.normal(0, 0.12, 3)).astype(np.float32)  # white balance
    x *= gain * math.exp(rng.normal(0, 0.3))  # brightness
    contrast = math.exp(rng.normal(0, 0.2))
    mean = x.mean()
    x = (x - mean) * contrast + mean
    if rng.random() < 0.3:
        gamma = math.exp(rng.normal(0, 0.25))
        x = 255.0 * (np.clip(x, 0, 255) / 255.0) ** gamma
    if rng.random() < 0.3:  # uneven light: a soft gradient
        h, w = x.shape[:2]
        gx, gy = rng.normal(0, 0.4, 2)
        ramp = 1 + (np.linspace(-0.5, 0.5, w)[None, :] * gx + np.linspace(-0.5, 0.5, h)[:, None] * gy)
        x *= np.clip(ramp, 0.3, 2.0)[..., None].astype(np.float32)
    if rng.random() < 0.05:
        x[:] = x.mean(2, keepdims=True)
    if rng.random() < 0.3:
        x += rng.normal(0, rng.uniform(2, 12), x.shape).astype(np.float32)
    out = np.clip(x, 0, 255).astype(np.uint8)
    r = rng.random()
    if r < 0.2:
        k = int(rng.choice([3, 5]))
        out = cv2.GaussianBlur(out, (k, k), 0)
    elif r < 0.3:  # motion blur
        k = int(rng.integers(3, 8))
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2] = 1.0 / k
        rot = cv2.getRotationMatrix2D(((k - 1) / 2, (k - 1) / 2), rng.uniform(0, 180), 1)
        kernel = cv2.warpAffine(kernel, rot, (k, k))
        kernel /= max(kernel.sum(), 1e-6)
        out = cv2.filter2D(out, -1, kernel)
    if rng.random() < 0.35:
        q = int(rng.integers(25, 90))
        ok, enc = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
        if ok:
            out = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return out


def make_targets(targets, ignores, size: int):
    """CenterNet maps at stride 4 for one crop.

    Returns heat (1,G,G), reg (6,G,G) [dx, dy, log long, log short, cos2phi, sin2phi],
    reg_w (2,G,G): weight of the offset target (the 3x3 cells round a centre) and of the
    size/angle targets (every cell in the inner 70 % of a tile: dense supervision teaches
    the angle far faster than the centre cell alone), valid (1,G,G) (1 = count the heat
    loss here).
    """
    g = size // STRIDE
    heat = np.zeros((g, g), np.float32)
    reg = np.zeros((6, g, g), np.float32)
    reg_w = np.zeros((g, g), np.float32)
    geo_w = np.zeros((g, g), np.float32)
    owner_d = np.full((g, g), np.inf, np.float32)
    geo_d = np.full((g, g), np.inf, np.float32)
    valid = np.ones((g, g), np.float32)
    ys, xs = np.mgrid[0:g, 0:g].astype(np.float32)
    for poly in ignores:
        mask = np.zeros((g, g), np.uint8)
        cv2.fillPoly(mask, [np.round(poly / STRIDE * 8).astype(np.int32)], 1, shift=3)
        mask = cv2.dilate(mask, np.ones((3, 3), np.uint8))
        valid[mask > 0] = 0
    for cx, cy, long_, short, phi in targets:
        gx, gy = cx / STRIDE - 0.5, cy / STRIDE - 0.5  # cell centres at (i + 0.5) * stride
        ix, iy = int(round(gx)), int(round(gy))
        if not (0 <= ix < g and 0 <= iy < g):
            continue
        ux, uy = math.cos(phi), math.sin(phi)
        sl = max(0.7, 0.13 * long_ / STRIDE)
        ss = max(0.6, 0.13 * short / STRIDE)
        x0, x1 = max(0, ix - 12), min(g, ix + 13)
        y0, y1 = max(0, iy - 12), min(g, iy + 13)
        dx = xs[y0:y1, x0:x1] - gx
        dy = ys[y0:y1, x0:x1] - gy
        a = dx * ux + dy * uy
        b = -dx * uy + dy * ux
        gauss = np.exp(-0.5 * ((a / sl) ** 2 + (b / ss) ** 2))
        heat[y0:y1, x0:x1] = np.maximum(heat[y0:y1, x0:x1], gauss)
        heat[iy, ix] = 1.0
        # size and angle on every cell of the tile's inner part (nearest centre wins)
        geo = (math.log(long_ / STRIDE), math.log(short / STRIDE), math.cos(2 * phi), math.sin(2 * phi))
        core = (np.abs(a) <= max(0.5, 0.35 * long_ / STRIDE)) & (np.abs(b) <= max(0.5, 0.35 * short / STRIDE))
        d2 = dx * dx + dy * dy
        win_d = geo_d[y0:y1, x0:x1]
        take = core & (d2 < win_d)
        win_d[take] = d2[take]
        for k in range(4):
            reg[2 + k, y0:y1, x0:x1][take] = geo[k]
        geo_w[y0:y1, x0:x1][take] = 1.0
        # regression targets at the centre cell and its 8 neighbours (nearest centre wins)
        rad = 1 if short / STRIDE >= 4 else 0
        for jy in range(iy - rad, iy + rad + 1):
            for jx in range(ix - rad, ix + rad + 1):
                if not (0 <= jx < g and 0 <= jy < g):
                    continue
                d = (jx - gx) ** 2 + (jy - gy) ** 2
                if d >= owner_d[jy, jx]:
                    continue
                owner_d[jy, jx] = d
                reg[0:2, jy, jx] = (gx - jx, gy - jy)
                reg_w[jy, jx] = 1.0 if (jx == ix and jy == iy) else 0.5
    valid[heat >= 0.999] = 1
    return heat[None], reg, np.stack([reg_w, geo_w]), valid[None]
