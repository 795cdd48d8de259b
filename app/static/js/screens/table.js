// The table screen: turn banner and countdown, the picture with its overlay, the table's
// sets, the verdict, the camera (live or photo), corrections and the turn controls.

import { goTab, onGame, refresh, render } from "../app.js";
import { $, KEYS, TABLE_SAMPLES, alerts, api, guard, meldNeeded, overlay, sampleFile, saveJson, signature, state, toast, turnOf, words } from "../common.js";
import { toMs } from "../api.js";
import { LiveCamera, cameraSupport } from "../camera.js";
import { chip, chips, clock, esc, kindWord, plural, setChips, verdictHtml, verdictSpeech } from "../format.js";

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
  $("#turn-player").textContent = turn ? turn.player : "—";
  $("#turn-number").textContent = turn ? turn.number : "";
  $("#btn-pause").textContent = turn && turn.paused ? "Resume" : "Pause";
  $("#btn-pause").hidden = !g.timer || !g.timer.enabled;
  const ext = (g.timer && g.timer.extensions) || 0;
  const left = turn ? (turn.extensions_left ?? ext - (turn.extensions_used || 0)) : 0;
  $("#btn-extend").hidden = !ext || !turn || left <= 0;
  $("#btn-extend").textContent = `+${Math.round((g.timer && g.timer.extension_seconds) || 30)} s`;
  ensureCamera();
  renderVerdict();
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
  if (left == null) { el.textContent = "no timer"; el.className = "countdown off"; return; }
  el.textContent = turn.paused ? `${clock(left)} ⏸` : clock(left);
  el.className = "countdown" + (turn.paused ? " paused" : left <= 10 ? " urgent" : left <= 30 ? " warn" : "");
  if (turn.paused) return;
  if (left > 31) state.warned = false;
  if (left <= 30 && left > 10 && !state.warned && (g.timer.seconds || 0) > 30) {
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

function renderVerdict() {
  const el = $("#verdict");
  el.hidden = !state.verdict;
  el.innerHTML = state.verdict ? verdictHtml(state.verdict, { meldNeeded: meldNeeded() }) : "";
  el.classList.toggle("timed-out", !!(state.verdict && state.verdict.timed_out));
  el.classList.toggle("illegal", !!(state.verdict && !state.verdict.legal));
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
  return onThisPhoto ? v.penalty.tiles_back.filter((t) => t && t.corners) : [];
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
  const r = state.reading;
  if (r) {
    if (live) $("#photo").hidden = true;
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
      if (state.reading || penaltyPhoto() !== photo) return;
      fitStage(img.naturalWidth, img.naturalHeight);
      overlay.show({ width: img.naturalWidth, height: img.naturalHeight, tiles: [], sets: [] },
        { highlight: state.verdict.penalty.tiles_back.filter((t) => t && t.corners) });
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

function renderSummary() {
  const r = state.reading;
  const el = $("#table-summary");
  if (!r) {
    const v = state.verdict;
    el.innerHTML = v && !v.legal && penaltyPhoto()
      ? `<p>The table goes back to how it was at the start of ${esc(v.player)}'s turn: ` +
        `the tiles marked <b class="back-word">back</b> return to the rack. The camera reads the table again when it changes.</p>`
      : `<p class="muted">The table has not been read yet.</p>`;
    return;
  }
  const sets = r.sets || [];
  const bad = sets.filter((s) => !s.valid).length;
  const head = r.table_valid
    ? `<h3 class="ok">The table is valid</h3>`
    : `<h3 class="bad">The table is not valid${bad ? `: ${plural(bad, "invalid set")}` : ""}${(r.loose || []).length ? `, ${plural(r.loose.length, "loose tile")}` : ""}</h3>`;
  const rows = sets.map((s) => `<li class="set ${s.valid ? "valid" : "invalid"}">${setChips(r, s)}` +
    ` <span class="kind">${esc(kindWord(s))}${s.valid ? `, ${esc(s.value)} points` : ""}</span>` +
    (s.valid ? "" : `<br><span class="reason">${esc((s.reasons || []).join("; "))}</span>`) + `</li>`).join("");
  const byId = new Map((r.tiles || []).map((t) => [t.id, t]));
  const loose = (r.loose || []).map((id) => byId.get(id)).filter(Boolean);
  const uncertain = (r.tiles || []).filter((t) => t.uncertain).length;
  const edge = (r.edge_tiles || []).length;
  el.innerHTML = head + `<ul class="sets">${rows}</ul>` +
    (edge ? `<p class="edge-warning"><b>${plural(edge, "tile")} at the photo's edge:</b> the edge may cut ${edge === 1 ? "it" : "them"} or hide more. Photograph the whole table.</p>` : "") +
    (r.corrections_dropped ? `<p class="small"><b>Corrections made with the other phone's camera (or another photo) no longer apply: correct again if needed.</b></p>` : "") +
    (loose.length ? `<p>Loose: ${chips(loose)}</p>` : "") +
    (uncertain ? `<p class="muted small">${plural(uncertain, "tile")} marked ? ${uncertain === 1 ? "is" : "are"} uncertain: tap ${uncertain === 1 ? "it" : "one"} on the picture to correct it.</p>` : `<p class="muted small">Tap a tile on the picture to correct a misread.</p>`);
}

// ---- camera

function ensureCamera() {
  const support = state.spectator
    ? { live: false, why: "A spectator's link: it shows the game as the players' phone runs it." }
    : state.cameraTaken
      ? { live: false, taken: true, why: `${state.cameraTaken} The picture here is what that camera reads.` }
      : cameraSupport(state.prefs.photo);
  const same = state.mode && state.mode.live === support.live;
  if (same && (!support.live || state.camera)) return;
  stopCamera();
  state.mode = support;
  $("#mode-badge").textContent = support.live ? "Live camera" : state.spectator ? "Watching"
    : support.taken ? "Camera on another phone" : "Photo mode";
  $("#mode-badge").className = `badge ${support.live ? "live" : "photo"}`;
  $("#mode-why").textContent = support.why;
  $("#video").hidden = !support.live;
  $("#photo").hidden = support.live || !state.reading;
  $("#table-photo-label").hidden = support.live || !!support.taken;
  $("#btn-take-camera").hidden = !support.taken;
  if (support.live) startCamera();
}

async function startCamera() {
  const cam = new LiveCamera(api, $("#video"), {
    fps: 3,
    onReading: (reading, still) => {
      // `reading` is the server's latest stable table; `still` says whether this frame's
      // scene held still (hands over the table move, tiles don't).
      setReading(reading);
      $("#mode-badge").textContent = still === false ? "Live camera · movement" : "Live camera";
    },
    onGame: (game) => onGame(game),
    onChanged: () => refresh(),
    onStatus: (s, detail) => {
      if (s === "live") $("#mode-badge").textContent = "Live camera";
      if (s === "error" && detail) toast(String(detail));
    },
    onTaken: (detail) => {
      // One camera per game: this phone stops filming and shows the other camera's table.
      if (state.camera !== cam) return;
      state.camera = null;
      state.mode = null;
      state.cameraTaken = String(detail);
      ensureCamera();
      renderStage();
      toast(String(detail), "info");
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
    $("#mode-why").textContent = `${words(e)} Photo mode instead.`;
  }
}

export function stopCamera() {
  if (state.camera) state.camera.stop();
  state.camera = null;
  state.mode = null;
}

async function sendTablePhoto(file) {
  $("#stage-empty").hidden = true;
  const img = $("#photo");
  if (state.mode && !state.mode.live) {
    img.src = URL.createObjectURL(file);
    img.hidden = false;
  }
  overlay.clear();
  $("#table-summary").innerHTML = `<p class="muted">Reading the table…</p>`;
  const reading = await guard(() => api.photo(file));
  if (reading) setReading(reading);
  else renderSummary();
}

$("#btn-take-camera").addEventListener("click", () => {
  // Starting this phone's camera again takes the game's camera back.
  state.cameraTaken = null;
  stopCamera();
  ensureCamera();
});

$("#table-photo").addEventListener("change", (e) => {
  const file = e.target.files[0];
  e.target.value = "";
  if (file) sendTablePhoto(file);
});

$("#btn-sample").addEventListener("click", () => guard(async () => {
  const name = TABLE_SAMPLES[state.sampleIndex % TABLE_SAMPLES.length];
  state.sampleIndex++;
  if (state.mode && state.mode.live) {
    // A sample is a still photo: show it as one, the live camera resumes on reload.
    state.prefs.photo = true;
    $("#opt-photo").checked = true;
    ensureCamera();
  }
  await sendTablePhoto(await sampleFile(name));
  toast(`Sample table "${name}" sent as a photo of the table.`, "info");
}));

// ---- overlay taps: corrections

let correcting = null;
$("#overlay").addEventListener("click", (e) => {
  if (state.spectator) return;
  const box = $("#overlay").getBoundingClientRect();
  const tile = overlay.tileAt(e.clientX - box.left, e.clientY - box.top);
  if (tile) openCorrection(tile);
});

function openCorrection(tile) {
  correcting = { tile, color: tile.joker ? null : tile.color, number: tile.number, joker: !!tile.joker };
  $("#correct-was").innerHTML = chip(tile.joker ? "J" : `${({ black: "K", red: "R", blue: "B", orange: "O" })[tile.color] || "?"}${tile.number}`);
  $("#correct-colors").innerHTML = [["K", "black"], ["R", "red"], ["B", "blue"], ["O", "orange"], ["J", "joker"]]
    .map(([l, c]) => `<button type="button" class="tile t-${c}" data-color="${l}">${l === "J" ? "J" : c}</button>`).join("");
  $("#correct-numbers").innerHTML = Array.from({ length: 13 }, (_, i) => `<button type="button" data-number="${i + 1}">${i + 1}</button>`).join("");
  updateCorrection();
  $("#correct-dialog").showModal();
}

function correctionCode() {
  if (!correcting) return null;
  if (correcting.joker) return "J";
  const l = ({ black: "K", red: "R", blue: "B", orange: "O", K: "K", R: "R", B: "B", O: "O" })[correcting.color];
  return l && correcting.number ? `${l}${correcting.number}` : null;
}

function updateCorrection() {
  const code = correctionCode();
  $("#correct-code").textContent = code || "?";
  $("#correct-ok").disabled = !code;
  document.querySelectorAll("#correct-colors button").forEach((b) => b.classList.toggle("chosen",
    correcting.joker ? b.dataset.color === "J" : ({ black: "K", red: "R", blue: "B", orange: "O" })[correcting.color] === b.dataset.color || correcting.color === b.dataset.color));
  document.querySelectorAll("#correct-numbers button").forEach((b) => {
    b.classList.toggle("chosen", !correcting.joker && +b.dataset.number === correcting.number);
    b.disabled = correcting.joker;
  });
}

$("#correct-colors").addEventListener("click", (e) => {
  const b = e.target.closest("[data-color]");
  if (!b) return;
  correcting.joker = b.dataset.color === "J";
  if (!correcting.joker) correcting.color = b.dataset.color;
  updateCorrection();
});
$("#correct-numbers").addEventListener("click", (e) => {
  const b = e.target.closest("[data-number]");
  if (!b) return;
  correcting.number = +b.dataset.number;
  updateCorrection();
});
$("#correct-dialog").addEventListener("close", async () => {
  if ($("#correct-dialog").returnValue !== "ok" || !correcting) return;
  const code = correctionCode();
  const tile = correcting.tile;
  correcting = null;
  const reading = await guard(() => api.correct(tile.id, code));
  if (reading) { setReading(reading); toast(`Tile corrected to ${code}.`, "info"); }
});

// ---- turn controls

$("#btn-pause").addEventListener("click", async () => {
  alerts.unlock();
  const turn = turnOf(state.game);
  const game = await guard(() => (turn && turn.paused ? api.resume() : api.pause()));
  if (game) onGame(game);
});
$("#btn-extend").addEventListener("click", async () => {
  const game = await guard(() => api.extend());
  if (game) onGame(game);
});

async function endTurn() {
  if (state.ending) return;
  state.ending = true;
  alerts.unlock();
  $("#btn-end").disabled = true;
  try {
    const v = await guard(() => api.endTurn());
    if (v) {
      state.verdict = v;
      alerts.say(verdictSpeech(v));
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
  if (state.game.state !== "playing" || !turnOf(state.game)) return;
  if (signature(r) === state.turnStartSig) return;
  const since = toMs(r.stable_since);
  if (Number.isNaN(since) || api.serverNow() - since < 5000) return;
  endTurn();
}

$("#btn-round-over").addEventListener("click", () => { state.tab = "roundend"; render(); });
$("#btn-back-play").addEventListener("click", () => goTab("play"));

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
