"""vision.recognition.rectify: quads -> upright crops, the corner-order convention, the tensor."""

import cv2
import numpy as np

from vision.recognition.rectify import canonical_quad, rectify_tiles, rotate_quad_180, to_tensor


def _marked_photo():
    """A grey photo with one 60x84 'tile': white face, a black bar across its upper part."""
    img = np.full((300, 400, 3), 90, np.uint8)
    cv2.rectangle(img, (100, 50), (159, 133), (255, 255, 255), -1)
    cv2.rectangle(img, (110, 60), (149, 75), (0, 0, 0), -1)  # "ink" near the top
    return img


def test_upright_quad_maps_to_upright_crop():
    img = _marked_photo()
    quad = np.float32([[100, 50], [160, 50], [160, 134], [100, 134]])
    crop = rectify_tiles(img, quad[None], (30, 42))[0]
    assert crop.shape == (42, 30, 3) and crop.dtype == np.uint8
    gray = crop.mean(2)
    assert gray[: 21].mean() < gray[21:].mean() - 40, "ink should be in the upper half"
    assert gray[-5:].mean() > 240


def test_turned_quad_gives_turned_crop():
    img = _marked_photo()
    quad = np.float32([[100, 50], [160, 50], [160, 134], [100, 134]])
    a = rectify_tiles(img, quad[None], (30, 42))[0].astype(int)
    b = rectify_tiles(img, rotate_quad_180(quad)[None], (30, 42))[0].astype(int)
    assert np.abs(a[::-1, ::-1] - b).mean() < 3


def test_large_quads_are_shrunk_without_aliasing():
    # a fine checkerboard tile must average to grey, not alias to stripes
    img = np.zeros((1200, 1200, 3), np.uint8)
    img[::2, ::2] = 255
    img[1::2, 1::2] = 255
    quad = np.float32([[100, 100], [700, 100], [700, 940], [100, 940]])
    crop = rectify_tiles(img, quad[None], (30, 42))[0]
    assert abs(crop.mean() - 127.5) < 10 and crop.std() < 20


def test_canonical_quad_long_side_vertical_up_towards_photo_top():
    upright = np.float32([[10, 0], [40, 0], [40, 42], [10, 42]])
    for shift in range(4):
        for order in (1, -1):
            q = np.roll(upright[::order], shift, axis=0)
            assert np.allclose(canonical_quad(q), upright)
    # a tile lying on its side (long axis horizontal, tilted a little): up is the end higher up
    c, a = np.float32([100, 100]), np.deg2rad(80)
    r, up = np.float32([np.cos(a), np.sin(a)]), np.float32([np.sin(a), -np.cos(a)])
    quad = np.stack([c - r * 15 + up * 21, c + r * 15 + up * 21, c + r * 15 - up * 21,
                     c - r * 15 - up * 21])
    got = canonical_quad(quad[::-1])
    top_mid, bottom_mid = (got[0] + got[1]) / 2, (got[2] + got[3]) / 2
    assert top_mid[1] < bottom_mid[1]
    assert np.linalg.norm(got[1] - got[0]) < np.linalg.norm(got[2] - got[1])
    x, y = got[:, 0], got[:, 1]
    assert np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0, "clockwise"


def test_to_tensor_layout_and_normalisation():
    crops = np.zeros((2, 44, 32, 3), np.uint8)
    crops[..., 2] = 255
    x = to_tensor(crops, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    assert x.shape == (2, 3, 44, 32) and x.dtype == np.float32
    assert np.allclose(x[:, 0], -2.0) and np.allclose(x[:, 2], 2.0)


def test_to_tensor_gives_the_same_bits_as_the_normalisation_arithmetic():
    # every byte value in every channel, with a mean and spread per channel
    crops = np.stack([np.arange(256, dtype=np.uint8).reshape(16, 16)] * 3, -1)[None]
    crops = np.concatenate([crops, crops[:, ::-1]])
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    by_hand = (crops.astype(np.float32) * np.float32(1 / 255) - np.float32(mean)) / np.float32(std)
    by_hand = by_hand.transpose(0, 3, 1, 2)
    x = to_tensor(crops, mean, std)
    assert x.shape == by_hand.shape and x.flags.c_contiguous
    assert x.tobytes() == np.ascontiguousarray(by_hand).tobytes()
    # float crops (an augmentation's) go through the same formula
    assert np.array_equal(to_tensor(crops.astype(np.float32), mean, std), x)


def test_each_crop_is_the_warp_of_its_own_quad():
    """Warping into one preallocated array gives each tile exactly its own warp."""
    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    img = cv2.GaussianBlur(img, (5, 5), 0)
    w, h = 32, 44
    centres = rng.uniform([40, 40], [360, 260], (12, 2)).astype(np.float32)
    angles = rng.uniform(-0.5, 0.5, 12)
    quads = []
    for (cx, cy), a in zip(centres, angles, strict=True):
        u, r = np.float32([np.sin(a), -np.cos(a)]), np.float32([np.cos(a), np.sin(a)])
        c = np.float32([cx, cy])
        quads.append([c + u * 25 - r * 17, c + u * 25 + r * 17, c - u * 25 + r * 17,
                      c - u * 25 - r * 17])
    quads = np.float32(quads)
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]]) - 0.5
    crops = rectify_tiles(img, quads, (w, h))
    for quad, crop in zip(quads, crops, strict=True):
        alone = cv2.warpPerspective(img, cv2.getPerspectiveTransform(quad, dst), (w, h),
                                    flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        assert np.array_equal(crop, alone)
