// When the phone sends a frame: it watches its own video ten times a second on a tiny grey
// picture, sends 2 frames a second while the view is still, and a burst (about 6 a second
// for 1.5 s) once the view has moved and settled again, so the server's tracker sees the
// new table held sooner (docs/live-tracking.md). `bench/phone_rule.py` is the same rule in
// Python (the hall bench's phones); tests/test_page_send_rule.py holds the two together.

export const WATCH_MS = 100; // the video is looked at this often
export const STILL_MS = 500; // between frames sent while the view is still
export const BURST_MS = 150; // between frames of a burst (within the socket's 10 a second)
export const BURST_FOR_MS = 1500; // a burst lasts this long after the view settled
export const PICTURE_W = 64;
export const PICTURE_H = 48;
// The largest change of one pixel (grey levels, brightness evened out, 3x3 blurred) that
// is still the same view: the server's still check measures alike (app/server/still.py:
// camera noise and flicker at most 1.2, one tile moved at least 15).
export const MOVE_DIFF = 6;

// The tiny grey picture of `source` (a video or canvas element), blurred 3x3: Float32Array.
export function greyPicture(source, canvas) {
  canvas.width = PICTURE_W;
  canvas.height = PICTURE_H;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(source, 0, 0, PICTURE_W, PICTURE_H);
  const rgba = ctx.getImageData(0, 0, PICTURE_W, PICTURE_H).data;
  const grey = new Float32Array(PICTURE_W * PICTURE_H);
  for (let i = 0; i < grey.length; i++) {
    grey[i] = 0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2];
  }
  return blur3(grey, PICTURE_W, PICTURE_H);
}

// A 3x3 box blur, edges repeated (as OpenCV's cv2.blur).
export function blur3(grey, w, h) {
  const out = new Float32Array(grey.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let sum = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = Math.min(h - 1, Math.max(0, y + dy));
        for (let dx = -1; dx <= 1; dx++) {
          sum += grey[yy * w + Math.min(w - 1, Math.max(0, x + dx))];
        }
      }
      out[y * w + x] = sum / 9;
    }
  }
  return out;
}

// The largest difference of one pixel, `picture` brought to the reference's brightness
// first (a phone's exposure changes every pixel a little, a moved tile a few a lot).
export function pictureDifference(picture, reference) {
  if (!reference || picture.length !== reference.length) return Infinity;
  let a = 0;
  let b = 0;
  for (let i = 0; i < picture.length; i++) { a += picture[i]; b += reference[i]; }
  const gain = b / Math.max(1e-6, a);
  let most = 0;
  for (let i = 0; i < picture.length; i++) {
    const d = Math.abs(picture[i] * gain - reference[i]);
    if (d > most) most = d;
  }
  return most;
}

// The rule itself, on the differences between successive looks: `look(now, diff)` says
// whether to send a frame now.
export class SendRule {
  constructor({ stillMs = STILL_MS, burstMs = BURST_MS, burstForMs = BURST_FOR_MS,
    moveDiff = MOVE_DIFF } = {}) {
    this.stillMs = stillMs;
    this.burstMs = burstMs;
    this.burstForMs = burstForMs;
    this.moveDiff = moveDiff;
    this.moving = false;
    this.burstUntil = -Infinity;
    this.nextAt = -Infinity;
  }

  look(now, diff) {
    if (diff >= this.moveDiff) {
      this.moving = true; // a hand, or the table changing: the server sees it at 2 a second
    } else if (this.moving) {
      this.moving = false; // settled: the new view, now and often for a moment
      this.burstUntil = now + this.burstForMs;
      this.nextAt = now;
    }
    if (now < this.nextAt) return false;
    const step = now < this.burstUntil ? this.burstMs : this.stillMs;
    // On the schedule (looks come every WATCH_MS: a burst's 150 ms steps alternate 100
    // and 200 ms), but never sooner than a step from now less half a look: a phone that
    // fell behind (a busy page) sends no catching-up spree.
    this.nextAt = Math.max(this.nextAt + step, now + step - WATCH_MS / 2);
    return true;
  }
}
