// The table screen: turn banner and countdown, the picture with its overlay, the table's
// sets, the verdict, the camera (live or photo), corrections and the turn controls.

import { onGame, refresh, render } from "../app.js";
import {
  $, KEYS, TABLE_SAMPLES, alerts, api, clearToast, guard, meldNeeded, notice, overlay, sampleFile, saveJson,
  sayVerdict, signature, state, toast, turnCall, turnOf, words,
} from "../common.js";
import { toMs } from "../api.js";
import { LiveCamera, cameraSupport } from "../camera.js";
import { chips, clock, esc, kindWord, reasonsText, setChips, verdictHtml } from "../format.js";
import { t, tm } from "../i18n.js";

// The countdown turns amber, then red, by the share of the turn left (a 30 s turn is not
// amber from its first second), with at least the last 10 s red.
export const WARN_SHARE = 0.25;
export const URGENT_SHARE = 0.1;

// ---------------------------------------------------------------- the table

// A phone propped over the table must not dim and lock mid-game (where the browser lets
// a page keep the screen on: secure origins).
let wakeLock = null;
let wakePending = false;
async function keepAwake(on) {
  if (on && !wakeLock && !wakePending && navigator.wakeLock && document.visibilityState === "visible") {
    wakePending = true;
    try {
      wakeLock = await navigator.wakeLock.request("screen");
      wakeLock.addEventListener("release", () => { wakeLock = null; });
    } catch (_e) {
      wakeLock = null;
    } finally {
      wakePending = false;
    }
  } else if (!on && wakeLock) {
    wakeLock.release().catch(() => {});
    wakeLock = null;
  }
}

export function renderPlay() {
  const g = state.game;
  keepAwake(g.state === "playing");
  const turn = turnOf(g);
  $("#btn-pause").textContent = turn && turn.paused ? t("play.resume") : t("play.pause");
  $("#btn-pause").hidden = !g.timer || !g.timer.enabled;
  const ext = (g.timer && g.timer.extensions) || 0;
  const left = turn ? (turn.extensions_left ?? ext - (turn.extensions_used || 0)) : 0;
  $("#btn-extend").hidden = !ext || !turn || left <= 0;
  $("#btn-extend").textContent = t("play.extend", { seconds: Math.round((g.timer && g.timer.extension_seconds) || 30) });
  // A tournament's table (the game knows its table number) can call the hall's referee.
  $("#btn-call-referee").hidden = !g.hall;
  ensureCamera();
  renderVerdict();
  renderCountdown();
}

// Whose turn and the countdown, in the sticky header on every tab while a round runs.
export function renderBanner() {
  const g = state.game;
  const turn = turnOf(g);
  $("#turn-banner").hidden = !(g && g.state === "playing" && turn);
  if (!turn) return;
  $("#turn-player").textContent = turn.player;
  // Turns count within the round (the server numbers them across the game).
  $("#turn-label").textContent = t("play.turn_of_round", { turn: turn.in_round ?? turn.number, round: g.round.number });
  renderCountdown();
}

function remainingSeconds() {
  const turn = turnOf(state.game);
  if (!turn || !state.game.timer || !state.game.timer.enabled) return null;
  if (turn.paused) return turn.remaining_s ?? 0;
  const deadline = toMs(turn.deadline);
  if (Number.isNaN(deadline)) return turn.remaining_s ?? null;
  return (deadline - api.serverNow()) / 1000;
}

export function renderCountdown() {
  const el = $("#countdown");
  const g = state.game;
  if (!g || g.state !== "playing") { el.textContent = ""; return; }
  const left = remainingSeconds();
  const turn = turnOf(g);
  if (left == null) { el.textContent = t("play.no_timer"); el.className = "countdown off"; return; }
  el.textContent = turn.paused ? `${clock(left)} ⏸` : clock(left);
  const total = Math.max(1, (g.timer.seconds || 0) + (turn.extensions_used || 0) * (g.timer.extension_seconds || 30));
  const urgent = left <= Math.max(10, total * URGENT_SHARE);
  const warn = left <= total * WARN_SHARE;
  el.className = "countdown" + (turn.paused ? " paused" : urgent ? " urgent" : warn ? " warn" : "");
  el.dataset.share = String(Math.round((left / total) * 100) / 100);
  if (turn.paused) return;
  if (!warn) state.warned = false;
  if (warn && !urgent && !state.warned) {
    state.warned = true;
    alerts.warning();
  }
  const whole = Math.ceil(left);
  if (whole > 10) state.lastTick = null; // more time was given: tick again from 10
  // Once per second going down: a clock re-synced a few ms back never ticks twice.
  if (whole <= 10 && whole >= 0 && (state.lastTick == null || whole < state.lastTick)) {
    state.lastTick = whole;
    alerts.tick(whole === 0);
  }
}

