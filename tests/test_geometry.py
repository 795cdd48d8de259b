"""The table plane from the tiles: an oblique view is undone so the tiles are alike again."""

from __future__ import annotations

import numpy as np
import pytest

from bench.eval_geometry import as_detector_boxes, pinhole
from bench.synth_tables import synth_table
from vision.game.layout import group_lines
from vision.recognition.geometry import ASPECT, TablePlane, _shape_error


def _table(seed: int):
    return synth_table(np.random.default_rng(seed), oblique=0.0, noise=0.0)


@pytest.mark.parametrize("elevation", [60, 45, 30])
def test_an_oblique_photo_is_undone_into_alike_upright_tiles(elevation):
    table = _table(1)
    photo = pinhole(table.plane_quads, elevation, yaw=0.3)
    plane = TablePlane.from_tiles(photo)
    assert plane.tilted and plane.tilt > 1.2
    on_plane = plane.to_plane(photo)
    assert _shape_error(photo, ASPECT) > 0.15
    assert _shape_error(on_plane, ASPECT) < 0.03  # what is left: the gaps between tiles
    # Every tile the same size again: the far ones are no longer smaller.
    heights = np.linalg.norm(on_plane[:, 3] - on_plane[:, 0], axis=1)
    assert heights.max() / heights.min() < 1.02
    np.testing.assert_allclose(plane.to_photo(on_plane), photo, atol=1e-6)


def test_a_photo_from_above_is_left_as_it_is():
    table = _table(2)
    plane = TablePlane.from_tiles(pinhole(table.plane_quads, 90))
    assert not plane.tilted and plane.tilt < 1.05


def test_too_few_tiles_say_nothing_about_the_plane():
    table = _table(3)
    plane = TablePlane.from_tiles(pinhole(table.plane_quads[:4], 40))
    assert not plane.tilted and plane.n_tiles == 4
    assert not TablePlane.from_tiles(np.zeros((0, 4, 2))).tilted


def test_a_few_bad_boxes_do_not_bend_the_plane():
    table = _table(4)
    photo = pinhole(table.plane_quads, 40, yaw=-0.2)
    rng = np.random.default_rng(0)
    noisy = photo + rng.normal(0, 0.02, photo.shape) * np.linalg.norm(
        photo[:, 1] - photo[:, 0], axis=1)[:, None, None]
    bad = noisy.copy()
    for i in range(0, len(bad), 8):  # one box in eight drawn half again too big
        c = bad[i].mean(axis=0)
        bad[i] = c + 1.5 * (bad[i] - c)
    plane = TablePlane.from_tiles(bad)
    good = np.ones(len(bad), bool)
    good[::8] = False
    assert _shape_error(plane.to_plane(noisy[good]), ASPECT) < 0.1
    assert plane.shape_error[1] < plane.shape_error[0] / 2


@pytest.mark.parametrize("elevation", [60, 35])
def test_an_oblique_table_groups_as_seen_from_above(elevation):
    table = _table(5)
    photo = pinhole(table.plane_quads, elevation, yaw=0.4)
    layout = group_lines(photo, plane=True)
    assert layout.plane is not None and layout.plane.tilted
    assert sorted(map(tuple, layout.sets)) == sorted(map(tuple, table.sets))
    assert group_lines(photo, plane=False).plane is None


def test_repr_says_how_sure_the_plane_is():
    plane = TablePlane.from_tiles(pinhole(_table(6).plane_quads, 45))
    assert repr(plane).startswith("TablePlane(tilt=")
    assert "tilted=True" in repr(plane)


def test_the_plane_is_found_from_a_detectors_rotated_rectangles_too():
    # A detector draws each tile as a rectangle in the photo, whatever the view: the
    # steps between tiles side by side stand in for the tiles' lost shear.
    table = _table(7)
    photo = pinhole(table.plane_quads, 40, yaw=0.4)
    plane = TablePlane.from_tiles(as_detector_boxes(photo))
    assert plane.tilted
    # Judged on the tiles' true outlines: at most half as far from alike upright tiles.
    assert _shape_error(plane.to_plane(photo), ASPECT) < 0.5 * _shape_error(photo, ASPECT)


def test_degenerate_boxes_leave_the_photo_as_it_is():
    quads = np.zeros((8, 4, 2))
    assert not TablePlane.from_tiles(quads).tilted
    table = _table(9)
    photo = pinhole(table.plane_quads, 45)
    photo[0] = np.nan
    assert not TablePlane.from_tiles(photo).tilted


# -- the fit's speed-ups give the same plane ------------------------------------------------
def _irls_by_least_squares(a, b, iters=8):
    """The robust fit as first written: np.linalg.lstsq (or the SVD for |x| = 1) of the
    weighted rows at every step."""
    weights = np.ones(len(a))
    for _ in range(iters):
        sw = np.sqrt(weights)[:, None]
        if b is None:
            x = np.linalg.svd(a * sw, full_matrices=False)[2][-1]
            res = a @ x
        else:
            x = np.linalg.lstsq(a * sw, b * sw[:, 0], rcond=None)[0]
            res = a @ x - b
        sigma = 1.4826 * float(np.median(np.abs(res))) + 1e-9
        weights = 1.0 / (1.0 + (res / (2.5 * sigma)) ** 2)
    return x, res


@pytest.mark.parametrize("elevation, yaw", [(90, 0.0), (70, 0.2), (45, 0.3), (30, -0.4)])
def test_the_normal_equations_give_the_plane_least_squares_gives(monkeypatch, elevation, yaw):
    import vision.recognition.geometry as geometry

    photo = as_detector_boxes(pinhole(_table(11).plane_quads, elevation, yaw=yaw))
    fast = TablePlane.from_tiles(photo)
    monkeypatch.setattr(geometry, "_irls", _irls_by_least_squares)
    slow = TablePlane.from_tiles(photo)
    assert fast.tilted == slow.tilted
    np.testing.assert_allclose(fast.matrix, slow.matrix, rtol=1e-9, atol=1e-12)
    assert fast.tilt == pytest.approx(slow.tilt, rel=1e-9)
    np.testing.assert_allclose(fast.shape_error, slow.shape_error, rtol=1e-9)


def test_the_shape_error_of_a_plane_turned_down_is_measured_when_asked_for():
    photo = pinhole(_table(2).plane_quads, 90)
    plane = TablePlane.from_tiles(photo)
    assert not plane.tilted
    # min_tilt 1: the same fit carried through to the end, errors measured at once
    eager = TablePlane.from_tiles(photo, min_tilt=1.0)
    assert plane.shape_error == eager.shape_error
    assert "shape_error=(" in repr(plane)
    with pytest.raises(AttributeError):
        plane.tilt = 2.0


@pytest.mark.parametrize("n", [1, 2, 7, 54, 55])
def test_the_fits_median_is_numpys(n):
    from vision.recognition.geometry import _median

    values = np.random.default_rng(n).normal(size=n)
    assert _median(values) == float(np.median(values))
    values[0] = np.nan
    assert np.isnan(_median(values))


def test_a_plane_copies_and_pickles_with_its_shape_error():
    import copy
    import pickle

    for elevation in (90, 40):
        plane = TablePlane.from_tiles(pinhole(_table(3).plane_quads, elevation))
        for twin in (copy.copy(plane), copy.deepcopy(plane), pickle.loads(pickle.dumps(plane))):
            np.testing.assert_array_equal(twin.matrix, plane.matrix)
            assert (twin.tilt, twin.shape_error, twin.n_tiles, twin.tilted) == (
                plane.tilt, plane.shape_error, plane.n_tiles, plane.tilted)
