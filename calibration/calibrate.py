"""One photo of tiles laid as a layout says -> a `Profile` of that edition.

`calibrate(image_bgr, layout, reader)`:

1. finds the tiles with the reader's detector and sorts them into rows (top row first,
   left to right, along the tiles' own axis, so a photo taken at an angle still works);
2. checks the rows against the layout: a row with too few or too many tiles, a tile whose
   colour is another row's, a tile that reads as another number than the layout puts
   there (when the network and the other rows' tiles of that number agree on it), a
   joker where a number should be -- every problem found, in one `CalibrationError`;
3. names the colour slots: the least colourful ink is black; of the others, by hue, red
   comes first, then the fourth colour (orange/yellow, or green: then the slot is "G"),
   then blue or teal;
4. keeps each tile's white-balanced crop embedding, upright and turned round, and cut a
   little off the tile (`JITTERS`), as its prototypes, and measures how sure it all is.

`calibrate_tiles(image_bgr, quads, codes, reader)` does 2-4 for tiles already found and
known: a reading corrected by hand.
"""

from __future__ import annotations

import time

import numpy as np

from calibration.features import body_colors, chroma_hue, colour_distance2, ink_features
from calibration.head import PROTO_TEMPERATURE
from calibration.layouts import Layout
from calibration.profile import Profile, SlotColor
from vision.recognition.geometry import tile_frames
from vision.recognition.labels import COLOR_WORDS, TILE_CLASSES
from vision.recognition.rectify import canonical_quad

# Lab hue (degrees) where a fourth colour counts as green rather than orange or yellow
# (yellow inks sit near 80-100, green near 130-170, teal-blue beyond 195).
GREEN_HUES = (110.0, 190.0)
# Ink colours a slot has when the calibration photo shows none of it (typical prints).
DEFAULT_INK = {"K": (25.0, 0.0, 0.0), "R": (48.0, 45.0, 25.0), "B": (45.0, 5.0, -40.0),
               "O": (65.0, 25.0, 55.0), "G": (50.0, -35.0, 20.0)}
WEAK_FIND = 0.7  # a find scoring under this share of the median may be no tile
NUMBER_CONFIDENT = 0.5  # network probability above which a contradicting number counts
# Extra prototypes per tile: its quad shifted by (tile widths, tile heights) and scaled.
JITTERS = ((0.08, 0.0, 1.0), (-0.08, 0.0, 1.0), (0.0, 0.07, 1.0), (0.0, -0.07, 1.0))


class CalibrationError(ValueError):
    """The photo's tiles do not match the layout (the message names the rows and tiles)."""


def find_rows(quads: np.ndarray) -> list[list[int]]:
    """Detections in rows: top row first, each left to right.

    A row is a chain of neighbours: each tile's right neighbour lies along its own right
    axis, at most a tile's width apart, and chains that continue each other's line are
    joined. Each tile's own axes (not the photo's) keep a row whole when the photo is
    turned or taken at an angle, where rows fan out and no one "down" fits all of them.
    """
    n = len(quads)
    if n == 0:
        return []
    canon = np.stack([canonical_quad(q) for q in quads])
    centres, right, down, widths, heights = tile_frames(canon)
    nxt = np.full(n, -1)
    prev = np.full(n, -1)
    best = np.full(n, np.inf)
    for i in range(n):
        d = centres - centres[i]
        along, across = d @ right[i], d @ down[i]
        ok = (along > 0.5 * widths[i]) & (along < 2.2 * widths[i]) & (np.abs(across) < 0.45 * heights[i])
        for j in np.flatnonzero(ok)[np.argsort(along[ok])]:
            if along[j] < best[j]:  # j's nearest left neighbour wins
                if prev[j] >= 0:
                    nxt[prev[j]] = -1
                prev[j], nxt[i], best[j] = i, j, along[j]
                break
    chains = []
    for i in range(n):
        if prev[i] < 0:
            chain = [i]
            while nxt[chain[-1]] >= 0 and len(chain) <= n:
                chain.append(int(nxt[chain[-1]]))
            chains.append(chain)
    # Join a chain to the nearest one that starts further along its line (the line through
    # its last two tiles: under perspective a row's line and its tiles' axes part ways).
    joined = True
    while joined and len(chains) > 1:
        joined = False
        for a in chains:
            last = a[-1]
            ahead = right[last]
            if len(a) >= 2:
                step = centres[last] - centres[a[-2]]
                ahead = step / max(float(np.linalg.norm(step)), 1e-9)
            across_axis = np.array([-ahead[1], ahead[0]])
            options = []
            for b in chains:
                if b is a:
                    continue
                d = centres[b[0]] - centres[last]
                along, across = d @ ahead, d @ across_axis
                if along > 0 and abs(across) < 0.5 * heights[last]:
                    options.append((along, b))
            if options:
                b = min(options, key=lambda o: o[0])[1]
                a.extend(b)
                chains.remove(b)
                joined = True
                break
    axis_down = down.mean(axis=0)
    return sorted(chains, key=lambda c: float(np.mean(centres[c] @ axis_down)))