// The last verdict folds into one line that opens on a tap (kept open across polls).
function renderVerdict() {
  const el = $("#verdict");
  const v = state.verdict;
  el.hidden = !v;
  const key = v ? `${v.round}:${v.turn}:${JSON.stringify(v.penalty || null)}:${v.legal}` : "";
  if (el.dataset.key !== key) {
    el.dataset.key = key;
    el.open = false;
    el.innerHTML = v ? verdictHtml(v, { meldNeeded: meldNeeded() }) : "";
  }
  el.classList.toggle("timed-out", !!(v && v.timed_out));
  el.classList.toggle("illegal", !!(v && !v.legal && !(v.passed && !v.timed_out)));
  el.classList.toggle("pass", !!(v && v.passed && !v.timed_out));
}

function penaltyPhoto() {
  const v = state.verdict;
  if (!v || !v.penalty || !(v.penalty.tiles_back || []).length) return null;
  return v.after_photo_id ?? v.photo_id ?? null;
}

function highlights() {
  const v = state.verdict;
  if (!v || !v.penalty || !v.penalty.tiles_back) return [];
  const photo = penaltyPhoto();
  const onThisPhoto = !photo || !state.reading || photo === state.reading.photo_id;
  return onThisPhoto ? v.penalty.tiles_back.filter((x) => x && x.corners) : [];
}

// A refused turn puts the table back as it was (the reading before the turn): until the
// table is read anew, the judged photo stays up with what goes back marked on it, after an
// "End turn" as after a timeout.
function restoredAfterPenalty() {
  const v = state.verdict;
  const r = state.reading;
  return !!(r && penaltyPhoto() && v.before_reading != null && r.reading_id === v.before_reading &&
    r.photo_id !== penaltyPhoto());
}

function showPhoto(photoId) {
  const img = $("#photo");
  const url = api.fileUrl(`/photos/${encodeURIComponent(photoId)}`);
  if (!img.src.endsWith(url)) img.src = url;
  img.hidden = false;
  return img;
}

// What the picture shows: the live video (or the latest table photo) with the latest
// stable reading over it. When a refused turn put the table back, the photo that was
// judged stays up with the tiles going back to the rack marked on it.
function renderStage() {
  const live = state.mode && state.mode.live;
  const r = restoredAfterPenalty() ? null : state.reading;
  if (r) {
    // A sample sent while the camera runs shows as itself until the camera reads anew.
    if (live && (r.photo_id == null || r.photo_id !== state.samplePhoto)) $("#photo").hidden = true;
    else if (r.photo_id != null) showPhoto(r.photo_id);
    fitStage(r.width, r.height);
    $("#stage-empty").hidden = true;
    overlay.show(r, { highlight: highlights() });
    return;
  }
  const photo = penaltyPhoto();
  if (photo) {
    // Until the table is read again, the judged photo stays up (over the live video too).
    const img = showPhoto(photo);
    const draw = () => {
      if ((state.reading && !restoredAfterPenalty()) || penaltyPhoto() !== photo) return;
      fitStage(img.naturalWidth, img.naturalHeight);
      overlay.show({ width: img.naturalWidth, height: img.naturalHeight, tiles: [], sets: [] },
        { highlight: state.verdict.penalty.tiles_back.filter((x) => x && x.corners) });
    };
    if (img.complete && img.naturalWidth) draw(); else img.onload = draw;
    $("#stage-empty").hidden = true;
    return;
  }
  overlay.clear();
  $("#photo").hidden = true;
  $("#stage-empty").hidden = !!live;
}

