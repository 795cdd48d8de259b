"""Tiles as solid blocks (face, side walls, bevel, gloss) and what a photo shows of each.

A `Block` is one tile in the world: its face's four corners (tl, tr, br, bl as the number
reads upright) and the vector from the face to its back. `draw_block` paints the walls
that face the camera, a bevel, then the face texture with a specular highlight.
`visible_label` reads the id buffer after the whole scene is drawn: the visible part of
the face as a quad inside the face, whether the whole number shows, and the quad a
detector is taught (the visible part, grown down just enough to stay taller than wide).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from training import render as R
from training.render3d.camera import Painter

FACE = np.float32([[0, 0], [R.FACE_W, 0], [R.FACE_W, R.FACE_H], [0, R.FACE_H]])
UNFAMILIAR_JOKERS = ("butterfly", "star_plain", "logo")


@dataclass
class Block:
    code: str
    face: np.ndarray  # (4, 3) world cm: tl, tr, br, bl of the upright face
    back: np.ndarray  # (3,) face -> back of the tile
    texture: np.ndarray  # (FACE_H, FACE_W, 4) BGRA
    number_box: tuple  # (left, top, right, bottom) shares of the face
    standing: bool
    face_id: int = 0
    homography: np.ndarray | None = None  # texture -> photo, once drawn


@dataclass(frozen=True)
class TileLabel:
    """What the photo shows of one tile. `visible` and `quad` are (4, 2) photo pixels in
    the face's order; `visible` lies inside `quad`."""

    code: str
    quad: np.ndarray  # the whole face
    visible: np.ndarray  # the visible part of the face
    train_quad: np.ndarray  # visible part, grown down to stay taller than wide
    visible_share: float  # of the face's area
    number_visible: bool  # the whole number (or joker face) shows and lies in the photo
    standing: bool


def _shade(normal: np.ndarray, light: np.ndarray, ambient: float = 0.55) -> float:
    n = normal / (np.linalg.norm(normal) + 1e-9)
    return ambient + (1 - ambient) * max(0.0, float(np.dot(n, light)))


