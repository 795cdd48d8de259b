// Before the game: joining a table, a new game (players, edition, rules, timer) and who
// starts a round.

import { onGame, openGame, show, startPolling } from "../app.js";
import { $, KEYS, alerts, api, guard, loadJson, saveJson, state, toast, words } from "../common.js";
import { chip, chips, clock, esc } from "../format.js";
import { stopCamera } from "./table.js";

// ---------------------------------------------------------------- joining

export function rememberGame(game, token) {
  const games = loadJson(KEYS.games, []).filter((x) => x.id !== game.id);
  games.unshift({ id: game.id, token, players: (game.players || []).map((p) => p.name), at: Date.now() });
  saveJson(KEYS.games, games.slice(0, 10));
  saveJson(KEYS.current, { id: game.id, token });
}

export function readUrl() {
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

export function renderJoin() {
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

export async function showNewGame() {
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

export function renderStart() {
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