export function setReading(reading) {
  const key = reading
    ? `${reading.photo_id ?? ""}|${reading.reading_id ?? ""}|${reading.stable_since ?? ""}|${signature(reading)}|${JSON.stringify((reading.sets || []).map((s) => s.valid))}`
    : null;
  state.reading = reading || null;
  if (key !== state.readingKey || !reading) {
    state.readingKey = key;
    renderSummary();
  }
  renderStage();
}

function fitStage(w, h) {
  if (w && h) $("#stage").style.aspectRatio = `${w} / ${h}`;
}

// The table's line under the picture (valid or not, always on the first screen) and the
// sets below it.
function renderSummary() {
  const r = restoredAfterPenalty() ? null : state.reading;
  const el = $("#table-summary");
  const line = $("#table-line");
  if (!r) {
    const v = state.verdict;
    const back = v && penaltyPhoto();
    line.className = "table-line muted";
    line.textContent = back ? t("table.restored", { player: v.player }) : t("table.not_read");
    el.innerHTML = back ? `<p>${esc(t("table.restored_how"))}</p>` : "";
    el.hidden = !back;
    return;
  }
  el.hidden = false;
  const sets = r.sets || [];
  const bad = sets.filter((x) => !x.valid).length;
  const looseCount = (r.loose || []).length;
  line.className = `table-line ${r.table_valid ? "ok" : "bad"}`;
  line.textContent = !(r.tiles || []).length ? t("table.empty")
    : r.table_valid ? t("table.valid")
      : [t("table.not_valid"), bad ? t("table.invalid_sets", { count: bad }) : "", looseCount ? t("table.loose_tiles", { count: looseCount }) : ""].filter(Boolean).join(" · ");
  if (!(r.tiles || []).length) line.className = "table-line muted";
  const rows = sets.map((x) => `<li class="set ${x.valid ? "valid" : "invalid"}">${setChips(r, x)}` +
    ` <span class="kind">${esc(kindWord(x))}${x.valid ? `, ${esc(t("set.points", { count: x.value }))}` : ""}</span>` +
    (x.valid ? "" : `<br><span class="reason">${esc(reasonsText(x))}</span>`) + `</li>`).join("");
  const byId = new Map((r.tiles || []).map((x) => [x.id, x]));
  const loose = (r.loose || []).map((id) => byId.get(id)).filter(Boolean);
  const uncertain = (r.tiles || []).filter((x) => x.uncertain).length;
  const edge = (r.edge_tiles || []).length;
  el.innerHTML = `<ul class="sets">${rows}</ul>` +
    (edge ? `<p class="edge-warning">${esc(t("table.edge", { count: edge }))}</p>` : "") +
    (r.corrections_dropped ? `<p class="small"><b>${esc(t("table.corrections_dropped"))}</b></p>` : "") +
    (loose.length ? `<p>${esc(t("table.loose"))} ${chips(loose)}</p>` : "") +
    (!(r.tiles || []).length ? "" : `<p class="muted small">${esc(uncertain ? t("table.uncertain", { count: uncertain }) : t("table.tap"))}</p>`);
}

// ---- camera

function ensureCamera() {
  const support = state.spectator
    ? { live: false, why: t("camera.spectator") }
    : state.cameraTaken
      ? { live: false, taken: true, why: `${state.cameraTaken} ${t("camera.taken_picture")}` }
      : cameraSupport(state.prefs.photo);
  const same = state.mode && state.mode.live === support.live;
  if (same && (!support.live || state.camera || state.cameraPending)) return;
  stopCamera();
  state.mode = support;
  $("#mode-badge").textContent = support.live ? t("camera.live") : state.spectator ? t("camera.watching")
    : support.taken ? t(state.cameraTakenBy === "watch" ? "camera.on_watch" : "camera.on_phone") : t("camera.photo_mode");
  $("#mode-badge").className = `badge ${support.live ? "live" : "photo"}`;
  $("#mode-why").textContent = support.why && support.why.startsWith("camera.") ? t(support.why) : support.why;
  $("#video").hidden = !support.live;
  $("#photo").hidden = support.live || !state.reading;
  $("#table-photo-label").hidden = support.live || !!support.taken;
  $("#btn-take-camera").hidden = !support.taken;
  if (support.live) startCamera();
}

