// The table page: joins a table, runs a game's turns from the server's clock and readings,
// and shows verdicts, penalties, racks and the score sheet. The server holds the game; this
// page only keeps which game and key it uses (localStorage), so a reload or a second phone
// shows the same game and the same timer.

import { Alerts } from "./alerts.js";
import { Api, ApiError, toMs } from "./api.js";
import { cameraSupport, LiveCamera } from "./camera.js";
import {
  chip, chips, clock, esc, kindWord, penaltyHtml, plural, setChips, verdictHtml, verdictSpeech,
} from "./format.js";
import { Overlay } from "./overlay.js";

const $ = (sel) => document.querySelector(sel);
const api = new Api();
const alerts = new Alerts();
const overlay = new Overlay($("#overlay"));

const KEYS = { table: "rummikub.table", current: "rummikub.current", games: "rummikub.games", prefs: "rummikub.prefs" };
const TABLE_SAMPLES = ["table_runs_groups.jpg", "white_table.jpg", "scatter_light_wood.jpg"];
const RACK_SAMPLE = "rack_marble.jpg";

const state = {
  game: null,
  tab: "play",
  reading: null,
  readingKey: null,
  verdict: null,
  turnKey: null,
  turnStartSig: null,
  warned: false,
  lastTick: null,
  ending: false,
  camera: null,
  cameraTaken: null, // the server's words when another phone took over the camera
  mode: null,
  racks: {}, // player -> {codes, total, confirmed, photo_id}
  sampleIndex: 0,
  editions: [],
  prefs: loadJson(KEYS.prefs, { auto: false, photo: false }),
};

function loadJson(key, fallback) {
  try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch (_e) { return fallback; }
}
function saveJson(key, value) { localStorage.setItem(key, JSON.stringify(value)); }

// ---------------------------------------------------------------- messages

let toastTimer = null;
function toast(message, kind = "error") {
  const el = $("#toast");
  el.textContent = message;
  el.className = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, kind === "error" ? 8000 : 3500);
}

function words(error) {
  if (error instanceof ApiError) return error.message;
  return error && error.message ? error.message : "Something went wrong; try again.";
}

async function guard(fn) {
  try { return await fn(); } catch (e) { toast(words(e)); return undefined; }
}

// ---------------------------------------------------------------- screens

function show(id) {
  document.querySelectorAll(".screen").forEach((s) => { s.hidden = s.id !== id; });
  document.querySelectorAll("#tabs .tab").forEach((b) => b.classList.toggle("active", b.dataset.tab === state.tab));
  document.body.dataset.screen = id;
}

function render() {
  const g = state.game;
  $("#tabs").hidden = !g;
  if (!g) return;
  if (state.tab === "sheet") { renderSheet(); return show("screen-sheet"); }
  if (state.tab === "history") {
    // Fetched again only when a turn ended, so open entries stay open between polls.
    const key = `${state.turnKey}|${g.state}`;
    if (state.historyKey !== key || document.body.dataset.screen !== "screen-history") {
      state.historyKey = key;
      renderHistory();
    }
    return show("screen-history");
  }
  if (state.tab === "info") {
    if (document.body.dataset.screen !== "screen-info") renderInfo();
    return show("screen-info");
  }
  if (state.tab === "roundend" && g.state === "playing") {
    // Built once on entering: a poll must not wipe codes being typed.
    if (document.body.dataset.screen !== "screen-roundend") renderRoundEnd();
    return show("screen-roundend");
  }
  if (g.state === "setup" || (state.tab === "start" && g.state !== "playing")) {
    renderStart();
    return show("screen-start");
  }
  if (g.state === "round-over" || g.state === "finished") {
    state.tab = "sheet";
    renderSheet();
    return show("screen-sheet");
  }
  state.tab = "play";
  renderPlay();
  show("screen-play");
}

function goTab(tab) {
  state.tab = tab;
  render();
}

