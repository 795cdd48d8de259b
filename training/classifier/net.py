"""The tile classifier network: a small CNN on a (3, 44, 32) upright crop -> 106 logits.

Output `k` = class `k % 53` (in `TILE_CLASSES` order) seen upright (`k < 53`) or turned
180 degrees (`k >= 53`). Plain convolutions with batch norm (folded into the convs at
export), max pooling, and a fully connected head over the 5x4 map so that *where* the ink
sits on the face (number above, logo below) stays visible to the head: that is what
tells a 6 from an upside-down 9.
"""

from __future__ import annotations

import torch
from torch import nn


def _block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


ARCHS = {
    # name: channels of the four conv blocks, whether block 2 has stride 2 (then no pool)
    "base": ((16, 32, 64, 96), False),
    "lite": ((16, 24, 48, 64), False),
    "fast": ((16, 32, 64, 96), True),
}


class TileNet(nn.Module):
    def __init__(self, n_out: int = 106, arch: str = "base", in_hw: tuple[int, int] = (44, 32)):
        super().__init__()
        (c1, c2, c3, c4), early = ARCHS[arch]
        self.features = nn.Sequential(
            _block(3, c1, 2),  # 22x16
            _block(c1, c2, 2) if early else _block(c1, c2),
            nn.Identity() if early else nn.MaxPool2d(2),  # 11x8
            _block(c2, c3),
            nn.MaxPool2d(2),  # 5x4
            _block(c3, c4),
        )
        with torch.no_grad():
            n_flat = self.features(torch.zeros(1, 3, *in_hw)).numel()
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(n_flat, 128),
                                  nn.ReLU(inplace=True), nn.Dropout(0.1), nn.Linear(128, n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))