def glossy(texture: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """The face with a soft specular highlight (a lamp's reflection on the glossy face)."""
    out = texture.copy()
    h, w = texture.shape[:2]
    spot = np.zeros((h, w), np.float32)
    cx, cy = rng.uniform(0.1, 0.9) * w, rng.uniform(0.05, 0.7) * h
    cv2.ellipse(spot, (int(cx), int(cy)), (int(w * rng.uniform(0.2, 0.6)),
                int(h * rng.uniform(0.06, 0.2))), rng.uniform(-30, 30), 0, 360, 1.0, -1)
    spot = cv2.GaussianBlur(spot, (0, 0), w * 0.08)
    rgb = out[..., :3].astype(np.float32)
    out[..., :3] = np.clip(rgb + strength * spot[..., None] * (255 - rgb) / 255 * 1.0, 0, 255)
    return out


def draw_block(painter: Painter, block: Block, light: np.ndarray, rng: np.random.Generator,
               gloss: float, body_id: int) -> None:
    cam = painter.camera
    body = block.texture[R.FACE_H // 2, 3, :3].astype(np.float32)
    f = block.face.astype(np.float64)
    b = f + block.back
    centre = f.mean(0)
    walls = [(f[0], f[1], b[1], b[0]), (f[1], f[2], b[2], b[1]), (f[2], f[3], b[3], b[2]),
             (f[3], f[0], b[0], b[3])]
    for wall in walls:
        wall = np.asarray(wall)
        outward = wall.mean(0) - (centre + block.back / 2)
        if np.dot(outward, cam.position - wall.mean(0)) <= 0:
            continue
        # a wall is a little darker than the face and shaded by how it meets the light
        painter.polygon(wall, body * 0.82 * _shade(outward, light), body_id)
    front_normal = -block.back
    if np.dot(front_normal, cam.position - centre) <= 0:
        return  # seen from behind: no face
    face_shade = _shade(front_normal, light, 0.85)
    # the bevel round the face's rounded corners
    painter.polygon(f, body * 0.9 * face_shade, body_id)
    tex = glossy(block.texture, rng, gloss) if gloss > 0 else block.texture.copy()
    tex[..., :3] = np.clip(tex[..., :3].astype(np.float32) * face_shade, 0, 255).astype(np.uint8)
    block.homography = painter.texture(f, tex, block.face_id)


def visible_label(painter: Painter, block: Block, grid: int = 24) -> TileLabel | None:
    """The label of a drawn block, or None when the photo shows none of its face."""
    if block.homography is None:
        return None
    H = block.homography
    quad = cv2.perspectiveTransform(FACE[None], H)[0]
    ids = painter.ids
    h, w = ids.shape
    # sample the face on a grid: which of its points the photo shows
    s = (np.arange(grid) + 0.5) / grid
    uu, vv = np.meshgrid(s, s)
    pts = np.stack([uu.ravel() * R.FACE_W, vv.ravel() * R.FACE_H], 1).astype(np.float32)
    px = cv2.perspectiveTransform(pts[None], H)[0]
    xi, yi = np.round(px[:, 0]).astype(int), np.round(px[:, 1]).astype(int)
    inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    seen = np.zeros(len(pts), bool)
    seen[inside] = ids[yi[inside], xi[inside]] == block.face_id
    if not seen.any():
        return None
    u0, v0, u1, v1 = _visible_rect(seen.reshape(grid, grid), _inner(uu, vv))
    visible = _face_rect(H, u0, v0, u1, v1)
    share = float(seen.sum()) / _inner(uu.ravel(), vv.ravel()).sum()
    left, top, right, bottom = block.number_box
    n = 7
    nu, nv = np.meshgrid(np.linspace(left, right, n), np.linspace(top, bottom, n))
    npts = np.stack([nu.ravel() * R.FACE_W, nv.ravel() * R.FACE_H], 1).astype(np.float32)
    npx = cv2.perspectiveTransform(npts[None], H)[0]
    nx, ny = np.round(npx[:, 0]).astype(int), np.round(npx[:, 1]).astype(int)
    nin = (nx >= 0) & (nx < w) & (ny >= 0) & (ny < h)
    nseen = np.zeros(len(npts), bool)
    nseen[nin] = ids[ny[nin], nx[nin]] == block.face_id
    number_visible = bool(nseen.mean() >= 0.96)
    v_grown = v1
    while not R._portrait(_face_rect(H, u0, v0, u1, v_grown), 1.05) and v_grown < 1.0:
        v_grown = min(1.0, v_grown + 0.04)
    train = _face_rect(H, u0, v0, u1, v_grown)
    return TileLabel(block.code, quad.astype(np.float32), visible, train, share,
                     number_visible, block.standing)


def _visible_rect(seen: np.ndarray, inner: np.ndarray, least: float = 0.5) -> tuple:
    """(u0, v0, u1, v1) in face shares: the longest run of face rows at least `least` seen,
    then the columns at least `least` seen within it. A gap between two tiles of the row in
    front shows a sliver of a back tile's foot; that sliver does not make its foot visible."""
    grid = seen.shape[0]
    rows = seen.sum(1) >= least * np.maximum(inner.sum(1), 1)
    best, start = (0, -1), None
    for i, ok in enumerate(list(rows) + [False]):
        if ok and start is None:
            start = i
        elif not ok and start is not None:
            if i - start > best[1] - best[0] + 1:
                best = (start, i - 1)
            start = None
    if best[1] < 0:  # no row is half seen: the seen points' own extent
        ys, xs = np.nonzero(seen)
        best = (ys.min(), ys.max())
        cols_idx = xs
    else:
        band = slice(best[0], best[1] + 1)
        cols = seen[band].sum(0) >= least * np.maximum(inner[band].sum(0), 1)
        cols_idx = np.nonzero(cols)[0] if cols.any() else np.nonzero(seen[band].any(0))[0]
    step = 1.0 / grid
    return (_snap(cols_idx.min() * step), _snap(best[0] * step),
            _snap((cols_idx.max() + 1) * step), _snap((best[1] + 1) * step))


def _inner(u, v, r=0.09):
    """Whether face points lie inside the rounded outline (corners cut)."""
    du = np.maximum(np.abs(u - 0.5) - (0.5 - r), 0)
    dv = np.maximum(np.abs(v - 0.5) - (0.5 - r * R.ASPECT), 0) / R.ASPECT
    return du * du + dv * dv <= r * r


def _snap(x: float, eps: float = 0.06) -> float:
    x = float(np.clip(x, 0, 1))
    return 0.0 if x < eps else 1.0 if x > 1 - eps else x


def _face_rect(H, u0, v0, u1, v1) -> np.ndarray:
    pts = np.float32([[u0, v0], [u1, v0], [u1, v1], [u0, v1]]) * (R.FACE_W, R.FACE_H)
    return cv2.perspectiveTransform(pts[None].astype(np.float32), H)[0].astype(np.float32)


def unfamiliar_joker(look: tuple, kind: str) -> np.ndarray:
    """A joker face training's editions never print (butterfly, plain star, a logo) on the
    edition's body: still a joker."""
    body = np.asarray(look[1], np.float32)
    ink = np.asarray(look[2], np.float32)
    fw, fh = R.FACE_W, R.FACE_H
    face = np.empty((fh, fw, 3), np.float32)
    face[:] = body
    cx, cy = fw / 2, fh * look[6] / 100
    s = 4
    m = np.zeros((fh * s, fw * s), np.uint8)
    r = fw * 0.3 * s
    c = (int(cx * s), int(cy * s))
    if kind == "butterfly":
        for sx in (-1, 1):
            cv2.ellipse(m, (int(c[0] + sx * r * 0.5), int(c[1] - r * 0.3)),
                        (int(r * 0.5), int(r * 0.42)), sx * 30, 0, 360, 255, -1, cv2.LINE_AA)
            cv2.ellipse(m, (int(c[0] + sx * r * 0.4), int(c[1] + r * 0.45)),
                        (int(r * 0.35), int(r * 0.3)), -sx * 30, 0, 360, 255, -1, cv2.LINE_AA)
        cv2.line(m, (c[0], int(c[1] - r * 0.7)), (c[0], int(c[1] + r * 0.8)), 255,
                 int(r * 0.12), cv2.LINE_AA)
    elif kind == "star_plain":
        pts = [(c[0] + r * (1 if k % 2 == 0 else 0.42) * math.cos(-math.pi / 2 + k * math.pi / 5),
                c[1] + r * (1 if k % 2 == 0 else 0.42) * math.sin(-math.pi / 2 + k * math.pi / 5))
               for k in range(10)]
        cv2.fillPoly(m, [np.round(np.array(pts)).astype(np.int32)], 255, cv2.LINE_AA)
    else:  # a round logo: a ring with a big R
        cv2.circle(m, c, int(r), 255, int(r * 0.14), cv2.LINE_AA)
        cv2.putText(m, "R", (int(c[0] - r * 0.45), int(c[1] + r * 0.45)),
                    cv2.FONT_HERSHEY_DUPLEX, r / 34, 255, max(2, int(r * 0.12)), cv2.LINE_AA)
    mask = cv2.resize(m, (fw, fh), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    face = face * (1 - mask[..., None]) + ink * mask[..., None]
    out = np.empty((fh, fw, 4), np.uint8)
    out[..., :3] = np.clip(face, 0, 255)
    out[..., 3] = R._rounded_mask()
    return out