// ---------------------------------------------------------------- joining

function rememberGame(game, token) {
  const games = loadJson(KEYS.games, []).filter((x) => x.id !== game.id);
  games.unshift({ id: game.id, token, players: (game.players || []).map((p) => p.name), at: Date.now() });
  saveJson(KEYS.games, games.slice(0, 10));
  saveJson(KEYS.current, { id: game.id, token });
}

function readUrl() {
  const params = new URLSearchParams(location.search);
  const t = params.get("t");
  if (t) localStorage.setItem(KEYS.table, t);
  const g = params.get("g");
  const k = params.get("token") || params.get("k");
  if (g && k) saveJson(KEYS.current, { id: g, token: k });
  if (params.get("mode") === "photo") state.prefs.photo = true;
  if (t || g) {
    // Keep keys out of the address bar (and out of screenshots and shared tabs).
    const keep = params.get("mode") ? `?mode=${params.get("mode")}` : "";
    history.replaceState(null, "", location.pathname + keep);
  }
  // The printed table link opens "new game" (this phone's games are listed there to go
  // back to); a game's own link opens that game.
  return { table: !!t && !(g && k) };
}

function tokenFromLink(text) {
  const s = text.trim();
  try {
    const u = new URL(s, location.href);
    return u.searchParams.get("t") || null;
  } catch (_e) {
    return /^[A-Za-z0-9_-]{16,}$/.test(s) ? s : null;
  }
}

function renderJoin() {
  const games = loadJson(KEYS.games, []);
  $("#join-games").innerHTML = recentGamesHtml(games);
  show("screen-join");
}

function recentGamesHtml(games) {
  if (!games.length) return "";
  return `<h2>Games on this phone</h2><ul class="recent">` + games.map((x) =>
    `<li><button class="ghost wide" data-resume="${esc(x.id)}">${esc(x.players.join(", "))}` +
    `<span class="muted small"> · ${esc(new Date(x.at).toLocaleString())}</span></button></li>`).join("") + `</ul>`;
}

document.addEventListener("click", (e) => {
  const b = e.target.closest("[data-resume]");
  if (!b) return;
  const x = loadJson(KEYS.games, []).find((g) => g.id === b.dataset.resume);
  if (x) openGame(x.id, x.token);
});

$("#join-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const t = tokenFromLink($("#join-link").value);
  if (!t) { toast("That is not the link the server printed: it should end in ?t= and a long code."); return; }
  localStorage.setItem(KEYS.table, t);
  api.tableToken = t;
  showNewGame();
});

// ---------------------------------------------------------------- new game

function playerRow(name = "") {
  const li = document.createElement("li");
  li.innerHTML = `<input type="text" class="player" maxlength="24" autocomplete="off" placeholder="Name" value="${esc(name)}">` +
    `<button type="button" class="ghost small remove" aria-label="Remove player">✕</button>`;
  li.querySelector(".remove").addEventListener("click", () => { if ($("#players").children.length > 2) li.remove(); });
  return li;
}

async function showNewGame() {
  state.game = null;
  stopCamera();
  state.cameraTaken = null; // another game: this phone may film it
  $("#tabs").hidden = true;
  if (!$("#players").children.length) ["", ""].forEach((n) => $("#players").appendChild(playerRow(n)));
  $("#recent-games").innerHTML = recentGamesHtml(loadJson(KEYS.games, []));
  show("screen-new");
  if (!state.editions.length) {
    try { state.editions = await api.editions(); } catch (e) { toast(words(e)); }
    const sel = $("#edition");
    sel.innerHTML = (state.editions.length ? state.editions : [{ name: "original" }])
      .map((ed) => `<option value="${esc(ed.name)}">${esc(ed.name)}</option>`).join("");
    describeEdition();
    renderRuleSettings();
  }
}