def _gap_hint(row: list[int], centres: np.ndarray) -> str:
    """Where a row has a gap wider than a tile: where a tile is missing, or unseen."""
    if len(row) < 3:
        return ""
    steps = np.linalg.norm(np.diff(centres[row], axis=0), axis=1)
    k = int(steps.argmax())
    return f"; a gap after tile {k + 1}" if steps[k] > 1.6 * np.median(steps) else ""


def _check_counts(rows: list[list[int]], layout: Layout, centres: np.ndarray | None = None
                  ) -> tuple[list[str], list[tuple[str, ...]]]:
    """Problems with the rows' tile counts, and the layout rows matched to the found rows."""
    want = list(layout.rows)
    if layout.jokers_free and all(c == "J" for c in want[-1]):
        if len(rows) == len(want) - 1:
            want = want[:-1]  # no joker row laid
        elif len(rows) == len(want) and 1 <= len(rows[-1]) <= 4:
            want[-1] = ("J",) * len(rows[-1])
    problems = []
    if len(rows) != len(want):
        counts = ", ".join(str(len(r)) for r in rows)
        problems.append(f"found {len(rows)} rows of tiles ({counts} tiles), the layout has "
                        f"{len(want)}: " + "; ".join(f"row {i + 1}: {layout.describe_row(i)}"
                                                    for i in range(len(layout.rows))))
        return problems, want
    for i, (row, codes) in enumerate(zip(rows, want, strict=True)):
        if len(row) != len(codes):
            what = layout.describe_row(i) if i < len(layout.rows) else " ".join(codes)
            hint = _gap_hint(row, centres) if centres is not None and len(row) < len(codes) else ""
            problems.append(f"row {i + 1} has {len(row)} tiles, the layout puts {len(codes)} "
                            f"there ({what}{hint})")
    return problems, want


def _assign_slots(rows_ink: list[np.ndarray], row_codes: list[tuple[str, ...]]):
    """Colour slot of each row ('?' rows by their ink), and problems found."""
    slots: list[str | None] = []
    for codes in row_codes:
        fixed = {c[0] for c in codes if c != "J" and c[0] != "?"}
        slots.append("O" if fixed & {"O", "G"} else (fixed.pop() if len(fixed) == 1 else None))
    problems = []
    free = [i for i, codes in enumerate(row_codes)
            if any(c.startswith("?") for c in codes)]
    left = [s for s in "KRBO" if s not in slots]
    if len(free) > len(left):
        problems.append(f"{len(free)} rows of one colour each, but only {len(left)} colours "
                        "are left for them")
        return slots, problems
    if free:
        lab = np.stack([np.nanmedian(rows_ink[i], axis=0) for i in free])
        chroma, hue = chroma_hue(lab)
        order = list(range(len(free)))
        if "K" in left:
            k = int(np.argmin(chroma))
            slots[free[k]] = "K"
            order.remove(k)
        # Red, then the fourth colour, then blue, going round the hue circle from magenta.
        coloured = [s for s in "ROB" if s in left]
        order.sort(key=lambda j: (hue[j] - 330.0) % 360.0)
        for j, slot in zip(order, coloured, strict=False):
            slots[free[j]] = slot
    return slots, problems


