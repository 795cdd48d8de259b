"""Train the tile detector and export it to ONNX with its JSON sidecar.

    python -m training.detector.train --minutes 30 --out models/

Trains on augmented crops of the real `train/` photos (never `valid/`) mixed with rendered
scenes from `training.render` when that module exists. Deterministic given `--seed` and
`--steps` (with `--minutes` the step count depends on the machine's speed, so the number of
steps taken is logged and written to the sidecar).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch

from training.detector.data import STRIDE, augment, make_targets, real_scenes
from training.detector.net import ExportWrapper, TileNet

MEAN = (0.45, 0.45, 0.45)
STD = (0.25, 0.25, 0.25)


class Progress:
    """A plain-text progress bar on one line (carriage returns on a terminal, lines in a log)."""

    def __init__(self, total_s: float | None, total_steps: int | None):
        self.total_s, self.total_steps = total_s, total_steps
        self.start = time.time()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def update(self, step: int, text: str, force: bool = False):
        now = time.time()
        if not force and now - self.last < (0.5 if self.tty else 15):
            return
        self.last = now
        elapsed = now - self.start
        if self.total_steps:
            frac = step / self.total_steps
        else:
            frac = elapsed / self.total_s
        frac = min(max(frac, 0.0), 1.0)
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        line = f"detector [{bar}] {100 * frac:5.1f}% step {step} {elapsed / 60:5.1f} min {text}"
        if self.tty:
            sys.stderr.write("\r" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def focal_loss(logits, heat, valid):
    pred = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 0.999).float()
    neg = (1 - pos) * valid
    pos_loss = -torch.log(pred) * (1 - pred) ** 2 * pos
    neg_loss = -torch.log(1 - pred) * pred**2 * (1 - heat) ** 4 * neg
    n = pos.sum().clamp(min=1.0)
    return (pos_loss.sum() + neg_loss.sum()) / n


def losses(out, heat, reg, reg_w, valid):
    l_heat = focal_loss(out[:, :1], heat, valid)
    w_off, w_geo = reg_w[:, 0:1], reg_w[:, 1:2]
    d = (out[:, 1:] - reg).abs()
    l_off = (d[:, 0:2] * w_off).sum() / w_off.sum().clamp(min=1.0)
    n_geo = w_geo.sum().clamp(min=1.0)
    l_size = (d[:, 2:4] * w_geo).sum() / n_geo
    l_ang = 2.0 * (d[:, 4:6] * w_geo).sum() / n_geo
    return l_heat, l_off, l_size, l_ang


class SampleSource(torch.utils.data.IterableDataset):
    """Endless stream of (image tensor, targets) built in a worker process."""

    def __init__(self, seed: int, size: int, synth_share: float, editions: float = 0.0,
                 depth: float = 0.0):
        self.seed, self.size, self.synth_share = seed, size, synth_share
        self.editions, self.depth = editions, depth

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker = info.id if info else 0
        rng = np.random.default_rng([self.seed, worker])
        cv2_threads()
        scenes = real_scenes("train")
        render = synth_renderer(self.editions, self.depth) if self.synth_share > 0 else None
        pool: list = []  # rendered scenes, reused with fresh augmentation (rendering is slow)
        while True:
            if render is not None and rng.random() < self.synth_share:
                if len(pool) < 24 or rng.random() < 0.15:
                    scene = render(rng)
                    if len(pool) < 400:
                        pool.append(scene)
                    else:
                        pool[rng.integers(len(pool))] = scene
                else:
                    scene = pool[rng.integers(len(pool))]
            else:
                scene = scenes[rng.integers(len(scenes))]
            crop, targets, ignores = augment(scene, rng, self.size, max_long=min(190.0, 0.75 * self.size))
            heat, reg, reg_w, valid = make_targets(targets, ignores, self.size)
            yield (to_input(crop), heat, reg, reg_w, valid)


def cv2_threads():
    import cv2

    cv2.setNumThreads(1)


def synth_renderer(editions: float = 0.0, depth: float = 0.0):
    """A function rng -> Scene from the shared renderer, or None when it is not there; a
    share `depth` of the scenes are stands with depth (`training.render3d`: the visible part
    of each tile whose number shows), of the rest a share `editions` in other editions and
    scenes (`training.editions`)."""
    try:
        from training import render as render_module
    except Exception as error:  # noqa: BLE001 - the renderer is optional
        print(f"(no synthetic scenes: {error})", file=sys.stderr)
        return None
    from training.detector.data import Scene

    def make(rng):
        ignore = []
        if depth and rng.random() < depth:
            from training.render3d.scene import render_depth_scene

            scene = render_depth_scene(rng)
            return Scene(scene.image, [t.train_quad for t in scene.tiles if _labelled(t)],
                         [t.visible for t in scene.tiles if not _labelled(t)])
        if editions and rng.random() < editions:
            from training.editions import render_edition_scene

            image, tiles, ignored = render_edition_scene(rng)
            ignore = [np.asarray(q, np.float32).reshape(-1, 2) for q in ignored]
        else:
            image, tiles = render_module.render_scene(rng)
        h, w = image.shape[:2]
        frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        polygons = []
        for _, quad in tiles:
            quad = np.asarray(quad, np.float32).reshape(4, 2)
            hull = cv2.convexHull(quad).reshape(-1, 2)
            area = cv2.contourArea(hull)
            inside, visible = cv2.intersectConvexConvex(hull, frame)
            if area <= 0 or inside <= 0 or visible is None:
                continue
            if inside >= 0.999 * area:
                polygons.append(quad)
            elif inside >= 0.45 * area:  # the real labels outline only the visible part
                polygons.append(visible.reshape(-1, 2).astype(np.float32))
            else:
                ignore.append(visible.reshape(-1, 2).astype(np.float32))
        return Scene(image, polygons, ignore)

    return make


def _labelled(tile) -> bool:
    from training.render3d.scene import _labelled as labelled

    return labelled(tile)


TRAIN_ONLY = ("all", "box")


def train_only_box(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Freeze all but the box outputs (offset, sizes, angle: rows 1-6 of the head's last 1x1
    conv), so the heat map, and with it what the detector finds and how surely, stays as it
    was; batch norms keep their statistics. Returns the parameters left to train."""
    from training.onnx_init import freeze_batch_norm

    for parameter in model.parameters():
        parameter.requires_grad_(False)
    last = model.net.head[-1]
    keep = torch.ones(last.weight.shape[0], dtype=last.weight.dtype)
    keep[0] = 0.0  # row 0 is the heat map's
    for parameter in (last.weight, last.bias):
        parameter.requires_grad_(True)
        mask = keep.view((-1,) + (1,) * (parameter.dim() - 1))
        parameter.register_hook(lambda grad, mask=mask: grad * mask)
    freeze_batch_norm(model)
    return [last.weight, last.bias]