function describeEdition() {
  const ed = state.editions.find((x) => x.name === $("#edition").value);
  const s = (ed && ed.settings) || {};
  const bits = [];
  if (s.jokers != null) bits.push(`${s.jokers} jokers`);
  if (s.copies != null) bits.push(`${s.copies} copies of each tile`);
  if (s.initial_meld_minimum != null) bits.push(`initial meld ${s.initial_meld_minimum}`);
  if (s.rack_joker_penalty != null) bits.push(`joker left on a rack ${s.rack_joker_penalty}`);
  if (s.timeout_penalty) bits.push(`timeout: ${String(s.timeout_penalty).replaceAll("-", " ")}`);
  if (s.turn_seconds) bits.push(`${clock(s.turn_seconds)} per turn`);
  $("#edition-note").textContent = bits.join(" · ");
}

// The §10 settings a game may override, in words; the server checks every value.
const RULE_FIELDS = [
  ["initial_meld_minimum", "number", "Initial meld: at least this many points"],
  ["table_play_in_initial_meld", "bool", "The initial-meld turn may also play on the table's sets"],
  ["joker_sets_splittable", "bool", "Sets holding a joker may be split"],
  ["freed_joker", { "same-turn": "A freed joker is played again in the same turn, anywhere",
    "new-set-with-two-rack-tiles": "A freed joker goes into a new set with two rack tiles" }],
  ["joker_freeing", { "tile-or-rearrange": "A joker is freed by its tile or by rearranging",
    "tile-from-rack": "A joker is freed only by its tile, from the rack" }],
  ["timeout_penalty", { "loose-tiles": "Time up: tiles in no valid set go back to the rack",
    "restore-table": "Time up: the whole table is restored" }],
  ["timeout_draw", "number", "Tiles drawn when time is up"],
  ["timeout_draw_when_valid", "number", "… even when the table is valid"],
  ["invalid_table_draw", "number", "Tiles drawn for an invalid table"],
  ["empty_turn_draw", "number", "Tiles drawn when nothing is laid"],
  ["rack_joker_penalty", "number", "A joker left on a rack counts"],
  ["pool_empty_scoring", { difference: "Pool empty: each loser pays the difference to the lowest rack",
    full: "Pool empty: each loser pays their full rack" }],
  ["jokers", "number", "Jokers in the box"],
  ["copies", "number", "Copies of each numbered tile"],
];

function renderRuleSettings() {
  const ed = state.editions.find((x) => x.name === $("#edition").value);
  const s = (ed && ed.settings) || {};
  $("#rule-settings").innerHTML = RULE_FIELDS.filter(([key]) => key in s).map(([key, kind, words]) => {
    const v = s[key];
    if (kind === "bool") {
      return `<label class="switch"><input type="checkbox" data-rule="${key}" ${v ? "checked" : ""}> ${esc(words)}</label>`;
    }
    if (kind === "number") {
      return `<label class="rule-number">${esc(words)} <input type="number" min="0" inputmode="numeric" data-rule="${key}" value="${esc(v)}"></label>`;
    }
    const options = { ...kind };
    if (!(v in options)) options[v] = v;
    return `<label>${esc(key.replaceAll("_", " "))}<select data-rule="${key}">` +
      Object.entries(options).map(([val, w]) => `<option value="${esc(val)}" ${val === v ? "selected" : ""}>${esc(w)}</option>`).join("") +
      `</select></label>`;
  }).join("");
}

// Only what differs from the edition goes to the server.
function ruleOverrides() {
  const ed = state.editions.find((x) => x.name === $("#edition").value);
  const s = (ed && ed.settings) || {};
  const out = {};
  document.querySelectorAll("#rule-settings [data-rule]").forEach((el) => {
    const key = el.dataset.rule;
    const value = el.type === "checkbox" ? el.checked : el.type === "number" ? Number(el.value) : el.value;
    if (value !== s[key]) out[key] = value;
  });
  return out;
}