def _rows_for_layout(quads: np.ndarray, scores: np.ndarray, layout: Layout):
    """(quads, rows, layout rows) -- leaving out up to 3 finds that are lone or weak (a knot
    in the wood, a box's corner) when that is what makes the rows match the layout."""
    centres = quads.mean(axis=1)
    rows = find_rows(quads)
    problems, want = _check_counts(rows, layout, centres)
    if not problems:
        return quads, rows, want
    # Lone finds off every row (not the joker row, which comes last) first, then weak ones.
    lone = [row[0] for row in rows[:-1] if len(row) == 1]
    weak = [int(i) for i in np.argsort(scores) if scores[i] < WEAK_FIND * np.median(scores)]
    keep = np.ones(len(quads), bool)
    named_rows = None  # the problems of an attempt whose rows are the layout's rows
    for i in list(dict.fromkeys(lone + weak))[:3]:
        keep[i] = False
        rows2 = find_rows(quads[keep])
        problems2, want2 = _check_counts(rows2, layout, centres[keep])
        if not problems2:
            return quads[keep], rows2, want2
        if named_rows is None and len(rows2) == len(want2):
            named_rows = problems2
    raise CalibrationError("; ".join(named_rows or problems))


def _find_tiles(image, reader) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the image to crop from, tile quads in its pixels, detector scores). A
    `vision.recognition.decode.Photo` (a big phone photo) is decoded only as far as the pipeline
    would: reduced for the detector, and the crops from the smallest decode that keeps their
    detail."""
    if isinstance(image, np.ndarray):
        quads, scores = reader.detector.detect(image)
        return image, np.asarray(quads, np.float32).reshape(-1, 4, 2), np.asarray(scores).ravel()
    from vision.recognition.pipeline import crop_reduction, detection_reduction

    factor = detection_reduction(image, reader.detector)  # as TileReader.read_photo does
    small = image.reduced(factor)
    quads, scores = reader.detector.detect(small)
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    size = getattr(reader.classifier, "size", None)
    source = image.reduced(crop_reduction(_scaled(quads, small, image.shape), size, factor)
                           if size is not None and factor > 1 else 1)
    return source, _scaled(quads, small, source.shape), np.asarray(scores).ravel()


def _scaled(quads: np.ndarray, image: np.ndarray, shape) -> np.ndarray:
    """Points in `image` -> the same points in an image of `shape` (pixel centres kept)."""
    scale = np.float32([shape[1] / image.shape[1], shape[0] / image.shape[0]])
    return ((quads + 0.5) * scale - 0.5).astype(np.float32)


def calibrate(image_bgr, layout: Layout, reader, *, edition: str | None = None) -> Profile:
    """A profile of the edition in the photo (a BGR array, or a `vision.recognition.decode.Photo`);
    CalibrationError if it does not match `layout`."""
    start = time.perf_counter()
    classifier = reader.classifier
    if not getattr(classifier, "embedding_output", None):
        raise CalibrationError("the classifier has no embedding output "
                               "(run `python -m training.add_embedding_output`)")
    image_bgr, quads, scores = _find_tiles(image_bgr, reader)
    if len(quads) == 0:
        raise CalibrationError("no tiles found in the photo")
    quads, rows, want = _rows_for_layout(quads, scores, layout)
    order = [i for row in rows for i in row]
    place = [(r, k) for r, row in enumerate(rows) for k in range(len(row))]
    # The layout's tiles lie upright: their tops towards the photo's top.
    canon = np.stack([canonical_quad(quads[i]) for i in order])
    profile = _learn(image_bgr, canon, [want[r][k] for r, k in place], place, reader, edition,
                     layout_rows=want)
    profile.stats["seconds"] = round(time.perf_counter() - start, 3)
    return profile


def calibrate_tiles(image_bgr: np.ndarray, quads: np.ndarray, codes, reader, *,
                    edition: str | None = None) -> Profile:
    """A profile from tiles already found and known: `quads` (N, 4, 2) clockwise from each
    tile's upright top-left (a reading's corners), `codes` their true tiles (K R B O G J;
    O and G both mean the fourth colour, named by its ink). For a reading corrected by
    hand. CalibrationError names a tile that does not look like its code."""
    start = time.perf_counter()
    if not getattr(reader.classifier, "embedding_output", None):
        raise CalibrationError("the classifier has no embedding output "
                               "(run `python -m training.add_embedding_output`)")
    codes = [str(c).upper() for c in codes]
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    bad = [c for c in codes if c == "?" or not Layout.from_text(c).rows]
    if len(codes) != len(quads) or not codes or bad:
        raise CalibrationError(f"{len(quads)} tiles and {len(codes)} codes: give one tile code "
                               "for each tile")
    layout = Layout.from_text(" ".join(codes), name="tiles")
    profile = _learn(image_bgr, quads, list(layout.rows[0]), None, reader, edition,
                     layout_rows=list(layout.rows))
    profile.stats["seconds"] = round(time.perf_counter() - start, 3)
    return profile


def _learn(image_bgr, canon, layout_codes, place, reader, edition, layout_rows) -> Profile:
    """The profile of tiles at upright quads `canon` whose layout codes are known; `place`
    (row, index) of each in `layout_rows`, or None (then tiles are named by their order)."""
    classifier = reader.classifier
    named = place is not None
    place = place if named else [(0, k) for k in range(len(layout_codes))]
    names = [f"row {r + 1}, tile {k + 1}" if named else f"tile {k + 1}" for r, k in place]
    raw = classifier.crops(image_bgr, canon)
    bodies = body_colors(raw)
    body = np.median(bodies, axis=0)
    gains = np.clip(body[None] / bodies, 0.4, 2.5)
    crops = np.clip(raw.astype(np.float32) * gains[:, None, None, :] + 0.5, 0, 255).astype(np.uint8)
    turned_crops = crops[:, ::-1, ::-1]
    probs, turn, emb = classifier.predict_joint(np.concatenate([crops, turned_crops]),
                                                with_embedding=True)
    n = len(layout_codes)
    net = probs[:n]
    # A layout's tiles lie upright, so its numbers are checked as drawn: a 9 the network
    # half takes for a 6 on its head (an edition that prints both alike) is a 9. Each
    # tile is seen twice, as drawn and turned round (whose "turned" share is as drawn).
    as_drawn = (probs[:n] - turn[:n]) + turn[n:2 * n]
    as_drawn /= np.maximum(as_drawn.sum(axis=1, keepdims=True), 1e-9)
    ink, _maps = ink_features(crops, bodies * gains)

    # Colour slots of the rows.
    rows_ink = [ink[[j for j, (r, _k) in enumerate(place) if r == row]]
                for row in range(len(layout_rows))]
    slots, problems = _assign_slots(rows_ink, layout_rows)
    fourth_hue = None
    codes = []
    for (r, _k), code in zip(place, layout_codes, strict=True):
        if code == "J":
            codes.append("J")
        else:
            slot = code[0] if code[0] in "KRB" else (slots[r] or "O")
            codes.append(slot + code[1:])
    fourth = [j for j, c in enumerate(codes) if c[0] == "O"]
    if fourth and np.isfinite(ink[fourth]).all(axis=1).any():
        fourth_hue = float(chroma_hue(np.nanmedian(ink[fourth], axis=0))[1])
    fourth_slot = "G" if fourth_hue is not None and GREEN_HUES[0] < fourth_hue < GREEN_HUES[1] else "O"
    codes = [fourth_slot + c[1:] if c[0] == "O" else c for c in codes]

    slot_colors = []
    for slot in "KRB" + fourth_slot:
        members = [j for j, c in enumerate(codes) if c != "J" and c[0] == slot
                   and np.isfinite(ink[j]).all()]
        if members:
            mu = np.median(ink[members], axis=0)
            spread = ink[members].std(axis=0) if len(members) > 1 else np.zeros(3)
        else:
            mu, spread = np.float32(DEFAULT_INK[slot]), np.float32([20.0, 20.0, 20.0])
        slot_colors.append(SlotColor(slot, tuple(float(v) for v in mu),
                                     tuple(float(v) for v in spread), len(members)))
    problems += _colour_problems(codes, names, ink, slot_colors, net, classifier_labels(classifier))
    problems += _number_problems(codes, names, as_drawn if named else net, emb[:n])
    if problems:
        raise CalibrationError(_joined(problems))

    vectors = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-9)
    extra = _jittered_vectors(classifier, image_bgr, canon, gains, vectors.shape[1])
    profile_labels = [c if c == "J" or c[0] != "O" else fourth_slot + c[1:] for c in TILE_CLASSES]
    stats = _stats(codes, net, vectors[:n], ink, slot_colors, profile_labels)
    if named:
        stats["rows"] = [codes[place.index((r, 0))][0] for r in range(len(layout_rows))]
    stats["white_balance"] = [round(float(g), 3) for g in 200.0 / body]
    if fourth_hue is not None:
        stats["fourth_colour_hue"] = round(fourth_hue, 1)
    letters = "KRB" + fourth_slot
    return Profile(
        model_sha256=str(getattr(classifier, "model_sha256", "") or ""),
        edition=edition or " ".join(COLOR_WORDS[s] for s in letters),
        slots=tuple(slot_colors),
        body_bgr=tuple(float(v) for v in body),
        codes=tuple(codes) * (2 + 2 * len(JITTERS)),
        turned=((False,) * n + (True,) * n) * (1 + len(JITTERS)),
        vectors=np.concatenate([vectors, extra]).astype(np.float32),
        net_colours=_net_colours(codes, net, letters, classifier_labels(classifier)),
        stats=stats,
    )


def _jittered_vectors(classifier, image_bgr, canon, gains, width: int) -> np.ndarray:
    """Embeddings (upright, turned) of each tile's crop cut at its quad moved by JITTERS:
    a detector's box in a later photo sits a little off the tile, and its crop should
    still find the tile's prototype."""
    if not JITTERS:
        return np.zeros((0, width), np.float32)
    centres, right, down, widths, heights = tile_frames(canon)
    out = []
    for dx, dy, scale in JITTERS:
        shift = right * (dx * widths)[:, None] + down * (dy * heights)[:, None]
        quads = centres[:, None] + (canon - centres[:, None]) * scale + shift[:, None]
        raw = classifier.crops(image_bgr, quads.astype(np.float32))
        crops = np.clip(raw.astype(np.float32) * gains[:, None, None, :] + 0.5, 0, 255)
        crops = crops.astype(np.uint8)
        _p, _t, emb = classifier.predict_joint(np.concatenate([crops, crops[:, ::-1, ::-1]]),
                                               with_embedding=True)
        out.append(emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-9))
    return np.concatenate(out)


