// The latest stable reading drawn over the picture: tiles, sets outlined green (valid) or
// red (invalid, with the reason), each joker's value, uncertain tiles dashed with a "?",
// the tiles a penalty sends back highlighted, and a rack photo's tiles lying off the rack
// greyed and struck through (not counted). Drawing is in the reading's pixels.

import { tileCode } from "./format.js";
import { t, tm } from "./i18n.js";

const GREEN = "#35d07f";
const RED = "#ff5a5f";
const AMBER = "#ffc23d";
const MAGENTA = "#ff4fd8";
const GREY = "#a9a9a9"; // a rack photo's tile lying off the rack: read, not counted

function hull(points) {
  const p = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (p.length < 3) return p;
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [];
  for (const q of p) {
    while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop();
    lower.push(q);
  }
  const upper = [];
  for (let i = p.length - 1; i >= 0; i--) {
    const q = p[i];
    while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop();
    upper.push(q);
  }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

function grow(poly, by) {
  const cx = poly.reduce((s, q) => s + q[0], 0) / poly.length;
  const cy = poly.reduce((s, q) => s + q[1], 0) / poly.length;
  return poly.map(([x, y]) => {
    const dx = x - cx, dy = y - cy, d = Math.hypot(dx, dy) || 1;
    return [x + (dx / d) * by, y + (dy / d) * by];
  });
}

function path(ctx, poly) {
  ctx.beginPath();
  poly.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
  ctx.closePath();
}

function centre(corners) {
  return [corners.reduce((s, q) => s + q[0], 0) / 4, corners.reduce((s, q) => s + q[1], 0) / 4];
}

// The box [x0, y0, x1, y1] a label of `text` at (x, y) covers, its backing included.
function labelBox(ctx, text, x, y, size) {
  ctx.font = `700 ${size}px system-ui, sans-serif`;
  const w = ctx.measureText(text).width + size * 0.6;
  return [x - w / 2, y - size * 0.75, x + w / 2, y + size * 0.75];
}

function label(ctx, text, x, y, color, size) {
  const box = labelBox(ctx, text, x, y, size);
  ctx.fillStyle = "rgba(0,0,0,0.78)";
  ctx.fillRect(box[0], box[1], box[2] - box[0], box[3] - box[1]);
  ctx.fillStyle = color;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, x, y);
  return box;
}

// A line through a label's text: read, but not counted.
function strike(ctx, box, size) {
  const y = (box[1] + box[3]) / 2;
  ctx.beginPath();
  ctx.moveTo(box[0] + size * 0.2, y);
  ctx.lineTo(box[2] - size * 0.2, y);
  ctx.lineWidth = Math.max(1, size * 0.1);
  ctx.strokeStyle = GREY;
  ctx.stroke();
}