$("#edition").addEventListener("change", () => {
  describeEdition();
  renderRuleSettings();
  // The edition's own turn length, until the players choose another.
  const ed = state.editions.find((x) => x.name === $("#edition").value);
  const t = ed && ed.settings ? ed.settings.turn_seconds : undefined;
  if (t === undefined) return;
  $("#timer-on").checked = t != null;
  if (t != null) $("#timer-seconds").value = String(Math.min(300, Math.max(30, t)));
  $("#timer-seconds").dispatchEvent(new Event("input"));
  $("#timer-on").dispatchEvent(new Event("change"));
});
$("#add-player").addEventListener("click", () => {
  if ($("#players").children.length < 6) $("#players").appendChild(playerRow());
});
$("#timer-seconds").addEventListener("input", () => { $("#timer-label").textContent = clock(+$("#timer-seconds").value); });
$("#timer-on").addEventListener("change", () => {
  $("#timer-seconds").disabled = $("#timer-extensions").disabled = !$("#timer-on").checked;
});

$("#new-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  alerts.unlock();
  const players = [...document.querySelectorAll("#players .player")].map((i) => i.value.trim()).filter(Boolean);
  if (players.length < 2) { toast("A game needs at least two players: write their names."); return; }
  if (new Set(players.map((p) => p.toLowerCase())).size !== players.length) {
    toast("Two players have the same name: give each a different one."); return;
  }
  const seconds = Math.min(300, Math.max(30, +$("#timer-seconds").value || 120));
  const body = {
    players,
    edition: $("#edition").value || "original",
    settings: ruleOverrides(),
    timer: { enabled: $("#timer-on").checked, seconds, extensions: Math.max(0, +$("#timer-extensions").value || 0) },
  };
  const game = await guard(() => api.createGame(body));
  if (!game) return;
  api.game = game.id;
  api.token = game.token;
  rememberGame(game, game.token);
  state.tab = "play";
  onGame(game);
  startPolling();
});

// ---------------------------------------------------------------- start of a round

function renderStart() {
  const g = state.game;
  const n = g.round ? g.round.number + 1 : 1;
  $("#start-title").textContent = `Round ${n}: who starts?`;
  const sel = $("#starter");
  const names = g.players.map((p) => p.name);
  const key = `${names.join("|")}#${n}`;
  if (sel.dataset.for !== key) {
    sel.innerHTML = names.map((p) => `<option>${esc(p)}</option>`).join("");
    sel.dataset.for = key;
    // The deal moves on: after round 1 the player after last round's starter begins.
    const previous = g.round ? names.indexOf(g.round.starter) : -1;
    sel.value = names[previous >= 0 ? (previous + 1) % names.length : 0];
  }
}

$("#draw-photo").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  e.target.value = "";
  if (!file) return;
  $("#draw-result").innerHTML = `<p class="muted">Reading the drawn tiles…</p>`;
  const r = await guard(() => api.startDraw(file));
  if (!r) { $("#draw-result").innerHTML = ""; return; }
  const drawn = r.drawn && r.drawn.length
    ? `<ul class="drawn">${r.drawn.map((d) => `<li>${chip(d.tile)} ${esc(d.player)}${d.player === r.starter ? " <b class=\"ok\">starts</b>" : ""}</li>`).join("")}</ul>`
    : `<p>${chips(r.tiles || [])}</p>`;
  $("#draw-result").innerHTML = `${drawn}<p class="message">${esc(r.message || "")}</p>` +
    ((r.ties || []).length ? `<p class="bad">Tie: ${esc(r.ties.join(", "))} draw again.</p>` : "");
  if (r.starter) $("#starter").value = r.starter;
  if (r.message) alerts.say(r.message);
});

$("#start-round").addEventListener("click", async () => {
  alerts.unlock();
  const game = await guard(() => api.startRound($("#starter").value));
  if (game) { state.verdict = null; state.tab = "play"; $("#draw-result").innerHTML = ""; onGame(game); }
});