def classifier_labels(classifier) -> tuple[str, ...]:
    return tuple(getattr(classifier, "labels", None) or TILE_CLASSES)


def _net_colours(codes, net, letters, labels) -> tuple[tuple[float, ...], ...]:
    """Mean network colour-slot probabilities (K R B O columns) of each slot's tiles."""
    cols = np.array([-1 if c == "J" else "KRBO".index(c[0]) for c in labels])
    slot_p = np.zeros((len(codes), 4), np.float32)
    for k in range(4):
        slot_p[:, k] = net[:, cols == k].sum(axis=1)
    slot_p /= np.maximum(slot_p.sum(axis=1, keepdims=True), 1e-9)
    rows = []
    for slot in letters:
        members = [j for j, c in enumerate(codes) if c != "J" and c[0] == slot]
        if members:
            rows.append(tuple(float(v) for v in slot_p[members].mean(axis=0)))
        else:  # not shown: assume the network reads it as its own slot
            own = "KRBO".index("O" if slot == "G" else slot)
            rows.append(tuple(float(k == own) for k in range(4)))
    return tuple(rows)


def _joined(problems: list[str], most: int = 6) -> str:
    text = "; ".join(problems[:most])
    return text + (f"; and {len(problems) - most} more" if len(problems) > most else "")