function overlaps(a, b) {
  return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

function wrapText(text, max) {
  const words = text.split(" ");
  const lines = [];
  let line = "";
  for (const w of words) {
    if ((line + " " + w).trim().length > max && line) { lines.push(line); line = w; } else line = (line + " " + w).trim();
  }
  if (line) lines.push(line);
  return lines.slice(0, 3);
}

// Label sizes in CSS pixels on the screen, whatever the photo's size (chosen in
// docs/decisions/legibility.md): a tile's reading is checked up close, a wrong set's reason
// and "back" are read across the table.
export const LABEL_PX = { tile: 14, set: 20, back: 20 };

export class Overlay {
  constructor(canvas) {
    this.canvas = canvas;
    this.reading = null;
    this.highlight = []; // corners of tiles to mark as going back to the rack
  }

  show(reading, { highlight = [] } = {}) {
    this.reading = reading;
    this.highlight = highlight;
    this.draw();
  }

  clear() { this.show(null); }

  draw() {
    const c = this.canvas;
    const r = this.reading;
    const ctx = c.getContext("2d");
    if (!r || !r.width || !r.height) {
      ctx.clearRect(0, 0, c.width, c.height);
      return;
    }
    if (c.width !== r.width || c.height !== r.height) {
      c.width = r.width;
      c.height = r.height;
    }
    ctx.clearRect(0, 0, c.width, c.height);
    const shown = c.getBoundingClientRect().width;
    // Canvas pixels per CSS pixel as shown (a phone-wide picture before it is laid out).
    const unit = shown > 0 ? r.width / shown : Math.max(r.width, r.height) / 320;
    this.labelPx = { ...LABEL_PX };
    const byId = new Map((r.tiles || []).map((t) => [t.id, t]));
    const jokerValue = new Map();
    for (const set of r.sets || []) {
      let j = 0;
      for (const id of set.tiles) {
        const t = byId.get(id);
        if (t && t.joker && set.jokers && j < set.jokers.length) jokerValue.set(id, set.jokers[j++]);
      }
    }
    // Every label's box drawn so far: a tile label that would overlap one is folded (below).
    const placed = [];
    this.labelBoxes = [];
    this.folded = [];
    this.dots = []; // [x, y, radius] of each folded tile's dot
    // Sets first, so tiles and labels sit on top of the outlines. A wrong set's reason is
    // placed now and drawn after the tiles: no outline or folded tile's dot may cross it.
    const reasons = [];
    for (const set of r.sets || []) {
      const pts = set.tiles.flatMap((id) => (byId.get(id) ? byId.get(id).corners : []));
      if (pts.length < 3) continue;
      const poly = grow(hull(pts), 5 * unit);
      const color = set.valid ? GREEN : RED;
      ctx.lineWidth = 2.5 * unit;
      ctx.strokeStyle = color;
      ctx.fillStyle = set.valid ? "rgba(53,208,127,0.10)" : "rgba(255,90,95,0.16)";
      path(ctx, poly);
      ctx.fill();
      ctx.stroke();
      if (!set.valid && set.reasons && set.reasons.length) {
        const top = poly.reduce((a, b) => (b[1] < a[1] ? b : a));
        // The reason's first words: its message id worded where the server gives one.
        const first = set.reason_ids && set.reason_ids.length ? tm(set.reason_ids[0]) : set.reasons[0];
        const reason = first.split(":")[0];
        const lines = wrapText(reason, 22);
        const size = LABEL_PX.set * unit;
        const y0 = Math.max(size, top[1] - size * (lines.length + 0.2));
        lines.forEach((ln, i) => {
          // Kept whole inside the picture: a set at its edge would cut its reason off.
          const [bx0, , bx1] = labelBox(ctx, ln, 0, 0, size);
          const half = Math.min((bx1 - bx0) / 2, r.width / 2);
          const x = Math.min(Math.max(top[0], half), r.width - half);
          const y = y0 + i * size * 1.4;
          const box = labelBox(ctx, ln, x, y, size);
          placed.push(box);
          reasons.push({ text: ln, x, y, size, box });
          this.labelBoxes.push({ kind: "set", text: ln, box });
        });
      }
    }
    const loose = new Set(r.loose || []);
    const tiles = (r.tiles || []).filter((t) => t.corners);
    for (const t of tiles) {
      ctx.lineWidth = 1.5 * unit;
      ctx.setLineDash(t.off_rack ? [2 * unit, 3 * unit] : t.uncertain ? [4 * unit, 3 * unit] : []);
      ctx.strokeStyle = t.off_rack ? GREY : t.uncertain ? AMBER
        : loose.has(t.id) ? "#ffffff" : "rgba(255,255,255,0.55)";
      path(ctx, t.corners);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    // Labels never overlap: one that would run into another is not shrunk below the
    // legibility floor (docs/decisions/legibility.md) but folded into a dot on its tile,
    // whose reading a tap shows (the correction dialog). Uncertain tiles are labelled
    // first: theirs are the readings to check.
    // "back" marks are read across the table: their places are kept before the tile
    // labels are placed, and they are drawn last, on top.
    const backs = [];
    for (const item of this.highlight || []) {
      const corners = item && item.corners;
      if (!corners) continue;
      const [x, y] = centre(corners);
      // One word for tiles side by side: overlapping labels read as none.
      const box = labelBox(ctx, t("overlay.back"), x, y + 16 * unit, LABEL_PX.back * unit);
      backs.push({ corners, x, y: y + 16 * unit, box: placed.some((b) => overlaps(b, box)) ? null : box });
      if (backs[backs.length - 1].box) placed.push(box);
    }
    // The tiles counted first, uncertain ones before sure ones; those lying off a rack last.
    const counted = tiles.filter((t) => !t.off_rack);
    const order = counted.filter((t) => t.uncertain)
      .concat(counted.filter((t) => !t.uncertain), tiles.filter((t) => t.off_rack));
    const size = LABEL_PX.tile * unit;
    for (const t of order) {
      // The label sits on the tile's lower part, leaving its printed number visible to
      // compare with what was read (corners run clockwise from the upright top-left);
      // where that is taken, on its middle.
      const [tl, tr, br, bl] = t.corners;
      const spot = (k) => [(tl[0] + tr[0]) / 2 * (1 - k) + (bl[0] + br[0]) / 2 * k,
        (tl[1] + tr[1]) / 2 * (1 - k) + (bl[1] + br[1]) / 2 * k];
      let text = tileCode(t);
      if (jokerValue.has(t.id)) text = `J=${jokerValue.get(t.id)}`;
      if (t.uncertain && !t.off_rack) text += "?";
      const free = [spot(0.75), spot(0.5)].find(([x, y]) =>
        !placed.some((b) => overlaps(b, labelBox(ctx, text, x, y, size))));
      const color = t.off_rack ? GREY : t.uncertain ? AMBER : "#ffffff";
      if (free) {
        const box = label(ctx, text, free[0], free[1], color, size);
        if (t.off_rack) strike(ctx, box, size);
        placed.push(box);
        this.labelBoxes.push({ kind: "tile", id: t.id, text, box });
        continue;
      }
      this.folded.push(t.id);
      // The dot keeps off a wrong set's reason; where none is free it is left out (the
      // reason is read first, and a tap still shows the tile).
      const radius = 3.5 * unit;
      const dot = [spot(0.75), spot(0.5), spot(0.25)].find(([x, y]) => !reasons.some((q) =>
        overlaps(q.box, [x - 2 * radius, y - 2 * radius, x + 2 * radius, y + 2 * radius])));
      if (!dot) continue;
      const [x, y] = dot;
      this.dots.push([x, y, radius]);
      ctx.beginPath();
      ctx.arc(x, y, radius, 0, 2 * Math.PI);
      ctx.fillStyle = "rgba(0,0,0,0.78)";
      ctx.fill();
      ctx.lineWidth = 1.5 * unit;
      ctx.strokeStyle = color;
      ctx.stroke();
    }
    for (const reason of reasons) label(ctx, reason.text, reason.x, reason.y, RED, reason.size);
    for (const back of backs) {
      ctx.lineWidth = 4 * unit;
      ctx.strokeStyle = MAGENTA;
      path(ctx, grow(back.corners, 3 * unit));
      ctx.stroke();
      if (!back.box) continue;
      label(ctx, t("overlay.back"), back.x, back.y, MAGENTA, LABEL_PX.back * unit);
      this.labelBoxes.push({ kind: "back", text: t("overlay.back"), box: back.box });
    }
  }

  // The tile of the reading under a tap at (x, y) CSS pixels in the canvas, or null.
  tileAt(x, y) {
    const r = this.reading;
    if (!r) return null;
    const box = this.canvas.getBoundingClientRect();
    const px = (x / box.width) * r.width;
    const py = (y / box.height) * r.height;
    let best = null;
    let bestD = Infinity;
    for (const t of r.tiles || []) {
      if (!t.corners) continue;
      const [cx, cy] = centre(t.corners);
      const d = Math.hypot(px - cx, py - cy);
      if (inside(t.corners, px, py)) return t;
      if (d < bestD) { bestD = d; best = t; }
    }
    // A near miss on a small phone picture still means that tile.
    const size = best ? Math.hypot(best.corners[0][0] - best.corners[1][0], best.corners[0][1] - best.corners[1][1]) : 0;
    return best && bestD < size * 0.9 ? best : null;
  }
}

function inside(poly, x, y) {
  let hit = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) hit = !hit;
  }
  return hit;
}