async function startCamera() {
  if (!state.cameraAsked) {
    // Another camera films this game now: this phone asks before taking it over (never
    // by accident, e.g. a second phone that only joined to watch the clock).
    state.cameraAsked = true;
    state.cameraPending = true;
    const stats = await api.frameStats().catch(() => null);
    state.cameraPending = false;
    const other = stats && stats.camera;
    if (other && other.streaming) {
      stopCamera();
      state.cameraTakenBy = other.by;
      state.cameraTaken = t(other.by === "watch" ? "camera.filming_watch" : "camera.filming_phone");
      ensureCamera();
      askTakeover(other.by);
      return;
    }
    if (!state.mode || !state.mode.live) return; // the mode changed meanwhile
  }
  const cam = new LiveCamera(api, $("#video"), {
    onReading: (reading, still) => {
      // `reading` is the server's latest stable table; `still` says whether this frame's
      // scene held still (hands over the table move, tiles don't).
      setReading(reading);
      $("#mode-badge").textContent = still === false ? t("camera.live_moving") : t("camera.live");
    },
    onGame: (game) => onGame(game),
    onChanged: () => refresh(),
    onStatus: (s, detail) => {
      if (s === "live") $("#mode-badge").textContent = t("camera.live");
      if (s === "error" && detail) toast(words(detail));
      // A frame too blurred, dark or overexposed: the table stays; say what to do.
      if (s === "refused" && detail) toast(words(detail), "info");
    },
    onTaken: (detail, messageId) => {
      // One camera per game: this phone stops filming and shows the other camera's table;
      // the takeover is said at the top of the screen, by what took it (a phone, the webcam).
      if (state.camera !== cam) return;
      state.camera = null;
      state.mode = null;
      state.cameraTakenBy = messageId && messageId.id === "camera.taken_by_watch" ? "watch" : "phone";
      state.cameraTaken = messageId ? tm(messageId, String(detail)) : t("server.camera.taken_by_phone");
      ensureCamera();
      renderStage();
      notice(state.cameraTaken);
    },
  });
  state.camera = cam;
  $("#video").addEventListener("loadedmetadata", () => {
    const v = $("#video");
    if (!state.reading) fitStage(v.videoWidth, v.videoHeight);
    $("#stage-empty").hidden = true;
  }, { once: true });
  try {
    await cam.start();
  } catch (e) {
    state.camera = null;
    state.prefs.photo = true;
    state.mode = null;
    ensureCamera();
    $("#mode-why").textContent = `${words(e)} ${t("camera.photo_instead")}`;
  }
}

export function stopCamera() {
  if (state.camera) state.camera.stop();
  state.camera = null;
  state.mode = null;
}

let localPhoto = null; // the object URL of the photo being sent, while it is shown

async function sendTablePhoto(file, { keepLive = false } = {}) {
  $("#stage-empty").hidden = true;
  const img = $("#photo");
  if (state.mode && (!state.mode.live || keepLive)) {
    // The photo on its way is shown at once; its blob is let go once the page shows
    // another picture (at most one is kept: a photo after a photo frees the first).
    if (localPhoto) URL.revokeObjectURL(localPhoto);
    localPhoto = URL.createObjectURL(file);
    img.src = localPhoto;
    img.hidden = false;
  }
  overlay.clear();
  clearToast("error");
  $("#table-line").textContent = t("table.reading");
  const reading = await guard(() => api.photo(file));
  if (reading && keepLive && state.mode && state.mode.live) state.samplePhoto = reading.photo_id;
  if (reading) setReading(reading);
  else {
    // Refused or never sent: the photo that was judged comes back under its verdict.
    renderSummary();
    renderStage();
  }
  if (localPhoto && img.src !== localPhoto) {
    URL.revokeObjectURL(localPhoto);
    localPhoto = null;
  }
  return reading;
}

$("#btn-take-camera").addEventListener("click", () => {
  // Starting this phone's camera again takes the game's camera back: asked first.
  askTakeover(state.cameraTakenBy || "phone");
});