def to_input(crop_bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 (H,W,3) -> float32 (3,H,W) 0..255 (the ONNX graph normalises)."""
    return np.ascontiguousarray(crop_bgr.transpose(2, 0, 1)).astype(np.float32)


class Normalised(torch.nn.Module):
    """net(x) with x float 0..255 BGR: normalisation is part of the model."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.tensor(MEAN).view(1, 3, 1, 1) * 255)
        self.register_buffer("std", torch.tensor(STD).view(1, 3, 1, 1) * 255)

    def forward(self, x):
        return self.net((x - self.mean) / self.std)


def export(model: Normalised, out_dir: Path, meta: dict):
    out_dir.mkdir(parents=True, exist_ok=True)
    model = model.eval().to(memory_format=torch.contiguous_format)
    wrapper = ExportWrapper(model)
    path = out_dir / "detector.onnx"
    tmp = out_dir / "detector.onnx.tmp"
    torch.onnx.export(
        wrapper, torch.zeros(1, 3, 384, 512), str(tmp), opset_version=17,
        input_names=["image"], output_names=["maps"],
        dynamic_axes={"image": {2: "height", 3: "width"}, "maps": {2: "h4", 3: "w4"}},
        dynamo=False,
    )
    tmp.replace(path)
    sidecar = {
        "model": "detector.onnx",
        "kind": "centernet-oriented-tiles",
        "input": {
            "format": "float32 NCHW, BGR, 0..255 (normalised inside the graph)",
            "long_side": meta.get("long_side", 512),
            "multiple": 32,
            "pad_value": [round(m * 255) for m in MEAN],
            "mean": list(MEAN),
            "std": list(STD),
        },
        "output": {
            "name": "maps",
            "channels": ["heat", "dx", "dy", "log_long", "log_short", "cos2phi", "sin2phi"],
            "stride": STRIDE,
            "cell_centre": 0.5,
        },
        "thresholds": {"score": meta.get("score", 0.4), "nms_centre": 0.8, "max_tiles": 400},
        "refine_angle": False,
        "labels": ["tile"],
        "training": {k: v for k, v in meta.items() if k not in ("long_side", "score")},
    }
    (out_dir / "detector.json").write_text(json.dumps(sidecar, indent=2) + "\n")
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="time budget for training")
    parser.add_argument("--steps", type=int, default=0, help="fixed step count (overrides --minutes)")
    parser.add_argument("--out", type=Path, default=Path("models"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--size", type=int, default=256, help="training crop side")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--synth", type=float, default=0.35, help="share of rendered scenes")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--init", type=Path, default=None, help="start from a checkpoint (.pt)")
    parser.add_argument("--checkpoint", type=Path, default=None, help="where to save the .pt")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--editions", type=float, default=0.0,
                        help="share of rendered scenes in other editions (training.editions)")
    parser.add_argument("--depth", type=float, default=0.0,
                        help="share of rendered scenes that are stands with depth (training.render3d)")
    parser.add_argument("--init-onnx", type=Path, default=None,
                        help="start from this detector.onnx (fine-tuning; batch norms frozen)")
    parser.add_argument("--train-only", choices=TRAIN_ONLY, default="all",
                        help="box: train only the box outputs (offset, size, angle), backbone "
                             "and heat map frozen (a fine-tune's boxes move, its finds do not)")
    args = parser.parse_args(argv)
    if args.train_only != "all" and not (args.init_onnx or args.init):
        parser.error("--train-only box needs a detector to start from (--init-onnx or --init)")

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    model = Normalised(TileNet())
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location="cpu"))
    if args.init_onnx:
        from training.onnx_init import load_onnx_weights

        load_onnx_weights(ExportWrapper(model), args.init_onnx,
                          torch.rand(1, 3, 128, 160) * 255)
        print(f"detector: started from {args.init_onnx}", file=sys.stderr)
    model = model.to(memory_format=torch.channels_last)  # ~15 % faster convs on this CPU
    params = sum(p.numel() for p in model.parameters())
    print(f"detector: {params} parameters, crops {args.size}px, batch {args.batch}", file=sys.stderr)
    source = SampleSource(args.seed, args.size, args.synth, args.editions, args.depth)
    loader = torch.utils.data.DataLoader(
        source, batch_size=args.batch, num_workers=args.workers,
        persistent_workers=args.workers > 0, prefetch_factor=4 if args.workers else None,
    )
    if args.train_only == "box":
        trained = train_only_box(model)
        print("detector: training only the box outputs "
              f"({sum(p.numel() for p in trained)} weights, heat-map row masked)", file=sys.stderr)
        # no weight decay: decay would shrink the frozen heat-map row of the same tensor
        opt = torch.optim.AdamW(trained, lr=args.lr, weight_decay=0.0)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    budget_s = args.minutes * 60
    progress = Progress(None if args.steps else budget_s, args.steps or None)
    start = time.time()
    step = 0
    ema = None
    warmup = 100
    model.train()
    if args.init_onnx or args.train_only == "box":
        from training.onnx_init import freeze_batch_norm

        freeze_batch_norm(model)
    for batch in loader:
        elapsed = time.time() - start
        frac = step / args.steps if args.steps else elapsed / budget_s
        if frac >= 1.0:
            break
        lr = args.lr * min(1.0, (step + 1) / warmup) * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * frac)))
        for group in opt.param_groups:
            group["lr"] = lr
        x, heat, reg, reg_w, valid = batch
        x = x.contiguous(memory_format=torch.channels_last)
        out = model(x)
        l_heat, l_off, l_size, l_ang = losses(out, heat, reg, reg_w, valid)
        loss = l_heat + l_off + l_size + l_ang
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        parts = torch.stack([loss, l_heat, l_off, l_size, l_ang]).detach().numpy()
        ema = parts if ema is None else 0.97 * ema + 0.03 * parts
        step += 1
        progress.update(step, "loss {:.3f} (heat {:.3f} off {:.3f} size {:.3f} ang {:.3f}) lr {:.1e}".format(*ema, lr))
    progress.update(step, "loss {:.3f} done".format(ema[0] if ema is not None else float("nan")), force=True)
    if progress.tty:
        sys.stderr.write("\n")
    minutes = (time.time() - start) / 60
    if args.checkpoint:
        args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), args.checkpoint)
    meta = {"steps": step, "minutes": round(minutes, 1), "seed": args.seed, "batch": args.batch,
            "crop": args.size, "synthetic_share": args.synth, "parameters": params,
            "editions_share": args.editions, "depth_share": args.depth, "lr": args.lr,
            "init": str(args.init_onnx) if args.init_onnx else None,
            "train_only": args.train_only,
            "data": "rummikub-nvypk train/ (Roboflow Universe, CC BY 4.0) + training.render scenes"}
    path = export(model, args.out, meta)
    print(f"detector: {step} steps in {minutes:.1f} min -> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
