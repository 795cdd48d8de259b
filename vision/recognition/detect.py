"""Find every tile in a photo: ONNX detector -> oriented quadrilaterals + scores.

The model (`models/detector.onnx`, trained by `training/detector/train.py`) is a small
CenterNet-style net at output stride 4. Per cell it predicts a tile-centre heatmap, the
sub-cell offset of the centre, log long/short side lengths and the long-axis angle as
(cos 2phi, sin 2phi). Everything about the input and decoding (size, stride, thresholds)
comes from the sidecar `detector.json`, so a retrained model needs no code change.

Quad convention (the module contract): q0..q3 clockwise = top-left, top-right,
bottom-right, bottom-left of the tile assuming its long side is vertical and its "up" is
the long-axis direction pointing more towards the photo's top (-y). The classifier
resolves the remaining 180-degree ambiguity.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import numpy as np

from vision.recognition.sessions import (
    DEFAULT_THREADS,
    ModelsMissing,
    ModelUnreadable,
    load_session,
    read_sidecar,
)
from vision.recognition.settings import MODELS_DIR

# A photo whose long side is within this share of a whole multiple (2, 3, 4, ...) of the
# detector's input side is shrunk by that whole factor (1000 px -> 500, not 512): OpenCV's
# area averaging by a whole factor costs ~1/20 of its general path.
WHOLE_FACTOR_SLACK = 0.05


def quads_from_boxes(cx, cy, long_, short, phi) -> np.ndarray:
    """Oriented rectangles -> (N, 4, 2) float32 quads in the contract's order."""
    cx, cy, long_, short, phi = (np.asarray(a, np.float64).reshape(-1) for a in (cx, cy, long_, short, phi))
    ux, uy = np.cos(phi), np.sin(phi)
    # "up" along the long axis: the direction with negative y (ties, a horizontal long
    # axis within 1e-4 rad: towards -x)
    eps = 1e-4
    flip = (uy > eps) | ((np.abs(uy) <= eps) & (ux > 0))
    ux = np.where(flip, -ux, ux)
    uy = np.where(flip, -uy, uy)
    rx, ry = -uy, ux  # "right": up turned 90 degrees clockwise on screen (y down)
    hl, hs = long_ / 2, short / 2
    top = np.stack([cx + ux * hl, cy + uy * hl], -1)
    bottom = np.stack([cx - ux * hl, cy - uy * hl], -1)
    right = np.stack([rx * hs, ry * hs], -1)
    quads = np.stack([top - right, top + right, bottom + right, bottom - right], 1)
    return quads.astype(np.float32)


def order_quad(quad: np.ndarray) -> np.ndarray:
    """Reorder any 4-corner tile outline (e.g. a label's minAreaRect) into the contract order."""
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    centre = quad.mean(0)
    e01 = np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[3] - quad[2])
    e12 = np.linalg.norm(quad[2] - quad[1]) + np.linalg.norm(quad[0] - quad[3])
    if e01 >= e12:
        axis = (quad[1] + quad[2]) / 2 - (quad[0] + quad[3]) / 2
        long_, short = e01 / 2, e12 / 2
    else:
        axis = (quad[2] + quad[3]) / 2 - (quad[0] + quad[1]) / 2
        long_, short = e12 / 2, e01 / 2
    phi = np.arctan2(axis[1], axis[0])
    return quads_from_boxes(centre[0], centre[1], long_, short, phi)[0]


