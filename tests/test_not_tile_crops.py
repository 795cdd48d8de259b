"""Crops of no tile for the classifier (`training.classifier.not_tiles`): never on a tile,
and a flat target for them in the loss (`training.classifier.train.tile_loss`)."""

import numpy as np
import pytest

from training.classifier import not_tiles as N


def _square(cx, cy, r):
    return np.float32([[cx - r, cy - r], [cx + r, cy - r], [cx + r, cy + r], [cx - r, cy + r]])


def test_random_background_quads_keep_off_the_tiles():
    shape = (300, 400, 3)
    tiles = [_square(100, 100, 30), _square(250, 150, 30), _square(320, 240, 25)]
    mask = N._mask(shape, tiles, 0.2)
    quads = N._random_quads(np.random.default_rng(1), shape, mask, (30.0, 42.0), 12)
    assert len(quads) == 12
    for q in quads:
        own = N._mask(shape, [q], 0.0)
        assert (own & mask).sum() <= 0.02 * own.sum()
        assert q.min() >= 0 and (q[:, 0] < 400).all() and (q[:, 1] < 300).all()


def test_only_finds_centred_off_every_tile_are_taken():
    mask = N._mask((300, 400), [_square(100, 100, 30)], 0.2)
    finds = np.stack([_square(100, 100, 20),  # on the tile
                      _square(133, 100, 20),  # centre in the grown margin: still the tile's
                      _square(300, 200, 20)])  # off every tile
    off = N._off_tiles(finds, mask)
    assert len(off) == 1 and np.allclose(off[0].mean(0), (300, 200))
    assert len(N._off_tiles(np.zeros((0, 4, 2), np.float32), mask)) == 0


def test_a_crop_of_no_tile_is_pushed_toward_every_output_alike():
    torch = pytest.importorskip("torch")  # the train extra
    from training.classifier.train import tile_loss

    flat = torch.zeros(1, 106)
    sure = torch.zeros(1, 106)
    sure[0, 7] = 12.0
    no_tile = torch.tensor([-1])
    # for no tile, the flat answer costs least, a sure one more
    assert float(tile_loss(flat, no_tile)) < float(tile_loss(sure, no_tile))
    # for a tile, a sure right answer costs less than the flat one
    assert float(tile_loss(sure, torch.tensor([7]))) < float(tile_loss(flat, torch.tensor([7])))
    # a batch mixes both, averaged over every crop
    both = tile_loss(torch.cat([sure, flat]), torch.tensor([7, -1]))
    expect = (tile_loss(sure, torch.tensor([7])) + tile_loss(flat, no_tile)) / 2
    assert torch.isclose(both, expect)


def test_squashed_crops_lose_their_fine_detail():
    torch = pytest.importorskip("torch")
    from training.classifier.train import augment

    board = ((np.indices((44, 32)).sum(0) % 2) * 255).astype(np.uint8)
    x = torch.from_numpy(np.repeat(board[None, ..., None], 3, 3).repeat(32, 0))

    def detail(batch):  # mean step between neighbouring pixels, over the batch
        g = batch[:, 0]
        return float((g[:, 1:] - g[:, :-1]).abs().mean() + (g[:, :, 1:] - g[:, :, :-1]).abs().mean())

    plain = detail(augment(x, torch.Generator().manual_seed(0)))
    squashed = detail(augment(x, torch.Generator().manual_seed(0), squash=1.0))
    # a third of the plain crops are blurred too; every squashed one is resampled
    assert squashed < 0.4 * plain, (plain, squashed)
