// Before the game: joining a table, a new game (players, edition, rules, timer) and who
// starts a round.

import { onGame, openGame, show, startPolling } from "../app.js";
import { $, KEYS, alerts, api, guard, loadJson, saveJson, state, toast, words } from "../common.js";
import { chip, chips, clock, esc } from "../format.js";
import { t } from "../i18n.js";
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
  const table = params.get("t");
  if (table) localStorage.setItem(KEYS.table, table);
  const g = params.get("g");
  const k = params.get("token") || params.get("k");
  if (g && k) saveJson(KEYS.current, { id: g, token: k });
  if (params.get("mode") === "photo") state.prefs.photo = true;
  if (table || g) {
    // Keep keys out of the address bar (and out of screenshots and shared tabs).
    const keep = params.get("mode") ? `?mode=${params.get("mode")}` : "";
    history.replaceState(null, "", location.pathname + keep);
  }
  // The printed table link opens "new game", with the games running at this table listed
  // first to join; a game's own link opens that game.
  return { table: !!table && !(g && k) };
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
  return `<h2>${esc(t("new.recent"))}</h2><ul class="recent">` + games.map((x) =>
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
  const table = tokenFromLink($("#join-link").value);
  if (!table) { toast(t("join.bad_link")); return; }
  localStorage.setItem(KEYS.table, table);
  api.tableToken = table;
  showNewGame();
});

// ---------------------------------------------------------------- new game

function playerRow(name = "") {
  const li = document.createElement("li");
  li.innerHTML = `<input type="text" class="player" maxlength="24" autocomplete="off" placeholder="${esc(t("new.name"))}" value="${esc(name)}">` +
    `<button type="button" class="ghost small remove" aria-label="${esc(t("new.remove"))}">✕</button>`;
  li.querySelector(".remove").addEventListener("click", () => { if ($("#players").children.length > 2) li.remove(); });
  return li;
}

export async function showNewGame() {
  state.game = null;
  stopCamera();
  state.cameraTaken = null; // another game: this phone may film it
  state.cameraAsked = false;
  $("#tabs").hidden = true;
  $("#turn-banner").hidden = true;
  if (!$("#players").children.length) ["", ""].forEach((n) => $("#players").appendChild(playerRow(n)));
  $("#recent-games").innerHTML = recentGamesHtml(loadJson(KEYS.games, []));
  show("screen-new");
  renderRunningGames();
  if (!state.editions.length) {
    try { state.editions = await api.editions(); } catch (e) { toast(words(e)); }
    const sel = $("#edition");
    sel.innerHTML = (state.editions.length ? state.editions : [{ name: "original" }])
      .map((ed) => `<option value="${esc(ed.name)}">${esc(t(`edition.${ed.name}`))}</option>`).join("");
    describeEdition();
    renderRuleSettings();
  }
}

function describeEdition() {
  const ed = state.editions.find((x) => x.name === $("#edition").value);
  const s = (ed && ed.settings) || {};
  const bits = [];
  if (s.jokers != null) bits.push(t("edition.jokers", { count: s.jokers }));
  if (s.copies != null) bits.push(t("edition.copies", { count: s.copies }));
  if (s.initial_meld_minimum != null) bits.push(t("edition.meld", { points: s.initial_meld_minimum }));
  if (s.turn_seconds) bits.push(t("edition.turn", { time: clock(s.turn_seconds) }));
  $("#edition-note").textContent = bits.join(" · ");
}

// The rule settings a game may override, each with its name and a one-line explanation
// in the catalogue (rule.<key>, rule.<key>.help, rule.<key>.<value>); the server checks
// every value.
const RULE_FIELDS = [
  ["initial_meld_minimum", "number"],
  ["table_play_in_initial_meld", "bool"],
  ["joker_sets_splittable", "bool"],
  ["freed_joker", ["same-turn", "new-set-with-two-rack-tiles"]],
  ["joker_freeing", ["tile-or-rearrange", "tile-from-rack"]],
  ["timeout_penalty", ["loose-tiles", "restore-table"]],
  ["timeout_draw", "number"],
  ["timeout_draw_when_valid", "number"],
  ["invalid_table_draw", "number"],
  ["empty_turn_draw", "number"],
  ["rack_joker_penalty", "number"],
  ["pool_empty_scoring", ["difference", "full"]],
  ["jokers", "number"],
  ["copies", "number"],
];
export const RULE_KEYS = RULE_FIELDS.map(([key, kind]) => [key, Array.isArray(kind) ? kind : []]);

