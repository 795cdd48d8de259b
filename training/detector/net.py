"""A small fully-convolutional detector (CenterNet-style, output stride 4).

Backbone: plain 3x3 conv-BN-ReLU pairs down to stride 32 (16-112 channels); a light FPN brings stride 32/16/8 features back to stride 4, where one head predicts per
cell: centre heatmap logit (1), sub-cell offset (2), log long/short side in cells (2),
long-axis angle as (cos 2phi, sin 2phi) (2). ONNX output: (N, 7, H/4, W/4), the heatmap
already passed through a sigmoid.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

OUT_CHANNELS = 7  # heat, dx, dy, log_long, log_short, cos2phi, sin2phi


def conv_bn(cin, cout, k=3, s=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class TileNet(nn.Module):
    """Plain 3x3 convs (depthwise convs train ~6x slower with PyTorch on this CPU)."""

    def __init__(self, width=(16, 24, 48, 80, 112), head=32):
        super().__init__()
        c1, c2, c3, c4, c5 = width
        self.s4 = nn.Sequential(conv_bn(3, c1, 3, 2), conv_bn(c1, c2, 3, 2), conv_bn(c2, c2))  # /4
        self.s8 = nn.Sequential(conv_bn(c2, c3, 3, 2), conv_bn(c3, c3))  # /8
        self.s16 = nn.Sequential(conv_bn(c3, c4, 3, 2), conv_bn(c4, c4))  # /16
        self.s32 = nn.Sequential(conv_bn(c4, c5, 3, 2), conv_bn(c5, c5))  # /32
        self.lat32 = conv_bn(c5, head, 1)
        self.lat16 = conv_bn(c4, head, 1)
        self.lat8 = conv_bn(c3, head, 1)
        self.lat4 = conv_bn(c2, head, 1)
        self.smooth8 = conv_bn(head, head, 3)
        self.head = nn.Sequential(conv_bn(head, head, 3), nn.Conv2d(head, OUT_CHANNELS, 1))
        nn.init.constant_(self.head[-1].bias, 0.0)
        with torch.no_grad():
            self.head[-1].bias[0] = -4.6  # prior 1 % for the heatmap

    def forward(self, x):
        f4 = self.s4(x)
        f8 = self.s8(f4)
        f16 = self.s16(f8)
        f32 = self.s32(f16)
        p = self.lat32(f32)
        p = self.lat16(f16) + F.interpolate(p, size=f16.shape[-2:], mode="nearest")
        p = self.lat8(f8) + F.interpolate(p, size=f8.shape[-2:], mode="nearest")
        p = self.smooth8(p)
        p = self.lat4(f4) + F.interpolate(p, size=f4.shape[-2:], mode="nearest")
        return self.head(p)  # raw: heat logit etc.


class ExportWrapper(nn.Module):
    """What goes into the ONNX file: uint8-free float input (N,3,H,W) already normalised,
    output with the heatmap squashed by a sigmoid."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        y = self.net(x)
        return torch.cat([torch.sigmoid(y[:, :1]), y[:, 1:]], dim=1)