def _edge_scores(gx, gy, cx, cy, long_, short, theta):
    """Mean |gradient . normal| on the perimeter of rectangles (N tiles x A angles).

    cx, cy, long_, short: (N,); theta: (N, A) long-axis angles. Corners (rounded on real
    tiles) are skipped: 8 samples on each long side, 6 on each short side.
    """
    h, w = gx.shape
    ux, uy = np.cos(theta)[..., None], np.sin(theta)[..., None]  # (N, A, 1)
    vx, vy = -uy, ux
    tl = np.linspace(-0.38, 0.38, 8, dtype=np.float32)
    ts = np.linspace(-0.34, 0.34, 6, dtype=np.float32)
    L = long_[:, None, None]
    S = short[:, None, None]
    # long sides: centre +- S/2 v + t L u, normal v; short sides: +- L/2 u + t S v, normal u
    pts_x, pts_y, nx, ny = [], [], [], []
    for sign in (-1.0, 1.0):
        pts_x.append(cx[:, None, None] + sign * S / 2 * vx + tl * L * ux)
        pts_y.append(cy[:, None, None] + sign * S / 2 * vy + tl * L * uy)
        nx.append(np.broadcast_to(vx, pts_x[-1].shape))
        ny.append(np.broadcast_to(vy, pts_y[-1].shape))
        pts_x.append(cx[:, None, None] + sign * L / 2 * ux + ts * S * vx)
        pts_y.append(cy[:, None, None] + sign * L / 2 * uy + ts * S * vy)
        nx.append(np.broadcast_to(ux, pts_x[-1].shape))
        ny.append(np.broadcast_to(uy, pts_y[-1].shape))
    px = np.concatenate(pts_x, -1)
    py = np.concatenate(pts_y, -1)
    nx = np.concatenate(nx, -1)
    ny = np.concatenate(ny, -1)
    xi = np.clip(np.rint(px).astype(np.int32), 0, w - 1)
    yi = np.clip(np.rint(py).astype(np.int32), 0, h - 1)
    inside = (px >= 0) & (px <= w - 1) & (py >= 0) & (py <= h - 1)
    resp = np.abs(gx[yi, xi] * nx + gy[yi, xi] * ny) * inside
    return resp.sum(-1) / np.maximum(inside.sum(-1), 1)


def refine_angles(gray, cx, cy, long_, short, phi, span_deg=20.0, coarse_deg=4.0):
    """Fit each tile's long-axis angle to the image's edges (in net-input pixels).

    The net's angle is a few degrees off on many tiles; a rectangle of the predicted size
    whose perimeter lies on strong edges is a direct measurement. Search within
    +-`span_deg` of the net's angle (a wider search locks onto neighbouring tiles' edges
    at 90 degrees), coarse then 1-degree steps.
    """
    if len(cx) == 0:
        return phi
    g = cv2.GaussianBlur(gray, (3, 3), 0)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    cx, cy, long_, short = (np.asarray(a, np.float32) for a in (cx, cy, long_, short))
    coarse = np.deg2rad(np.arange(-span_deg, span_deg + 0.5, coarse_deg, dtype=np.float32))
    theta = np.asarray(phi, np.float32)[:, None] + coarse[None, :]
    best = theta[np.arange(len(cx)), _edge_scores(gx, gy, cx, cy, long_, short, theta).argmax(1)]
    fine = np.deg2rad(np.arange(-coarse_deg, coarse_deg + 0.5, 1.0, dtype=np.float32))
    theta = best[:, None] + fine[None, :]
    return theta[np.arange(len(cx)), _edge_scores(gx, gy, cx, cy, long_, short, theta).argmax(1)]