// Another camera films this game now: take it over only when the player says so.
export async function askTakeover(by) {
  $("#takeover-text").textContent = t(by === "watch" ? "takeover.text_watch" : "takeover.text_phone");
  const dialog = $("#takeover-dialog");
  dialog.returnValue = "";
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
  if (dialog.returnValue !== "ok") return false;
  state.cameraTaken = null;
  state.cameraTakenBy = null;
  stopCamera();
  ensureCamera();
  return true;
}

$("#table-photo").addEventListener("change", (e) => {
  const file = e.target.files[0];
  e.target.value = "";
  if (file) sendTablePhoto(file);
});

// A newcomer's sample: a valid table first, then an invalid one. It is sent as a photo of
// the table; a live camera keeps running (its next change of the table reads over it).
$("#btn-sample").addEventListener("click", () => guard(async () => {
  const name = TABLE_SAMPLES[state.sampleIndex % TABLE_SAMPLES.length];
  state.sampleIndex++;
  const reading = await sendTablePhoto(await sampleFile(name), { keepLive: true });
  if (reading) toast(t(reading.table_valid ? "sample.valid" : "sample.invalid"), "info");
}));

// ---- turn controls

$("#btn-pause").addEventListener("click", async () => {
  alerts.unlock();
  const turn = turnOf(state.game);
  const game = await turnCall(() => (turn && turn.paused ? api.resume(turn.id ?? turn.number) : api.pause(turn && (turn.id ?? turn.number))));
  if (game) onGame(game);
});
$("#btn-extend").addEventListener("click", async () => {
  const turn = turnOf(state.game);
  const game = await turnCall(() => api.extend(turn && (turn.id ?? turn.number)));
  if (game) onGame(game);
});

async function endTurn() {
  if (state.ending) return;
  state.ending = true;
  alerts.unlock();
  $("#btn-end").disabled = true;
  try {
    const turn = turnOf(state.game);
    const v = await turnCall(() => api.endTurn(turn && (turn.id ?? turn.number)));
    if (v) {
      state.verdict = v;
      sayVerdict(v);
      await refresh();
    }
  } finally {
    state.ending = false;
    $("#btn-end").disabled = false;
  }
}
$("#btn-end").addEventListener("click", endTurn);

export function maybeAutoEnd() {
  const r = state.reading;
  if (!state.prefs.auto || !r || !r.table_valid || state.ending) return;
  if (state.game.state !== "playing" || !turnOf(state.game) || state.game.round.counting) return;
  if (signature(r) === state.turnStartSig) return;
  const since = toMs(r.stable_since);
  if (Number.isNaN(since) || api.serverNow() - since < 5000) return;
  endTurn();
}

// Someone went out: the server stops the turn (no timeout while the racks are counted).
$("#btn-round-over").addEventListener("click", async () => {
  const turn = turnOf(state.game);
  const game = await turnCall(() => api.goingOut(true, turn && (turn.id ?? turn.number)));
  if (game) { state.tab = "roundend"; onGame(game); }
});

// The call carries the table's current picture to the director's console.
$("#btn-call-referee").addEventListener("click", () => guard(async () => {
  await api.request("POST", api.gamePath("/call"));
  toast(t("hall.called"), "info");
}));

// ---- options

function bindOption(id, get, set) {
  const el = $(id);
  el.checked = get();
  el.addEventListener("change", () => { set(el.checked); });
}
bindOption("#opt-auto", () => state.prefs.auto, (v) => { state.prefs.auto = v; saveJson(KEYS.prefs, state.prefs); });
bindOption("#opt-photo", () => state.prefs.photo, (v) => { state.prefs.photo = v; saveJson(KEYS.prefs, state.prefs); ensureCamera(); });
bindOption("#opt-speech", () => alerts.speech, (v) => { alerts.speech = v; alerts.save(); });
bindOption("#opt-sound", () => alerts.sound, (v) => { alerts.sound = v; alerts.save(); });
bindOption("#opt-vibrate", () => alerts.vibrate, (v) => { alerts.vibrate = v; alerts.save(); });