// ---------------------------------------------------------------- the table

function turnOf(g) { return g && g.round && g.round.turn; }

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

function renderPlay() {
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

function renderCountdown() {
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

function meldNeeded() {
  const s = state.game && state.game.settings;
  return (s && s.initial_meld_minimum) || 30;
}

function renderVerdict() {
  const el = $("#verdict");
  el.hidden = !state.verdict;
  el.innerHTML = state.verdict ? verdictHtml(state.verdict, { meldNeeded: meldNeeded() }) : "";
  el.classList.toggle("timed-out", !!(state.verdict && state.verdict.timed_out));
  el.classList.toggle("illegal", !!(state.verdict && !state.verdict.legal));
}

function signature(reading) {
  if (!reading || !reading.tiles) return "";
  return reading.tiles.map((t) => (t.joker ? "J" : `${t.color}${t.number}`)).sort().join(",");
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

function setReading(reading) {
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
      // A frame too blurred, dark or overexposed: the table stays; say what to do.
      if (s === "refused" && detail) toast(String(detail), "info");
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

function stopCamera() {
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

async function sampleFile(name) {
  let response;
  try { response = await fetch(`/api/samples/${encodeURIComponent(name)}`); } catch (_e) { response = null; }
  if (!response || !response.ok) throw new Error("The sample photos are not available on this server.");
  const blob = await response.blob();
  return new File([blob], name, { type: blob.type || "image/jpeg" });
}

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

function maybeAutoEnd() {
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

// ---------------------------------------------------------------- round end

function renderRoundEnd() {
  const g = state.game;
  $("#re-round").textContent = g.round ? g.round.number : "";
  const sel = $("#re-winner");
  const names = g.players.map((p) => p.name);
  if (sel.dataset.for !== names.join("|")) {
    sel.innerHTML = names.map((p) => `<option value="${esc(p)}">${esc(p)}</option>`).join("") +
      `<option value="">Nobody — the pool is empty</option>`;
    sel.dataset.for = names.join("|");
  }
  // Whoever laid their last tile did it on their own turn: the likely winner.
  sel.value = turnOf(g) ? turnOf(g).player : names[0];
  renderRacks();
}

function rackPlayers() {
  const winner = $("#re-winner").value;
  return state.game.players.map((p) => p.name).filter((p) => p !== winner);
}

function renderRacks() {
  const el = $("#racks");
  el.innerHTML = rackPlayers().map((p) => {
    const r = state.racks[p] || {};
    return `<div class="card rack" data-player="${esc(p)}">
      <h3>${esc(p)}'s rack</h3>
      <div class="controls">
        <label class="button ghost file">Photograph the rack
          <input type="file" class="rack-photo" accept="image/*" capture="environment"></label>
        <button type="button" class="ghost small rack-sample">Sample rack</button>
      </div>
      <label>Tiles left on the rack (codes: K black, R red, B blue, O orange, J joker)
        <input type="text" class="rack-codes" autocomplete="off" autocapitalize="characters" value="${esc(r.codes || "")}" placeholder="R5 J K13"></label>
      <div class="rack-tiles">${r.tiles ? `${chips(r.tiles)} <b class="rack-total">${esc(r.total)} points</b>` : ""}</div>
      ${r.edge ? `<p class="small rack-warning"><b>${plural(r.edge, "tile")} at the photo's edge:</b> the edge may cut ${r.edge === 1 ? "it" : "them"} or hide more. Photograph the whole rack.</p>` : ""}
      ${(r.offRack || []).length ? `<p class="small rack-warning"><b>${plural(r.offRack.length, "tile")} off the rack, not counted:</b> ${r.offRack.map(esc).join(" ")}</p>` : ""}
      <label class="switch"><input type="checkbox" class="rack-ok" ${r.confirmed ? "checked" : ""} ${r.tiles ? "" : "disabled"}>
        These are ${esc(p)}'s tiles</label>
    </div>`;
  }).join("");
  updateCountButton();
}

function updateCountButton() {
  const all = rackPlayers().every((p) => state.racks[p] && state.racks[p].confirmed);
  $("#btn-count-round").disabled = !all;
}

function applyRack(player, r) {
  state.racks[player] = { codes: (r.tiles || []).join(" "), tiles: r.tiles || [], total: r.total, confirmed: false, photo_id: r.photo_id, edge: (r.edge_tiles || []).length, offRack: r.off_rack || [] };
  renderRacks();
}

$("#re-winner").addEventListener("change", renderRacks);
$("#racks").addEventListener("change", async (e) => {
  const card = e.target.closest(".rack");
  if (!card) return;
  const player = card.dataset.player;
  if (e.target.classList.contains("rack-photo")) {
    const file = e.target.files[0];
    e.target.value = "";
    if (!file) return;
    card.querySelector(".rack-tiles").innerHTML = `<span class="muted">Reading the rack…</span>`;
    const r = await guard(() => api.rackPhoto(player, file));
    if (r) applyRack(player, r); else renderRacks();
  } else if (e.target.classList.contains("rack-codes")) {
    const codes = e.target.value.trim();
    const r = await guard(() => api.rackCodes(player, codes));
    if (r) applyRack(player, r);
  } else if (e.target.classList.contains("rack-ok")) {
    if (state.racks[player]) state.racks[player].confirmed = e.target.checked;
    updateCountButton();
  }
});
$("#racks").addEventListener("click", async (e) => {
  const b = e.target.closest(".rack-sample");
  if (!b) return;
  const player = b.closest(".rack").dataset.player;
  await guard(async () => {
    const r = await api.rackPhoto(player, await sampleFile(RACK_SAMPLE));
    applyRack(player, r);
  });
});

$("#btn-count-round").addEventListener("click", async () => {
  const winner = $("#re-winner").value || null;
  const racks = {};
  for (const p of rackPlayers()) racks[p] = state.racks[p].codes;
  const game = await guard(() => api.endRound({ winner, racks, pool_empty: !winner }));
  if (!game) return;
  state.racks = {};
  state.verdict = null;
  state.tab = "sheet";
  onGame(game);
  const lead = game.sheet && game.sheet.leader;
  alerts.say(`Round over.${lead ? ` ${lead} leads.` : ""}`);
});

// ---------------------------------------------------------------- score sheet, history, info

function renderSheet() {
  const g = state.game;
  const sheet = g.sheet || { rounds: [], totals: {} };
  const players = sheet.players || g.players.map((p) => p.name);
  const rounds = sheet.rounds || [];
  const totals = sheet.totals || {};
  const head = `<tr><th>Player</th>${rounds.map((r) => `<th>R${esc(r.number)}</th>`).join("")}<th>Total</th></tr>`;
  const rows = players.map((p) => `<tr class="${p === sheet.leader ? "leader" : ""}"><th>${esc(p)}${p === sheet.leader ? " ★" : ""}</th>` +
    rounds.map((r) => {
      const s = r.scores ? r.scores[p] : null;
      return `<td class="${s > 0 ? "plus" : s < 0 ? "minus" : ""}">${s == null ? "" : (s > 0 ? "+" : "") + esc(s)}</td>`;
    }).join("") + `<td class="total">${esc(totals[p] ?? 0)}</td></tr>`).join("");
  $("#sheet").innerHTML = (rounds.length ? "" : `<p class="muted">No round counted yet.</p>`) +
    `<table class="scores">${head}${rows}</table>` +
    (sheet.leader ? `<p class="leader-line">Leader: <b>${esc(sheet.leader)}</b></p>` : "");
  $("#csv-link").href = api.fileUrl("/sheet.csv");
  $("#btn-next-round").hidden = g.state !== "round-over";
  $("#btn-finish").hidden = g.state !== "round-over";
  if (g.state === "finished" && sheet.leader) {
    $("#sheet").insertAdjacentHTML("afterbegin", `<p class="winner">Game over: <b>${esc(sheet.leader)}</b> wins.</p>`);
  }
}

$("#btn-finish").addEventListener("click", async () => {
  if (!window.confirm("Finish the game? No more rounds can be played.")) return;
  const game = await guard(() => api.finish());
  if (game) { onGame(game); alerts.say(game.sheet && game.sheet.leader ? `${game.sheet.leader} wins the game.` : "Game over."); }
});

$("#btn-next-round").addEventListener("click", () => {
  // The next round starts from the "who starts" screen, i.e. the game's setup step.
  state.tab = "start";
  render();
});

async function renderHistory() {
  const el = $("#history");
  let h;
  try { h = await api.history(); } catch (e) { el.innerHTML = `<p class="bad">${esc(words(e))}</p>`; return; }
  const turns = (h && h.turns) || [];
  if (!turns.length) { el.innerHTML = `<p class="muted">No turn has ended yet.</p>`; return; }
  el.innerHTML = turns.slice().reverse().map((t) => {
    const photos = Object.entries(t).filter(([k, v]) => /photo_id$/.test(k) && v != null)
      .map(([k, v]) => `<figure><img loading="lazy" src="${esc(api.fileUrl(`/photos/${encodeURIComponent(v)}`))}" alt="${esc(k)}"><figcaption>${esc(k.replace(/_?photo_id$/, "") || "photo")}</figcaption></figure>`).join("");
    return `<details class="card turn ${t.legal ? "legal" : "illegal"}"><summary><b>${esc(t.round != null ? `R${t.round} · ` : "")}Turn ${esc(t.turn)}</b> ${esc(t.player)}: ` +
      `${t.timed_out ? "time ran out" : t.legal ? "legal" : "not legal"} · ${plural((t.played || []).length, "tile")} played</summary>` +
      verdictHtml(t, { meldNeeded: meldNeeded() }) + (photos ? `<div class="photos">${photos}</div>` : "") + `</details>`;
  }).join("");
}

function renderInfo() {
  const g = state.game;
  const base = `${location.origin}${location.pathname}`;
  const link = `${base}?g=${encodeURIComponent(g.id)}&token=${encodeURIComponent(api.token)}`;
  const watch = g.watch_token ? `${base}?g=${encodeURIComponent(g.id)}&token=${encodeURIComponent(g.watch_token)}` : null;
  const t = g.timer || {};
  $("#info").innerHTML = `<dl class="facts">
    <dt>Players</dt><dd>${g.players.map((p) => `${esc(p.name)}${p.melded ? " ✓" : ""}`).join(", ")}</dd>
    <dt>Edition</dt><dd>${esc(g.edition)}</dd>
    <dt>Timer</dt><dd>${t.enabled ? `${clock(t.seconds)} per turn${t.extensions ? `, ${plural(t.extensions, "extension")}` : ""}` : "off"}</dd>
    <dt>Round</dt><dd>${g.round ? esc(g.round.number) : "not started"}</dd></dl>
    <p>A second phone joins this game with this link (it can change the game):</p>
    <p><input readonly class="link" value="${esc(link)}"></p>
    <img class="qr" alt="QR code of that link" src="/api/qr.svg?data=${encodeURIComponent(link)}" onerror="this.remove()">` +
    (watch ? `<p>Spectators watch with this link (read only):</p><p><input readonly class="link" value="${esc(watch)}"></p>` : "") +
    `<p>A laptop's webcam feeds this game without a browser:</p><p><input readonly class="link" value="${esc(
      `rummikub watch --server ${location.origin} --game=${g.id} --token=${api.token} --camera 0`)}"></p>`;
}

$("#btn-new-game").addEventListener("click", () => {
  localStorage.removeItem(KEYS.current);
  stopPolling();
  state.tab = "play";
  showNewGame();
});

document.querySelectorAll("#tabs .tab").forEach((b) => b.addEventListener("click", () => goTab(b.dataset.tab)));

// ---------------------------------------------------------------- the game from the server

async function verdictOfTurn(turnNumber) {
  const g = state.game;
  if (g.last_verdict && (turnNumber == null || g.last_verdict.turn === turnNumber)) return g.last_verdict;
  try {
    const h = await api.history();
    const turns = (h && h.turns) || [];
    const match = turns.filter((t) => turnNumber == null || t.turn === turnNumber);
    return match.length ? match[match.length - 1] : null;
  } catch (_e) {
    return null;
  }
}

async function onGame(game) {
  if (!game) return;
  const before = state.turnKey;
  const prevTurn = turnOf(state.game);
  const prevRound = state.game && state.game.round ? state.game.round.number : null;
  // A new round starts with a clean slate on every phone.
  if (game.round && prevRound != null && game.round.number !== prevRound) {
    state.verdict = game.last_verdict || null;
  }
  state.game = game;
  // Only the holder of the game's token gets it back: anyone else watches.
  state.spectator = !game.token;
  document.body.classList.toggle("spectator", state.spectator);
  const turn = turnOf(game);
  const key = turn ? `${game.round.number}:${turn.number}` : `${game.state}`;
  if (key !== before) {
    state.turnKey = key;
    state.warned = false;
    state.lastTick = null;
    state.turnStartSig = signature(game.table || state.reading);
    if (before && prevTurn && (!state.verdict || state.verdict.turn !== prevTurn.number)) {
      // The turn ended elsewhere: a timeout, or another phone pressed "end turn".
      const v = await verdictOfTurn(prevTurn.number);
      if (v) { state.verdict = v; alerts.say(verdictSpeech(v)); }
    }
    if (turn && game.state === "playing") alerts.say(`${turn.player}, your turn.`);
  }
  if (!before && !state.verdict && game.last_verdict) state.verdict = game.last_verdict;
  setReading(game.table || null);
  render();
  maybeAutoEnd();
}

let refreshing = null;
function refresh() {
  // One request at a time: a slow server gets no pile of polls.
  if (!refreshing) refreshing = doRefresh().finally(() => { refreshing = null; });
  return refreshing;
}

async function doRefresh() {
  try {
    const game = await api.getGame();
    await onGame(game);
    return game;
  } catch (e) {
    if (e instanceof ApiError && (e.status === 401 || e.status === 404)) {
      stopPolling();
      localStorage.removeItem(KEYS.current);
      toast(`${e.message} Start a new game or open the game's link again.`);
      state.game = null;
      boot();
    } else {
      toast(words(e));
    }
    return null;
  }
}

let pollTimer = null;
let clockTimer = null;
function startPolling() {
  stopPolling();
  pollTimer = setInterval(refresh, 1000);
  // The countdown runs (and warns, and ticks) whichever tab is open.
  clockTimer = setInterval(renderCountdown, 200);
}
function stopPolling() { clearInterval(pollTimer); clearInterval(clockTimer); pollTimer = clockTimer = null; }

async function openGame(id, token) {
  if (api.game !== id) state.cameraTaken = null;
  api.game = id;
  api.token = token;
  saveJson(KEYS.current, { id, token });
  const game = await refresh();
  if (game) {
    rememberGame(game, token);
    startPolling();
  }
}

function boot() {
  const opened = readUrl();
  api.tableToken = localStorage.getItem(KEYS.table);
  if (opened.table) { showNewGame(); return; }
  const current = loadJson(KEYS.current, null);
  if (current && current.id && current.token) { openGame(current.id, current.token); return; }
  if (api.tableToken) { showNewGame(); return; }
  renderJoin();
}

document.addEventListener("click", () => alerts.unlock(), { once: true });
// For tests and the curious: what the page has said and what it shows.
window.rummikub = { state, alerts, api };
boot();