class TileDetector:
    """Loaded once, then `.detect(image_bgr) -> (quads (N,4,2) float32, scores (N,) float32)`."""

    def __init__(self, model_path: Path, spec: dict, threads: int = DEFAULT_THREADS):
        self.session = load_session(model_path, threads)
        self.input_name = self.session.get_inputs()[0].name
        self.spec = spec
        inp = spec["input"]
        self.long_side = int(inp["long_side"])
        self.multiple = int(inp.get("multiple", 32))
        self.pad_value = np.asarray(inp.get("pad_value", [115, 115, 115]), np.float32)
        out = spec["output"]
        self.stride = float(out["stride"])
        self.cell_centre = float(out.get("cell_centre", 0.5))
        th = spec.get("thresholds", {})
        self.score_threshold = float(th.get("score", 0.3))
        self.nms_centre = float(th.get("nms_centre", 0.45))
        self.max_tiles = int(th.get("max_tiles", 400))
        self.refine = bool(spec.get("refine_angle", True))
        self.last_timings: dict[str, float] = {}
        self._buffers = threading.local()

    @classmethod
    def load(cls, models_dir=MODELS_DIR, threads: int = DEFAULT_THREADS) -> TileDetector:
        models_dir = Path(models_dir)
        sidecar = models_dir / "detector.json"
        if not sidecar.is_file():
            raise ModelsMissing(f"no detector sidecar at {sidecar} (run `make train`)")
        spec = read_sidecar(sidecar)
        try:
            return cls(models_dir / spec.get("model", "detector.onnx"), spec, threads)
        except (KeyError, TypeError, ValueError) as error:
            raise ModelUnreadable(f"model settings file {sidecar} cannot be read: "
                                  f"{type(error).__name__} {error}") from None

    def prepare(self, image_bgr: np.ndarray, long_side: int | None = None, *,
                reuse: bool = False):
        """Resize (long side -> `long_side`), pad to a multiple of 32: (input NCHW, scale).

        With `reuse` the input is written into this thread's array from the last call of
        the same size, valid until its next call: a fresh 2.4 MB array costs its page
        faults again on every photo."""
        h, w = image_bgr.shape[:2]
        long_side = long_side or self.long_side
        scale = long_side / max(h, w)
        nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
        whole = round(1 / scale) if scale < 1 else 1
        if whole >= 2 and abs(whole * scale - 1) <= WHOLE_FACTOR_SLACK:
            scale = 1 / whole
            nw, nh = max(1, w // whole), max(1, h // whole)
        if scale < 1:
            img = image_bgr
            while img.shape[1] >= 2 * nw * 1.05 and img.shape[0] >= 2 * nh * 1.05:  # fast halvings
                img = cv2.pyrDown(img)
            # Area averaging at a non-integer ratio (1000 -> 512 px) is OpenCV's slow general
            # path (~0.2x the floor of `bench.floor`). Cheaper ways were measured with `make
            # eval` and a larger sample (300 rendered tables, 150 turns, valid/ + train/), and
            # each read differently: bilinear (94 vs 95/100 tables, 49 vs 50/50 turns);
            # bilinear to 1024 then area by 2 (within 2 grey levels: one extra find on
            # valid/, precision 99.37 % under its 99.5 % target); area by 2 to 500 px (7
            # more misreads on the rendered tables); area by 2 then bilinear to 512 (5 more
            # false finds on the real photos). So area averaging it stays.
            resized = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA)
        elif scale > 1:
            resized = cv2.resize(image_bgr, (nw, nh), interpolation=cv2.INTER_LINEAR)
        else:
            resized = image_bgr
        m = self.multiple
        ph, pw = -(-nh // m) * m, -(-nw // m) * m
        shape = (1, 3, ph, pw)
        x = self._buffer("input", shape, np.float32) if reuse else np.empty(shape, np.float32)
        x[0, :, nh:, :] = self.pad_value[:, None, None]  # only the padding: the photo
        x[0, :, :nh, nw:] = self.pad_value[:, None, None]  # fills the rest
        for channel, plane in enumerate(cv2.split(resized)):  # half the time of a transpose
            x[0, channel, :nh, :nw] = plane
        sx, sy = nw / w, nh / h
        return x, (sx, sy)

    def _buffer(self, name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
        """This thread's array `name` of `shape`, kept from one photo to the next (threads
        that share one detector, as the server's do, never write into each other's)."""
        local = self._buffers
        buffer = getattr(local, name, None)
        if buffer is None or buffer.shape != shape:
            buffer = np.empty(shape, dtype)
            setattr(local, name, buffer)
        return buffer

    def detect(self, image_bgr: np.ndarray, long_side: int | None = None, threshold: float | None = None):
        return self.detect_with_weak(image_bgr, long_side, threshold)[:2]

    def detect_with_weak(self, image_bgr: np.ndarray, long_side: int | None = None,
                         threshold: float | None = None, weak_score: float | None = None):
        """`detect`, plus the centres (P, 2, photo pixels) of the heat peaks at least
        `weak_score` but under the threshold: what the net found tile-like and did not
        confirm (none without `weak_score`)."""
        if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
            raise ValueError("detect() expects a BGR image of shape (H, W, 3)")
        start = time.perf_counter()
        x, (sx, sy) = self.prepare(image_bgr, long_side, reuse=True)
        prepared = time.perf_counter()
        maps = self.session.run(None, {self.input_name: x})[0][0]
        ran = time.perf_counter()
        gray = None
        if self.refine:
            h, w = image_bgr.shape[:2]
            nw, nh = round(w * sx), round(h * sy)
            gray = (x[0, 0, :nh, :nw] * 0.114 + x[0, 1, :nh, :nw] * 0.587 + x[0, 2, :nh, :nw] * 0.299)
        quads, scores = self.decode(maps, sx, sy, image_bgr.shape[:2], threshold, gray)
        weak = np.zeros((0, 2), np.float32)
        if weak_score is not None:
            weak = self.weak_peaks(maps, sx, sy, weak_score,
                                   self.score_threshold if threshold is None else threshold)
        # seconds of each step of this call, for `bench.vision_bench`'s breakdown
        self.last_timings = {"prepare": prepared - start, "network": ran - prepared,
                             "decode": time.perf_counter() - ran}
        return quads, scores, weak

    def weak_peaks(self, maps: np.ndarray, sx: float, sy: float, low: float,
                   high: float) -> np.ndarray:
        """Centres (P, 2, photo pixels) of the heat map's local peaks in [low, high)."""
        heat = maps[0]
        peak = heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))
        ys, xs = np.nonzero(peak & (heat >= low) & (heat < high))
        s, c = self.stride, self.cell_centre
        cx = (xs + c + maps[1, ys, xs]) * s / sx
        cy = (ys + c + maps[2, ys, xs]) * s / sy
        return np.stack([cx, cy], axis=1).astype(np.float32)

    def decode(self, maps: np.ndarray, sx: float, sy: float, shape, threshold: float | None = None,
               gray: np.ndarray | None = None):
        thr = self.score_threshold if threshold is None else threshold
        heat = maps[0]
        g = heat.shape
        padded = np.pad(heat, 1, mode="constant", constant_values=0)
        pooled = heat.copy()
        for dy in (0, 1, 2):
            for dx in (0, 1, 2):
                np.maximum(pooled, padded[dy : dy + g[0], dx : dx + g[1]], out=pooled)
        ys, xs = np.nonzero((heat >= pooled) & (heat > thr))
        empty = (np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32))
        if len(ys) == 0:
            return empty
        scores = heat[ys, xs]
        order = np.argsort(-scores, kind="stable")[: self.max_tiles * 2]
        ys, xs, scores = ys[order], xs[order], scores[order]
        s, c = self.stride, self.cell_centre
        cx = (xs + c + maps[1, ys, xs]) * s
        cy = (ys + c + maps[2, ys, xs]) * s
        long_ = np.exp(np.clip(maps[3, ys, xs], -3, 6)) * s
        short = np.exp(np.clip(maps[4, ys, xs], -3, 6)) * s
        phi = 0.5 * np.arctan2(maps[6, ys, xs], maps[5, ys, xs])
        # suppression in the tile's own frame: a weaker peak whose centre lies in the core of
        # a stronger tile (|along| < k*long/2, |across| < k*short/2) is a duplicate of it
        # (all pairs at once, row i = peak i's core; then greedily down the scores)
        k = self.nms_centre
        ux, uy = np.cos(phi)[:, None], np.sin(phi)[:, None]
        dx = cx[None, :] - cx[:, None]
        dy = cy[None, :] - cy[:, None]
        inside = ((np.abs(dx * ux + dy * uy) < k * 0.5 * long_[:, None])
                  & (np.abs(-dx * uy + dy * ux) < k * 0.5 * short[:, None]))
        keep = np.ones(len(scores), bool)
        # Only the peaks whose core holds a weaker one can drop anything: walk just those.
        for i in np.flatnonzero(np.triu(inside, 1).any(axis=1)).tolist():
            if keep[i]:
                keep[i + 1 :] &= ~inside[i, i + 1 :]
        idx = np.nonzero(keep)[0][: self.max_tiles]
        cx, cy, long_, short, phi, scores = cx[idx], cy[idx], long_[idx], short[idx], phi[idx], scores[idx]
        if gray is not None:
            phi = refine_angles(gray, cx, cy, long_, short, phi)
        # back to photo pixels (the resize may scale x and y slightly differently)
        ux, uy = np.cos(phi) / sx, np.sin(phi) / sy
        norm = np.hypot(ux, uy)
        vx, vy = -np.sin(phi) / sx, np.cos(phi) / sy
        long_photo = long_ * norm
        short_photo = short * np.hypot(vx, vy)
        phi_photo = np.arctan2(uy, ux)
        quads = quads_from_boxes(cx / sx, cy / sy, long_photo, short_photo, phi_photo)
        return quads, scores.astype(np.float32)
