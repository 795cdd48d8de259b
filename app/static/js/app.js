// The table page: joins a table, runs a game's turns from the server's clock and readings,
// and shows verdicts, penalties, racks and the score sheet. The server holds the game; this
// page only keeps which game and key it uses (localStorage), so a reload or a second phone
// shows the same game and the same timer. Each screen is its own module under screens/.

import {
  $, KEYS, alerts, api, hooks, loadJson, overlay, saveJson, sayVerdict, signature, state, toast, turnOf,
  words,
} from "./common.js";
import { ApiError } from "./api.js";
import { preferredLanguage, setLanguage, t } from "./i18n.js";
import { renderInfo } from "./screens/game.js";
import { renderHistory } from "./screens/history.js";
import { renderRoundEnd } from "./screens/racks.js";
import { renderSheet } from "./screens/scores.js";
import { readUrl, rememberGame, renderJoin, renderStart, showNewGame } from "./screens/setup.js";
import { maybeAutoEnd, renderBanner, renderCountdown, renderPlay, setReading } from "./screens/table.js";
import "./screens/corrections.js";

// ---------------------------------------------------------------- screens

export function show(id) {
  document.querySelectorAll(".screen").forEach((s) => { s.hidden = s.id !== id; });
  document.querySelectorAll("#tabs .tab").forEach((b) => b.classList.toggle("active", b.dataset.tab === state.tab));
  document.body.dataset.screen = id;
}

export function render() {
  const g = state.game;
  $("#tabs").hidden = !g;
  renderBanner();
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
  // Someone went out: every phone counts the racks (the turn is stopped on the server).
  if (g.state === "playing" && g.round && g.round.counting && !["sheet", "history", "info"].includes(state.tab)) state.tab = "roundend";
  if (state.tab === "roundend" && g.state === "playing" && !(g.round && g.round.counting)) state.tab = "play";
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

export function goTab(tab) {
  state.tab = tab;
  render();
}

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

export async function onGame(game) {
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
      if (v) { state.verdict = v; sayVerdict(v); }
    }
    if (turn && game.state === "playing") alerts.say(t("say.your_turn", { player: turn.player }));
  }
  if (!before && !state.verdict && game.last_verdict) state.verdict = game.last_verdict;
  setReading(game.table || null);
  render();
  maybeAutoEnd();
}

let refreshing = null;
export function refresh() {
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
      toast(`${words(e)} ${t("page.open_again")}`);
      state.game = null;
      // The catalogue first: every screen words itself from it.
setLanguage(preferredLanguage()).finally(boot);
    } else {
      toast(words(e));
    }
    return null;
  }
}

let pollTimer = null;
let clockTimer = null;
export function startPolling() {
  stopPolling();
  pollTimer = setInterval(refresh, 1000);
  // The countdown runs (and warns, and ticks) whichever tab is open.
  clockTimer = setInterval(renderCountdown, 200);
}
export function stopPolling() { clearInterval(pollTimer); clearInterval(clockTimer); pollTimer = clockTimer = null; }

export async function openGame(id, token) {
  if (api.game !== id) { state.cameraTaken = null; state.cameraAsked = false; }
  api.game = id;
  api.token = token;
  saveJson(KEYS.current, { id, token });
  const game = await refresh();
  if (game) {
    rememberGame(game, token);
    startPolling();
  }
}

hooks.refresh = refresh;

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
window.rummikub = { state, alerts, api, overlay };
// The catalogue first: every screen words itself from it.
setLanguage(preferredLanguage()).finally(boot);
