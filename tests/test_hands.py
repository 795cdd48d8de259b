"""The painted hands of `bench.eval_cover` (`bench.hands`): fixed by seed, over the tile they
reach for, entering from the photo's edge, of every kind and tone asked for."""

from __future__ import annotations

import numpy as np
import pytest

from bench.hands import KINDS, TONES, paint

TILE = np.float32([[180, 140], [220, 140], [220, 195], [180, 195]])


def table(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(120, 6, (300, 400, 3)), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("kind", KINDS)
def test_a_hand_is_the_same_for_a_seed_and_lies_over_its_tile(kind):
    image = table()
    one = paint(image, TILE, 55.0, kind, np.random.default_rng(5), TILE[None])
    two = paint(image, TILE, 55.0, kind, np.random.default_rng(5), TILE[None])
    assert np.array_equal(one.image, two.image) and one.kind == kind
    x0, y0 = TILE.min(axis=0).astype(int)
    x1, y1 = TILE.max(axis=0).astype(int)
    assert one.mask[y0:y1, x0:x1].mean() >= 0.25, kind  # over a quarter of the tile at least
    # the arm reaches the photo's edge, and the pixels under the mask changed
    edges = np.concatenate([one.mask[0], one.mask[-1], one.mask[:, 0], one.mask[:, -1]])
    assert edges.any(), kind
    assert np.abs(one.image.astype(int) - image.astype(int))[one.mask].mean() > 5


def test_the_tones_run_from_light_to_dark_and_all_are_drawn():
    lightness = [sum(t) for t in TONES]
    assert lightness == sorted(lightness, reverse=True)
    drawn = {paint(table(), TILE, 55.0, "palm", np.random.default_rng(s)).tone
             for s in range(60)}
    assert drawn == set(range(len(TONES)))


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        paint(table(), TILE, 55.0, "glove", np.random.default_rng(0))