def _slot_distance(ink: np.ndarray, slot_colors) -> np.ndarray:
    return np.sqrt(colour_distance2(ink, np.float32([s.lab for s in slot_colors]),
                                    np.float32([s.spread for s in slot_colors])))


def _colour_problems(codes, names, ink, slot_colors, net, labels) -> list[str]:
    """A tile whose ink is another row's colour -- when the network sees that colour too
    (a shadow can grey a teal tile's ink; it does not fool both)."""
    letters = [s.slot for s in slot_colors]
    net_slot = np.zeros((len(codes), 4), np.float32)
    for col, label in enumerate(labels):
        if label != "J":
            net_slot[:, "KRBO".index(label[0])] += net[:, col]
    problems = []
    d = _slot_distance(ink, slot_colors)
    for j, code in enumerate(codes):
        if code == "J" or not np.isfinite(ink[j]).all():
            continue
        near = int(np.argmin(d[j]))
        own = letters.index(code[0])
        net_says = "KRBO"[int(net_slot[j].argmax())]
        if near != own and d[j, own] > 3.0 and net_says == ("O" if letters[near] == "G"
                                                           else letters[near]):
            problems.append(f"{names[j]} looks {COLOR_WORDS[letters[near]]}, "
                            f"the layout has a {COLOR_WORDS[code[0]]} tile there ({code})")
    return problems