function renderRuleSettings() {
  const ed = state.editions.find((x) => x.name === $("#edition").value);
  const s = (ed && ed.settings) || {};
  $("#rule-settings").innerHTML = RULE_FIELDS.filter(([key]) => key in s).map(([key, kind]) => {
    const v = s[key];
    const help = `<span class="rule-help muted small">${esc(t(`rule.${key}.help`))}</span>`;
    if (kind === "bool") {
      return `<label class="switch rule"><input type="checkbox" data-rule="${key}" ${v ? "checked" : ""}> <span>${esc(t(`rule.${key}`))}${help}</span></label>`;
    }
    if (kind === "number") {
      return `<label class="rule-number rule"><span>${esc(t(`rule.${key}`))}${help}</span> <input type="number" min="0" inputmode="numeric" data-rule="${key}" value="${esc(v)}"></label>`;
    }
    const options = kind.includes(v) ? kind : [...kind, v];
    return `<label class="rule"><span>${esc(t(`rule.${key}`))}${help}</span><select data-rule="${key}">` +
      options.map((val) => `<option value="${esc(val)}" ${val === v ? "selected" : ""}>${esc(t(`rule.${key}.${val}`))}</option>`).join("") +
      `</select></label>`;
  }).join("");
}

// Games running at this table (the table token lists them): a second phone joins one
// instead of starting another.
async function renderRunningGames() {
  const el = $("#running-games");
  el.innerHTML = "";
  if (!api.tableToken) return;
  let games = [];
  try { games = await api.games(); } catch (_e) { return; }
  const open = (games || []).filter((x) => x.state !== "finished" && x.token).reverse();
  if (!open.length) return;
  el.innerHTML = `<div class="card join-running"><h2>${esc(t("new.running"))}</h2><ul class="recent">` +
    open.map((x) => `<li><button class="primary wide" data-join="${esc(x.id)}">${esc(t("new.join_game", { players: x.players.join(", ") }))}</button></li>`).join("") +
    `</ul></div>`;
  el.querySelectorAll("[data-join]").forEach((b) => b.addEventListener("click", () => {
    const x = open.find((g) => g.id === b.dataset.join);
    if (x) { state.tab = "play"; openGame(x.id, x.token); }
  }));
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
  const seconds = ed && ed.settings ? ed.settings.turn_seconds : undefined;
  if (seconds === undefined) return;
  $("#timer-on").checked = seconds != null;
  if (seconds != null) $("#timer-seconds").value = String(Math.min(300, Math.max(30, seconds)));
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
  if (players.length < 2) { toast(t("new.two_players")); return; }
  if (new Set(players.map((p) => p.toLowerCase())).size !== players.length) {
    toast(t("new.same_name")); return;
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
  $("#start-title").textContent = t("start.title", { round: n });
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
  $("#draw-result").innerHTML = `<p class="muted">${esc(t("start.reading"))}</p>`;
  const r = await guard(() => api.startDraw(file));
  if (!r) { $("#draw-result").innerHTML = ""; return; }
  const drawn = r.drawn && r.drawn.length
    ? `<ul class="drawn">${r.drawn.map((d) => `<li>${chip(d.tile)} ${esc(d.player)}${d.player === r.starter ? ` <b class="ok">${esc(t("start.starts"))}</b>` : ""}</li>`).join("")}</ul>`
    : `<p>${chips(r.tiles || [])}</p>`;
  const said = r.starter ? t("start.starter_is", { player: r.starter }) : "";
  $("#draw-result").innerHTML = `${drawn}<p class="message">${esc(said)}</p>` +
    ((r.ties || []).length ? `<p class="bad">${esc(t("start.tie", { players: r.ties.join(", ") }))}</p>` : "");
  if (r.starter) $("#starter").value = r.starter;
  if (said) alerts.say(said);
});

$("#start-round").addEventListener("click", async () => {
  alerts.unlock();
  const game = await guard(() => api.startRound($("#starter").value));
  if (game) { state.verdict = null; state.tab = "play"; $("#draw-result").innerHTML = ""; onGame(game); }
});
