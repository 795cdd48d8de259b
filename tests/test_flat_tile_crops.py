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


def test_quads_map_into_the_stretched_photo_and_back():
    from vision.recognition.squashed_view import from_stretched, to_stretched

    quads = np.float32([[[10, 20], [30, 21], [31, 45], [9, 44]], [[0, 0], [5, 0], [5, 7], [0, 7]]])
    for factor in (2.0, 3.0):
        up = to_stretched(quads, factor, 81)
        assert np.array_equal(up[..., 0], quads[..., 0])  # widths are kept
        assert np.allclose(from_stretched(up, factor, 81), quads, atol=1e-4)
        heights = np.ptp(up[..., 1], axis=1) / np.ptp(quads[..., 1], axis=1)
        assert np.allclose(heights, round(81 * factor) / 81)  # taller by the factor


def test_stretched_crops_are_cut_where_the_squashed_view_sees_the_tiles(monkeypatch):
    """`--flat-stretched`: each lying tile of the unstretched pool's scenes is cut from the
    photo stretched by each of the squashed view's STRETCHES at its quad mapped there."""
    import training.classifier.data as D
    import training.render3d.scene as S
    from vision.recognition.rectify import rectify_tiles, rotate_quad_180
    from vision.recognition.squashed_view import STRETCHES, stretched, to_stretched

    size, rendered = (32, 44), []
    render, jitter = S.render_depth_scene, D.jitter_quads

    def recorded(*a, **k):
        rendered.append(render(*a, **k))
        return rendered[-1]

    monkeypatch.setattr(S, "render_depth_scene", recorded)
    # the jitter's draws are made, its quads not moved: the cut is seen exactly
    monkeypatch.setattr(D, "jitter_quads", lambda rng, q, *a: (jitter(rng, q, *a), q)[1])
    plain_x, _ = F.flat_tile_crops(4, size, seed=5, copies=2, log=lambda *_: None)
    plain, rendered = rendered, []
    x, y = F.flat_tile_crops(4, size, seed=5, copies=2, stretch=True, log=lambda *_: None)
    assert len(rendered) == 4
    for a, b in zip(plain, rendered, strict=True):  # the same scenes as without
        assert np.array_equal(a.image, b.image)
    assert len(x) == len(y) == len(STRETCHES) * len(plain_x) > 0
    i = differ = 0
    for scene in rendered:
        labels = F.lying_labels(scene)
        if not labels:
            continue
        quads = np.stack([q for _c, q in labels]).astype(np.float32)
        for factor in STRETCHES:
            tall = stretched(scene.image, factor)
            at = to_stretched(quads, factor, scene.image.shape[0])
            for _ in range(2):
                down = y[i:i + len(at)] >= D.N_CLASSES
                got = x[i:i + len(at)]
                assert np.array_equal(got, rectify_tiles(
                    tall, np.where(down[:, None, None], rotate_quad_180(at), at), size))
                # not the unstretched photo's crop: cut where the squashed view sees it
                flat = np.where(down[:, None, None], rotate_quad_180(quads), quads)
                differ += int(not np.array_equal(got, rectify_tiles(scene.image, flat, size)))
                i += len(at)
    assert i == len(x) and differ > 0
