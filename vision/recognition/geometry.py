"""The table plane, estimated from the tiles themselves: rectangles of one size and shape.

An oblique photo shows the table through a perspective: far tiles look smaller, and every
tile's rectangle is sheared into a trapezoid. The tiles say how. They all lie on the table
and are all the same rectangle (width / height `ASPECT`), so there is a homography from
the photo to the table plane that makes every tile the same upright rectangle again.
`TablePlane.from_tiles(corners)` finds it in two linear steps, each robust to a few bad
boxes (iteratively reweighted least squares):

1. Size. A homography G maps a small photo area A at point x to the plane area
   A |det G| / w(x)^3, where w(x) = g31 x + g32 y + g33 is its last row applied to x. The
   tiles all have the same plane area, so a tile's photo area^(1/3) is proportional to
   w at its centre: a linear fit of the cube roots of the tiles' areas over their centres
   gives the line the perspective divides by (and so the plane's tilt).
2. Shape. With the perspective divided out, what is left is one affine map: every tile a
   parallelogram with the same distortion. A tile's right edge r and down edge d are
   perpendicular on the table, with |r| = ASPECT |d|; for the symmetric matrix S = K^T K of
   the affine part K that is r^T S d = 0 and r^T S r = ASPECT^2 d^T S d, linear in S. All
   tiles together give S by least squares, and K by Cholesky. A detector draws every tile
   as a rectangle in the photo, which hides the shear, so where a tile has a neighbour in
   its line the step between their centres stands in for r (`_neighbour_steps`).

The plane is scaled so that its tiles have the photo's median tile height and centred on
the tiles: group by it exactly as on the photo (`vision.game.layout` does when the plane is
`tilted`). With too few tiles, or a fit that does not make the tiles more alike, the plane
is the photo itself (`TablePlane.identity()`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ASPECT = 0.72  # tile face width / height
MIN_TILES = 6  # fewer tiles than this do not say where the plane is
# The perspective is taken seriously when the tiles' predicted sizes differ by this factor
# across the table (or their shape needs more than a mild correction): below it a
# photo is "seen from above" already, and the identity is safer than a fit to noise.
MIN_TILT = 1.12


class TablePlane:
    """A homography `matrix` (3x3) from photo pixels to table-plane units (the tiles'
    median photo height = their plane height), and how sure the fit is: `tilt` (the
    largest over the smallest tile size the perspective predicts), `shape_error` (the
    tiles' median shape error on the photo and on the plane), `n_tiles`. Read-only."""

    __slots__ = ("matrix", "tilt", "_shape_error", "n_tiles")

    def __init__(self, matrix: np.ndarray, tilt: float = 1.0,
                 shape_error: tuple[float, float] | Callable[[], tuple[float, float]] = (0.0, 0.0),
                 n_tiles: int = 0) -> None:
        for name, value in (("matrix", matrix), ("tilt", tilt), ("_shape_error", shape_error),
                            ("n_tiles", n_tiles)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"a TablePlane is read-only (cannot set {name})")

    def __reduce__(self):
        """copy, deepcopy and pickle: a plane with its shape error measured."""
        return (TablePlane, (self.matrix, self.tilt, self.shape_error, self.n_tiles))

    @property
    def shape_error(self) -> tuple[float, float]:
        """(photo, plane). Where the fit was turned down for a tilt and shear too small to
        matter, measured when first asked for: grouping never asks, and it was about a
        third of the fit's time."""
        errors = self._shape_error
        if callable(errors):
            errors = errors()
            object.__setattr__(self, "_shape_error", errors)
        return errors

    @classmethod
    def identity(cls, n_tiles: int = 0) -> TablePlane:
        return cls(np.eye(3), 1.0, (0.0, 0.0), n_tiles)

    @property
    def tilted(self) -> bool:
        """True when the plane differs from the photo enough to group by."""
        return not np.allclose(self.matrix, np.eye(3))

    def __repr__(self) -> str:
        return (f"TablePlane(tilt={self.tilt:.2f}, shape_error=({self.shape_error[0]:.3f}, "
                f"{self.shape_error[1]:.3f}), n_tiles={self.n_tiles}, tilted={self.tilted})")

    def to_plane(self, points: np.ndarray) -> np.ndarray:
        """Photo points (..., 2) on the table plane."""
        return _apply(self.matrix, points)

    def to_photo(self, points: np.ndarray) -> np.ndarray:
        return _apply(np.linalg.inv(self.matrix), points)

    @classmethod
    def from_tiles(cls, corners: np.ndarray, *, aspect: float = ASPECT,
                   min_tilt: float = MIN_TILT, check_shape: bool = True) -> TablePlane:
        """The plane from tiles' upright corners (N, 4, 2), clockwise from the top-left.

        `check_shape=False` keeps a fit that does not make the tiles' boxes more alike: a
        detector's boxes are rectangles in the photo whatever the view, so on a strongly
        tilted photo the boxes can look no better on the plane although the plane is right
        (the tilt, from the tiles' sizes, says so)."""
        q = np.asarray(corners, np.float64).reshape(-1, 4, 2)
        n = len(q)
        if n < MIN_TILES:
            return cls.identity(n)
        centre = q.reshape(-1, 2).mean(axis=0)
        scale = _median(_heights(q))
        if not np.isfinite(scale) or scale <= 0:
            return cls.identity(n)
        # Work in tile heights around the tiles' centre: well conditioned at any photo size.
        norm = np.array([[1 / scale, 0, -centre[0] / scale], [0, 1 / scale, -centre[1] / scale],
                         [0, 0, 1]])
        qn = _apply(norm, q)

        line = _perspective_line(qn)
        if line is None:
            return cls.identity(n)
        persp = np.array([[1, 0, 0], [0, 1, 0], [line[0], line[1], 1.0]])
        w = qn.reshape(-1, 2) @ line[:2] + 1.0
        if w.min() <= 0.05:
            return cls.identity(n)  # the horizon would cut through the tiles: a bad fit
        tilt = float(w.max() / w.min())
        qp = _apply(persp, qn)
        affine = _affine_part(qp, aspect)
        if affine is None:
            return cls.identity(n)
        shear = float(np.linalg.cond(affine))

        def fitted():
            """(homography, shape error on the photo, on the plane)."""
            m = np.eye(3)
            m[:2, :2] = affine
            h = m @ persp
            # Scale and place: plane tiles as tall as the photo's median tile, centred on
            # them.
            planar = _apply(h, qn)
            s = 1.0 / _median(_heights(planar))
            c = planar.reshape(-1, 2).mean(axis=0)
            back = np.array([[s * scale, 0, centre[0] - s * scale * c[0]],
                             [0, s * scale, centre[1] - s * scale * c[1]], [0, 0, 1]])
            h = back @ h @ norm
            h = h / h[2, 2]
            return h, _shape_error(qn, aspect), _shape_error(_apply(h, q), aspect)

        if max(tilt, shear) < min_tilt:  # seen from above: the photo is the plane
            return cls(np.eye(3), tilt, lambda: fitted()[1:], n)
        h, err_photo, err_plane = fitted()
        if check_shape and err_plane >= err_photo:
            return cls(np.eye(3), tilt, (err_photo, err_plane), n)
        return cls(h, tilt, (err_photo, err_plane), n)


# ----------------------------------------------------------------------------- helpers
def tile_frames(corners: np.ndarray):
    """Centres (N,2), unit right axes (N,2), unit down axes (N,2), widths (N,), heights (N,)."""
    q = np.asarray(corners, np.float64).reshape(-1, 4, 2)
    centres = q.mean(axis=1)
    right = ((q[:, 1] - q[:, 0]) + (q[:, 2] - q[:, 3])) / 2
    down = ((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2
    widths = np.linalg.norm(right, axis=1)
    heights = np.linalg.norm(down, axis=1)
    right = right / np.maximum(widths, 1e-9)[:, None]
    down = down / np.maximum(heights, 1e-9)[:, None]
    return centres, right, down, widths, heights


def _apply(h: np.ndarray, points: np.ndarray) -> np.ndarray:
    p = np.asarray(points, np.float64)
    flat = p.reshape(-1, 2)
    out = flat @ h[:2, :2].T + h[:2, 2]
    w = flat @ h[2, :2] + h[2, 2]
    return (out / w[:, None]).reshape(p.shape)


def _heights(q: np.ndarray) -> np.ndarray:
    return np.linalg.norm(((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2, axis=1)


def _areas(q: np.ndarray) -> np.ndarray:
    """Each quad's area (shoelace over corners 0-1-2-3, written out: a third of the time
    of the rolled sum, which the photo path's tilt check pays on every photo)."""
    x, y = q[..., 0], q[..., 1]
    return 0.5 * np.abs(x[:, 0] * (y[:, 1] - y[:, 3]) + x[:, 1] * (y[:, 2] - y[:, 0])
                        + x[:, 2] * (y[:, 3] - y[:, 1]) + x[:, 3] * (y[:, 0] - y[:, 2]))


def _edges(q: np.ndarray):
    r = ((q[:, 1] - q[:, 0]) + (q[:, 2] - q[:, 3])) / 2
    d = ((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2
    return r, d


def _shape_error(q: np.ndarray, aspect: float) -> float:
    """Median over tiles of how far each is from the upright rectangle of the median size:
    |cos| of the angle between its right and down axes + |log| of their length ratio over
    the expected one + |log| of its size over the median size. Where a tile has a
    neighbour in its line, the step to it stands for the right axis (see `_affine_part`)."""
    r, d = _edges(q)
    steps = _neighbour_steps(q)
    has = np.isfinite(steps[:, 0])
    size = np.sqrt(np.linalg.norm(r, axis=1) * np.linalg.norm(d, axis=1))
    r = np.where(has[:, None], steps, r)
    expected = np.where(has, aspect * 1.03, aspect)
    lr, ld = np.linalg.norm(r, axis=1), np.linalg.norm(d, axis=1)
    cos = np.abs(np.einsum("ij,ij->i", r, d)) / np.maximum(lr * ld, 1e-12)
    ratio = np.abs(np.log(np.maximum(lr, 1e-12) / np.maximum(ld, 1e-12) / expected))
    spread = np.abs(np.log(np.maximum(size, 1e-12) / _median(size)))
    return _median(cos + ratio + spread)


def _median(x: np.ndarray) -> float:
    """np.median of a 1-D float array, the same number, without its overhead (the fit
    takes ~25 medians of a few dozen values: np.median's checks were a third of it)."""
    n = len(x)
    if n == 0 or np.isnan(x).any():
        return float("nan")
    k = n // 2
    if n % 2:
        return float(np.partition(x, k)[k])
    part = np.partition(x, (k - 1, k))
    return float((part[k - 1] + part[k]) / 2)


def _irls(a: np.ndarray, b: np.ndarray | None, iters: int = 8):
    """Robust least squares: a @ x ~ b (or a @ x ~ 0 with |x| = 1 when b is None), with
    Cauchy-weighted residuals; returns (x, residuals) or None.

    Each step solves the weighted normal equations (a few unknowns: the 3x3 system, or its
    smallest eigenvector for |x| = 1), which is what the weighted least squares (or SVD)
    minimises, in a fraction of the calls; the rows are in tile heights, so the squared
    condition number stays small."""
    weights = np.ones(len(a))
    x = None
    at = np.ascontiguousarray(a.T)
    for _ in range(iters):
        weighted = at * weights
        gram = weighted @ a
        try:
            if b is None:
                x = np.linalg.eigh(gram)[1][:, 0]
                res = a @ x
            else:
                x = np.linalg.solve(gram, weighted @ b)
                res = a @ x - b
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(x)):
            return None
        sigma = 1.4826 * _median(np.abs(res)) + 1e-9
        weights = 1.0 / (1.0 + (res / (2.5 * sigma)) ** 2)
    return x, res


def _perspective_line(q: np.ndarray) -> np.ndarray | None:
    """(l1, l2) with area^(1/3) proportional to l1 x + l2 y + 1 over the tiles."""
    centres = q.mean(axis=1)
    root = np.cbrt(_areas(q))
    if not np.all(np.isfinite(root)) or root.min() <= 0:
        return None
    a = np.column_stack([np.ones(len(q)), centres])
    fit = _irls(a, root)
    if fit is None:
        return None
    p = fit[0]
    if p[0] <= 0:
        return None
    return np.array([p[1] / p[0], p[2] / p[0]])


def _neighbour_steps(q: np.ndarray) -> np.ndarray:
    """Per tile, the step to the next tile of its line along its right axis (NaN if none).

    A detector draws each tile as a rectangle in the photo, whatever the view, so a box's
    own right edge is only roughly the tile's; the step between the centres of two tiles
    side by side in a set is exact, and it runs along their right axis on the table.
    """
    centres = q.mean(axis=1)
    r, d = _edges(q)
    w = np.sqrt(r[:, 0] ** 2 + r[:, 1] ** 2)
    h = np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2)
    safe = np.maximum(w, 1e-12)
    ux, uy = (r[:, 0] / safe)[:, None], (r[:, 1] / safe)[:, None]
    vx = centres[None, :, 0] - centres[:, None, 0]  # v[i, j] = c_j - c_i
    vy = centres[None, :, 1] - centres[:, None, 1]
    along = vx * ux + vy * uy  # along tile i's right axis, in pixels
    across = np.abs(uy * vx - ux * vy)
    w_, h_ = w[:, None], h[:, None]
    ok = (along > 0.6 * w_) & (along < 1.5 * w_) & (across < 0.4 * h_)
    np.fill_diagonal(ok, False)
    score = np.where(ok, np.abs(along / w_ - 1.0) + across / h_, np.inf)
    rows = np.arange(len(q))
    best = np.argmin(score, axis=1)
    has = np.isfinite(score[rows, best])
    steps = np.full_like(centres, np.nan)
    steps[has, 0] = vx[rows, best][has]
    steps[has, 1] = vy[rows, best][has]
    return steps


def _affine_part(q: np.ndarray, aspect: float) -> np.ndarray | None:
    """K (2x2, upper triangular) making the tiles' right and down edges perpendicular with
    |r| = aspect |d|. Where a tile has a neighbour in its line, the step to it stands in
    for the tile's right edge (a set's tiles touch: the step is a width and ~3 % more)."""
    r, d = _edges(q)
    steps = _neighbour_steps(q)
    has = np.isfinite(steps[:, 0])
    r = np.where(has[:, None], steps, r)
    ratio_of = np.where(has, aspect * 1.03, aspect)
    size = np.sqrt(np.linalg.norm(r, axis=1) * np.linalg.norm(d, axis=1))[:, None]
    r, d = r / np.maximum(size, 1e-12), d / np.maximum(size, 1e-12)
    a2 = (ratio_of * ratio_of)
    perp = np.column_stack([r[:, 0] * d[:, 0], r[:, 0] * d[:, 1] + r[:, 1] * d[:, 0],
                            r[:, 1] * d[:, 1]])
    ratio = np.column_stack([r[:, 0] ** 2 - a2 * d[:, 0] ** 2,
                             2 * (r[:, 0] * r[:, 1] - a2 * d[:, 0] * d[:, 1]),
                             r[:, 1] ** 2 - a2 * d[:, 1] ** 2])
    # Two rows per tile (perpendicular, proportion); the robust weights drop bad rows.
    rows = np.concatenate([perp, ratio])
    fit = _irls(rows, None)
    if fit is None:
        return None
    s11, s12, s22 = fit[0]
    if s11 < 0:
        s11, s12, s22 = -s11, -s12, -s22
    s = np.array([[s11, s12], [s12, s22]])
    if np.linalg.eigvalsh(s).min() <= 0:
        return None
    k = np.linalg.cholesky(s).T  # S = K^T K, K upper triangular with a positive diagonal
    return k / np.sqrt(abs(np.linalg.det(k)))
