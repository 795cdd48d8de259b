"""Train the tile classifier and export `classifier.onnx` + `classifier.json`.

    python -m training.classifier.train --minutes 10 --out models/ [--seed 0] [--threads 2]

Data: crops of the real train/ photos cut at their label polygons (several jittered copies
per tile, to mimic detector error) + crops of rendered scenes (`training.render`). Valid/
is never read here. Augmentation per batch: white balance / brightness / contrast, blur,
noise, an occluded edge band; every crop is shown upright or turned 180 degrees with the
matching target (106 outputs = 53 classes x upright/turned).

The learning-rate schedule (warm-up, cosine) runs over the time budget; data, init and
batches are deterministic given `--seed`, so two runs differ only in how many steps fit
(pass `--steps N` for an exactly repeatable run).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from training.classifier import data
from training.classifier.net import ARCHS, TileNet
from vision.recognition.labels import TILE_CLASSES
from vision.recognition.rectify import DEFAULT_MEAN, DEFAULT_STD

SIZE = (32, 44)  # crop (width, height)


class Progress:
    """A plain-text progress bar line (no tqdm): prints at most every `every` seconds."""

    def __init__(self, total: int, label: str, every: float = 10.0):
        self.total, self.label, self.every = total, label, every
        self.start = time.perf_counter()
        self.last = -1e9

    def update(self, done: int, extra: str = "", force: bool = False):
        now = time.perf_counter()
        if not force and now - self.last < self.every:
            return
        self.last = now
        frac = min(1.0, done / max(self.total, 1))
        el = now - self.start
        eta = el / frac - el if frac > 0 else 0
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        print(f"{self.label} [{bar}] {100 * frac:5.1f}% {done}/{self.total} "
              f"{el / 60:4.1f}m eta {eta / 60:4.1f}m {extra}", flush=True)


def augment(x: torch.Tensor, gen: torch.Generator, squash: float = 0.0) -> torch.Tensor:
    """x (N, H, W, 3) uint8 -> (N, 3, H, W) float32 normalised, photometric augmentation.

    `squash`: the share of crops shrunk along one axis to 0.3-0.75 and stretched back, as a
    tile lying flat before a low phone (or at a lower camera's far edge) keeps only that
    share of its pixels along the view; 0 draws nothing, so older runs repeat exactly."""
    n, h, w, _ = x.shape
    x = x.permute(0, 3, 1, 2).float()

    def u(lo, hi, *shape):
        return torch.rand(*shape, generator=gen) * (hi - lo) + lo

    if squash:
        for i in torch.nonzero(torch.rand(n, generator=gen) < squash).flatten().tolist():
            f = float(u(0.3, 0.75, 1))
            size = ((max(4, round(h * f)), w) if float(u(0, 1, 1)) < 0.5
                    else (h, max(4, round(w * f))))
            small = F.interpolate(x[i:i + 1], size=size, mode="area")
            x[i:i + 1] = F.interpolate(small, size=(h, w), mode="bilinear", align_corners=False)

    gain = u(0.88, 1.12, n, 3, 1, 1) * u(0.6, 1.3, n, 1, 1, 1)  # white balance, exposure
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    contrast = u(0.7, 1.25, n, 1, 1, 1)
    x = ((x - mean) * contrast + mean) * gain + u(-20, 20, n, 1, 1, 1)
    # blur a third of the batch
    blur = torch.rand(n, generator=gen) < 0.35
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0])
        k = (k[:, None] * k[None, :]) / 16
        kb = k.expand(3, 1, 3, 3).contiguous()
        xb = F.conv2d(F.pad(x[blur], (1, 1, 1, 1), mode="replicate"), kb, groups=3)
        x[blur] = xb
    # occlude an edge band (tile cut off by the photo edge or a neighbour)
    occ = torch.nonzero(torch.rand(n, generator=gen) < 0.08).flatten().tolist()
    for i in occ:
        side = int(torch.randint(4, (1,), generator=gen))
        frac = float(u(0.08, 0.3, 1))
        color = u(0, 255, 3, 1, 1)
        if side == 0:
            x[i, :, : int(h * frac)] = color
        elif side == 1:
            x[i, :, h - int(h * frac):] = color
        elif side == 2:
            x[i, :, :, : int(w * frac)] = color
        else:
            x[i, :, :, w - int(w * frac):] = color
    x = x + torch.randn(x.shape, generator=gen) * u(0, 8, n, 1, 1, 1)
    x = x.clamp(0, 255) / 255.0
    m = torch.tensor(DEFAULT_MEAN).view(1, 3, 1, 1)
    s = torch.tensor(DEFAULT_STD).view(1, 3, 1, 1)
    return (x - m) / s


def tile_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over the batch: cross-entropy (label smoothing 0.05) for a tile's crop; for a
    crop of no tile (target -1), cross-entropy against the flat target, every output as
    likely, so that its best probability stays low (training.classifier.not_tiles)."""
    tile = targets >= 0
    loss = F.cross_entropy(logits[tile], targets[tile], label_smoothing=0.05, reduction="sum")
    if not bool(tile.all()):
        loss = loss - F.log_softmax(logits[~tile], 1).mean(1).sum()
    return loss / len(targets)


def build_data(args, deadline_data: float):
    real_x, real_y = data.real_crops("train", SIZE, copies=args.real_copies, seed=args.seed,
                                     strength=args.jitter, heavy=args.heavy,
                                     heavy_max=args.heavy_max)
    n_syn = args.synthetic
    syn_x, syn_y = data.synthetic_crops(n_syn, SIZE, seed=args.seed + 1, deadline=deadline_data,
                                        strength=args.jitter, heavy=args.heavy,
                                        heavy_max=args.heavy_max, editions=args.editions,
                                        depth=args.depth, jokers=args.jokers,
                                        joker_families=args.joker_families)
    if args.not_tiles:
        from training.classifier.not_tiles import not_tile_crops
        from vision.recognition.detect import TileDetector

        neg_x = not_tile_crops(SIZE, args.seed + 3, TileDetector.load(args.detector))
        # target -1: no tile (a flat target over every output, below)
        syn_x = np.concatenate([syn_x, neg_x])
        syn_y = np.concatenate([syn_y, np.full(len(neg_x), -1, np.int64)])
    flat = np.zeros(len(syn_x), bool)
    if args.flat_tiles:
        from training.classifier.flat_tiles import flat_tile_crops

        flat_x, flat_y = flat_tile_crops(args.flat_scenes, SIZE, args.seed + 4,
                                         strength=args.jitter, heavy=args.heavy,
                                         heavy_max=args.heavy_max,
                                         stretch=args.flat_stretched)
        syn_x = np.concatenate([syn_x, flat_x])
        syn_y = np.concatenate([syn_y, flat_y])
        flat = np.concatenate([flat, np.ones(len(flat_x), bool)])
    return real_x, real_y, syn_x, syn_y, flat


class WithEmbedding(torch.nn.Module):
    """What goes into the ONNX file: the logits and, as a second output named "embedding",
    the head's penultimate features (after the ReLU of fc128), one row per crop, for the
    calibration's nearest-prototype head."""

    def __init__(self, net: TileNet):
        super().__init__()
        self.net = net

    def forward(self, x):
        head = self.net.head  # Flatten, Dropout, Linear, ReLU, Dropout, Linear
        embedding = head[3](head[2](head[1](head[0](self.net.features(x)))))
        return head[5](head[4](embedding)), embedding


def export(model: TileNet, out_dir: Path, meta: dict) -> Path:
    model.eval()
    path = out_dir / "classifier.onnx"
    dummy = torch.zeros(2, 3, SIZE[1], SIZE[0])
    kwargs = dict(input_names=["crops"], output_names=["logits", "embedding"], opset_version=17,
                  dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}, "embedding": {0: "n"}})
    try:
        torch.onnx.export(WithEmbedding(model), (dummy,), str(path), dynamo=False, **kwargs)
    except TypeError:
        torch.onnx.export(WithEmbedding(model), (dummy,), str(path), **kwargs)
    # keep weights inside the one file
    import onnx

    proto = onnx.load(str(path), load_external_data=True)
    onnx.save(proto, str(path), save_as_external_data=False)
    stray = out_dir / "classifier.onnx.data"
    if stray.exists():
        stray.unlink()
    sidecar = {
        "labels": list(TILE_CLASSES),
        "input": {"name": "crops", "width": SIZE[0], "height": SIZE[1], "channels": "BGR",
                  "layout": "NCHW", "scale": 1 / 255, "mean": list(DEFAULT_MEAN),
                  "std": list(DEFAULT_STD)},
        "output": {"name": "logits", "kind": "logits", "size": 2 * len(TILE_CLASSES)},
        "orientation": {
            "scheme": "joint",
            "note": "output k: label k % 53; k >= 53 means the crop shows the tile turned 180 "
                    "degrees (its upright top-left is the quad's q2)",
        },
        "uncertain_below": 0.6,
        "embedding_output": "embedding",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        **meta,
    }
    (out_dir / "classifier.json").write_text(json.dumps(sidecar, indent=1) + "\n")
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.classifier.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="total time budget")
    p.add_argument("--out", type=Path, default=Path("models"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=0, help="fixed number of steps (0: fit budget)")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--real-copies", type=int, default=12)
    p.add_argument("--synthetic", type=int, default=30000, help="synthetic crops (at most)")
    p.add_argument("--data-share", type=float, default=0.25,
                   help="at most this share of the budget for making synthetic crops")
    p.add_argument("--arch", choices=tuple(ARCHS), default="base", help="network size")
    p.add_argument("--jitter", type=float, default=1.0,
                   help="strength of the quad jitter that mimics detector error")
    p.add_argument("--heavy", type=float, default=0.5,
                   help="share of crops with a heavy jitter (strength 1.5..--heavy-max)")
    p.add_argument("--heavy-max", type=float, default=4.0)
    p.add_argument("--depth", type=float, default=0.0,
                   help="share of synthetic scenes that are stands with depth (training.render3d)")
    p.add_argument("--jokers", type=float, default=0.0,
                   help="share of synthetic scenes of sets holding jokers with random faces "
                        "(training.joker_faces)")
    p.add_argument("--joker-families", default="",
                   help="the joker pictures' families to draw, comma-separated (default: "
                        "all of training.joker_faces.FAMILIES)")
    p.add_argument("--squash", type=float, default=0.0,
                   help="share of crops shrunk along one axis and stretched back (a low view)")
    p.add_argument("--not-tiles", type=float, default=0.0,
                   help="share of each batch that is crops of no tile, with a flat target "
                        "(training.classifier.not_tiles)")
    p.add_argument("--flat-tiles", type=float, default=0.0,
                   help="share of each batch that is tiles lying flat in extra depth renders "
                        "(training.classifier.flat_tiles), taken from the rendered tiles' share")
    p.add_argument("--flat-scenes", type=int, default=600,
                   help="depth renders --flat-tiles cuts its tiles lying flat from")
    p.add_argument("--flat-stretched", action="store_true",
                   help="cut --flat-tiles' crops from the renders stretched upright as the "
                        "squashed view stretches a photo (vision.recognition.squashed_view)")
    p.add_argument("--detector", type=Path, default=Path("models"),
                   help="the detector whose finds on no tile --not-tiles collects")
    p.add_argument("--editions", type=float, default=0.0,
                   help="share of synthetic scenes in other editions (training.editions)")
    p.add_argument("--init-onnx", type=Path, default=None,
                   help="start from this classifier.onnx (fine-tuning; batch norms frozen)")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    p.add_argument("--real-share", type=float, default=0.5,
                   help="share of real crops in each batch")
    args = p.parse_args(argv)
    if not 0 <= args.not_tiles < 1 - args.real_share or not 0 <= args.squash <= 1:
        p.error("--not-tiles must lie in 0 .. 1 - --real-share (the rest are rendered tiles) "
                "and --squash in 0 .. 1")
    if not 0 <= args.flat_tiles < 1 - args.real_share - args.not_tiles:
        p.error("--flat-tiles must lie in 0 .. 1 - --real-share - --not-tiles")
    if args.flat_stretched and not args.flat_tiles:
        p.error("--flat-stretched cuts --flat-tiles' crops: give --flat-tiles too")
    from training.joker_faces import FAMILIES

    args.joker_families = tuple(f for f in args.joker_families.split(",") if f) or None
    if args.joker_families and not set(args.joker_families) <= set(FAMILIES):
        p.error(f"--joker-families: some of {', '.join(FAMILIES)}, comma-separated, not "
                f"{','.join(args.joker_families)}")

    t_start = time.perf_counter()
    budget = args.minutes * 60
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    real_x, real_y, syn_x, syn_y, flat = build_data(args, t_start + budget * args.data_share)
    x = np.concatenate([real_x, syn_x])
    y = np.concatenate([real_y, syn_y])
    # each kind of crop its share of a batch (per sample weight)
    from training.classifier.flat_tiles import batch_weights

    w = batch_weights(len(real_x), syn_y, flat, args.real_share, args.not_tiles,
                      args.flat_tiles)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    print(f"data: {len(real_x)} real + {len(syn_x)} synthetic crops "
          f"({(time.perf_counter() - t_start) / 60:.1f} min)", flush=True)

    model = TileNet(2 * len(TILE_CLASSES), args.arch, (SIZE[1], SIZE[0]))
    if args.init_onnx:
        from training.onnx_init import load_onnx_weights

        load_onnx_weights(model, args.init_onnx, torch.rand(4, 3, SIZE[1], SIZE[0]) * 4 - 2)
        print(f"started from {args.init_onnx}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    gen = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng(args.seed + 2)
    export_reserve = 20.0
    train_left = budget - (time.perf_counter() - t_start) - export_reserve
    steps = args.steps
    step, seen_correct, seen = 0, 0, 0
    loss_avg = None
    t_train = time.perf_counter()
    bar = Progress(steps if steps else 1000, "classifier")

    def progress() -> float:  # share of training done: by steps, or by time
        if steps:
            return step / steps
        return (time.perf_counter() - t_train) / max(train_left, 1.0)

    while progress() < 1.0:
        frac = progress()
        warm = 0.03
        lr = args.lr * ((frac + 1e-3) / warm if frac < warm else
                     0.5 * (1 + math.cos(math.pi * (frac - warm) / (1 - warm))))
        for g in opt.param_groups:
            g["lr"] = lr
        idx = rng.choice(len(x), args.batch, p=w)
        xb = augment(xt[idx], gen, args.squash)
        yb = yt[idx]
        model.train()
        if args.init_onnx:
            from training.onnx_init import freeze_batch_norm

            freeze_batch_norm(model)
        logits = model(xb)
        loss = tile_loss(logits, yb)
        tile = yb >= 0
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        lv = float(loss.detach())
        loss_avg = lv if loss_avg is None else 0.98 * loss_avg + 0.02 * lv
        seen_correct += int((logits[tile].argmax(1) == yb[tile]).sum())
        seen += int(tile.sum())
        done = progress()
        bar.update(step if steps else int(1000 * min(done, 1.0)),
                   f"step {step} loss {loss_avg:.3f} acc {seen_correct / max(seen, 1):.3f} "
                   f"lr {lr:.1e}", force=done >= 1.0)
        if step % 200 == 0:
            seen_correct = seen = 0
    steps = step
    train_s = time.perf_counter() - t_start
    path = export(model, args.out, {
        "trained": {"steps": steps, "batch": args.batch, "seed": args.seed,
                    "init": str(args.init_onnx) if args.init_onnx else None,
                    "editions_share": args.editions, "depth_share": args.depth,
                    "jokers_share": args.jokers, "not_tiles_share": args.not_tiles,
                    "joker_families": list(args.joker_families or ()),
                    "squash_share": args.squash,
                    "not_tile_crops": int((syn_y < 0).sum()),
                    "flat_tiles_share": args.flat_tiles,
                    "flat_tile_crops": int(flat.sum()),
                    "flat_stretched": args.flat_stretched,
                    "real_share": args.real_share,
                    "lr": args.lr,
                    "real_crops": int(len(real_x)),
                    "synthetic_crops": int(((syn_y >= 0) & ~flat).sum()),
                    "minutes": round(train_s / 60, 2), "threads": args.threads,
                    "command": "python -m training.classifier.train " + " ".join(
                        argv if argv is not None else sys.argv[1:])},
        "architecture": f"TileNet-{args.arch}: conv blocks {ARCHS[args.arch][0]} (3x3, "
                        "BN, ReLU; stride 2, [stride 2 | pool], pool), fc128, fc106 "
                        f"({sum(p.numel() for p in model.parameters())} parameters)",
    })
    print(f"exported {path} ({path.stat().st_size / 1e6:.2f} MB) after "
          f"{(time.perf_counter() - t_start) / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
