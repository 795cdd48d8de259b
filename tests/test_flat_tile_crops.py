"""Tiles lying flat in the depth renders, weighted up for the classifier
(`training.classifier.flat_tiles`, `--flat-tiles`): only lying tiles, and each kind of crop
its share of a batch, the shares before the option unchanged when it is off."""

import numpy as np

from training.classifier import flat_tiles as F


def test_only_labelled_tiles_lying_on_the_table_are_kept():
    from training.render3d.scene import _labelled, render_depth_scene

    kept = 0
    for seed in range(10):
        scene = render_depth_scene(np.random.default_rng(seed), kind="low")
        lying = [t for t in scene.tiles if _labelled(t) and not t.standing]
        got = F.lying_labels(scene)
        assert [c for c, _q in got] == [t.code for t in lying]
        for (_c, q), t in zip(got, lying, strict=True):
            assert np.array_equal(q, t.train_quad)
        kept += len(got)
    assert kept > 0  # a low phone sees tiles lying flat


def test_crops_and_targets_of_the_pool():
    x, y = F.flat_tile_crops(4, (32, 44), seed=3, copies=2, log=lambda *_: None)
    assert x.shape[1:] == (44, 32, 3) and x.dtype == np.uint8
    assert len(x) == len(y) > 0 and len(y) % 2 == 0
    assert ((y >= 0) & (y < 106)).all()
    x2, y2 = F.flat_tile_crops(4, (32, 44), seed=3, copies=2, log=lambda *_: None)
    assert np.array_equal(x, x2) and np.array_equal(y, y2)  # deterministic given the seed


def test_batch_shares_and_the_old_weights_when_off():
    syn_y = np.array([3] * 60 + [-1] * 20 + [5] * 20)
    flat = np.zeros(100, bool)
    flat[80:] = True
    w = F.batch_weights(50, syn_y, flat, 0.5, 0.08, 0.06)
    assert np.isclose(w.sum(), 1)
    assert np.isclose(w[:50].sum(), 0.5)
    assert np.isclose(w[50:][syn_y < 0].sum(), 0.08)
    assert np.isclose(w[50:][flat].sum(), 0.06)
    assert np.isclose(w[50:][(syn_y >= 0) & ~flat].sum(), 0.36)
    # off: the trainer's weights before the option, bit for bit
    off = np.zeros(100, bool)
    neg = syn_y < 0
    w_syn = np.full(100, (1 - 0.5 - 0.08) / max(int((~neg).sum()), 1))
    w_syn[neg] = 0.08 / max(int(neg.sum()), 1)
    old = np.concatenate([np.full(50, 0.5 / 50), w_syn])
    old /= old.sum()
    assert np.array_equal(F.batch_weights(50, syn_y, off, 0.5, 0.08, 0.0), old)