def _number_problems(codes, names, net, emb) -> list[str]:
    """A tile reads as another number when the network says so and the other tiles of that
    number look like it more than the tiles of the layout's number do."""
    number = np.array([0 if c == "J" else int(c[1:]) for c in codes])
    net_num = np.zeros((len(codes), 14), np.float32)
    for col, label in enumerate(TILE_CLASSES):
        net_num[:, 0 if label == "J" else int(label[1:])] += net[:, col]
    e = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-9)
    sim = np.einsum("nd,md->nm", e, e)  # not BLAS: see calibration.head
    np.fill_diagonal(sim, -np.inf)
    problems = []
    for j in range(len(codes)):
        read = int(net_num[j].argmax())
        if read == number[j] or net_num[j, read] < NUMBER_CONFIDENT:
            continue
        like = {k: float(sim[j, number == k].mean()) for k in (read, int(number[j]))
                if (number == k).sum() - (k == number[j]) > 0}
        if int(number[j]) in like and read in like and like[read] <= like[int(number[j])]:
            continue  # the other rows' tiles of its number look like it: a new font, learned
        said = "a joker" if read == 0 else f"a {read}"
        want = "a joker" if number[j] == 0 else f"a {number[j]}"
        problems.append(f"{names[j]} reads as {said}, the layout puts {want} "
                        f"there ({codes[j]})")
    return problems


def _stats(codes, net, vectors, ink, slot_colors, profile_labels) -> dict:
    """How sure: the network alone on these tiles, the prototypes leave-one-out, the
    colours' separation."""
    n = len(codes)
    net_read = [profile_labels[k] for k in net.argmax(axis=1)]
    number = np.array([0 if c == "J" else int(c[1:]) for c in codes])
    sim = np.einsum("nd,md->nm", vectors, vectors)
    np.fill_diagonal(sim, -np.inf)
    # Leave-one-out, over the tiles whose number shows on another tile too.
    twice = np.array([(number == k).sum() >= 2 for k in number], bool)
    loo = (number[sim.argmax(axis=1)] == number) & twice
    # Margin of the own number over the best other one (leave-one-out), in temperature units.
    margins = []
    for j in range(n):
        own = sim[j, number == number[j]]
        own = own[np.isfinite(own)]
        other = sim[j, number != number[j]]
        if len(own) and len(other):
            margins.append((own.max() - other.max()) / PROTO_TEMPERATURE)
    letters = [s.slot for s in slot_colors]
    d = _slot_distance(ink, slot_colors)
    finite = np.isfinite(ink).all(axis=1)
    colour_ok = [letters[int(np.argmin(d[j]))] == c[0] for j, c in enumerate(codes)
                 if c != "J" and finite[j]]
    mu = np.float32([s.lab for s in slot_colors])
    gaps = [float(np.linalg.norm(mu[a, 1:] - mu[b, 1:])) for a in range(4) for b in range(a + 1, 4)
            if slot_colors[a].tiles and slot_colors[b].tiles]
    return {
        "tiles": n,
        "jokers": int(sum(c == "J" for c in codes)),
        "network_read_right": int(sum(a == b for a, b in zip(net_read, codes, strict=True))),
        "network_numbers_right": int(sum(a[1:] == b[1:] or a == b == "J"
                                         for a, b in zip(net_read, codes, strict=True))),
        "prototype_numbers_right": int(loo.sum()) if n > 1 else 0,
        "prototype_numbers_checked": int(twice.sum()),
        "prototype_margin_median": round(float(np.median(margins)), 2) if margins else None,
        "colours_right": int(sum(colour_ok)),
        "colour_tiles": len(colour_ok),
        "closest_colours_ab": round(min(gaps), 1) if gaps else None,
    }
