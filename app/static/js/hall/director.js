// The director's console: every table at a glance, the referee calls, a turn in dispute,
// overrides with a reason, the standings and the audit log. Live: the tournament's socket
// says what changed and only that is fetched again (hallsocket.js).

import { preferredLanguage, setLanguage, t } from "../i18n.js";
import { finalsHtml, nextStageLabel } from "./finals.js";
import { call, esc, path, showError, tieBreak, token, tournament } from "./hallapi.js";
import { ALL, coalesced, follow } from "./hallsocket.js";

const $ = (sel) => document.querySelector(sel);
let summary = null;
let consoleView = null;
let entries = null;

function gameLink(table) {
  return `${location.origin}/?g=${encodeURIComponent(table.game_id)}&token=${encodeURIComponent(table.token)}`;
}

function photoUrl(gameId, photoId, watch) {
  return `/api/games/${encodeURIComponent(gameId)}/photos/${encodeURIComponent(photoId)}?token=${encodeURIComponent(watch)}`;
}

function flags(table) {
  const names = { invalid_set: "hall.flag.invalid_set", timeout: "hall.flag.timeout", camera_lost: "hall.flag.camera_lost", referee_called: "hall.flag.referee_called" };
  return Object.entries(names).filter(([k]) => table.flags[k]).map(([, key]) => `<span class="flag">${esc(t(key))}</span>`).join("");
}

function renderTables() {
  $("#tables").innerHTML = consoleView.tables.map((table) => `
    <div class="table-card" data-table="${table.number}">
      <h3>${esc(t("hall.table_n", { number: table.number }))}</h3>
      <div>${table.players.map(esc).join(", ")}</div>
      <div>${esc(t("hall.turn_of", { player: table.turn || "–" }))}
        ${table.remaining_s == null ? "" : `<span class="time-left" data-ends="${Date.now() / 1000 + table.remaining_s}" data-paused="${table.paused}">${esc(t("hall.time_left", { seconds: Math.ceil(table.remaining_s) }))}</span>`}
        ${table.paused ? esc(t("hall.paused")) : ""}</div>
      <div class="muted">${esc(table.last_verdict ? table.last_verdict.message : t("hall.no_verdict"))}</div>
      <div>${esc(t("hall.games_played", { count: table.games_played }))}</div>
      <div>${flags(table)}</div>
    </div>`).join("") || `<p>${esc(t("hall.no_tables"))}</p>`;
}

function renderCalls() {
  $("#calls").innerHTML = consoleView.calls.map((c) => {
    const table = consoleView.tables.find((x) => x.game_id === c.game_id) || {};
    const picture = c.photo_id ? `<img alt="" src="${photoUrl(c.game_id, c.photo_id, table.watch_token)}">` : "";
    return `<form class="call row" data-call="${c.id}">
      <strong>${esc(t("hall.table_n", { number: table.number }))}</strong>${picture}
      <input name="answer" placeholder="${esc(t("hall.answer_hint"))}">
      <button>${esc(t("hall.answer"))}</button></form>`;
  }).join("") || `<p>${esc(t("hall.no_calls"))}</p>`;
}

function renderStandings(data) {
  const breaks = data.tie_breaks;
  // A bye column only where someone sat out (5 players, or an odd count in pairs).
  const byes = data.standings.some((s) => s.byes);
  $("#standings").innerHTML = `<table class="standings"><tr><th>#</th><th>${esc(t("hall.player"))}</th><th>${esc(t("hall.points"))}</th>
    ${breaks.map((b) => `<th>${esc(tieBreak(b))}</th>`).join("")}${byes ? `<th>${esc(t("hall.byes"))}</th>` : ""}</tr>
    ${data.standings.map((s) => `<tr><td>${s.place}</td><td>${esc(s.player)}</td><td>${s.tournament_points}</td>
      ${breaks.map((b) => `<td>${esc(s.tie_breaks[b] ?? "")}</td>`).join("")}${byes ? `<td>${s.byes || ""}</td>` : ""}</tr>`).join("")}</table>`;
}

function renderFinals(data) {
  const label = nextStageLabel(data.finals);
  $("#btn-finals").hidden = !label;
  if (label) $("#btn-finals").textContent = label;
  // The qualifying rounds are all seated: the next is a finals stage, not a round.
  $("#btn-seat").hidden = Boolean(data.finals) && data.round >= data.rounds;
  $("#finals").innerHTML = finalsHtml(data.finals);
  $("#finals-section").hidden = !$("#finals").innerHTML;
}

function renderLog(entries) {
  $("#log").innerHTML = entries.map((e) => `<li><code>${esc(e.kind)}</code> ${esc(JSON.stringify(e.body))}
    ${e.reason ? `— ${esc(e.reason)}` : ""} <span class="muted">(${esc(e.by)}, ${new Date(e.at * 1000).toLocaleTimeString()})</span></li>`).join("");
}

function renderSheets() {
  $("#sheets").innerHTML = consoleView.tables.map((table) => `<div class="sheet">
    <h2>${esc(t("hall.table_n", { number: table.number }))}</h2>
    <p>${esc(consoleView.stage === "round" ? t("hall.round_n", { number: consoleView.round }) : t(`hall.stage.${consoleView.stage}`))}</p>
    <ol>${table.players.map((p, i) => `<li>${esc(t("hall.seat_n", { number: i + 1 }))}: ${esc(p)}</li>`).join("")}</ol>
    <img alt="" src="/api/qr.svg?data=${encodeURIComponent(gameLink(table))}">
    <p>${esc(t("hall.scan"))}</p></div>`).join("");
}

// The time left counts down here between changes (the server tells when a turn ends).
function tickTimes() {
  for (const el of document.querySelectorAll(".time-left[data-paused=false]")) {
    const seconds = Math.max(0, Math.ceil(Number(el.dataset.ends) - Date.now() / 1000));
    el.textContent = t("hall.time_left", { seconds });
  }
}

// Fetches the parts that changed (all of them when not told) and shows everything.
async function refresh(parts = ALL) {
  const want = new Set(parts);
  try {
    if (!summary || want.has("standings") || want.has("settings")) summary = await call("GET", path());
    if (!consoleView || want.has("tables") || want.has("calls") || want.has("settings")) consoleView = await call("GET", path("/console"));
    if (!entries || want.has("log")) entries = (await call("GET", path("/log"))).log;
    $("#title").textContent = `${summary.name} — ${t("hall.director")}`;
    $("#round-label").textContent = t("hall.round_of", { number: summary.round, rounds: summary.rounds });
    $("#btn-pause").textContent = summary.settings.paused ? t("hall.resume_all") : t("hall.pause_all");
    $("#timer").value = summary.settings.timer;
    renderTables();
    // Not while the director types an answer: the poll would wipe it.
    if (!document.activeElement || !document.activeElement.matches("#calls input")) renderCalls();
    renderStandings(summary);
    renderFinals(summary);
    renderLog(entries);
    if (location.hash === "#sheets") renderSheets();
    // A refresh clears only its own error: an action's refusal stays until the next action.
    if (pollFailed) showError($("#error"), null);
    pollFailed = false;
  } catch (error) {
    pollFailed = true;
    showError($("#error"), error);
  }
}

let pollFailed = false;

// One fetch at a time, whoever asks: the socket's changes and the director's own actions.
const update = coalesced(refresh);

async function act(fn) {
  try { await fn(); showError($("#error"), null); } catch (error) { showError($("#error"), error); }
  await update(ALL);
}

$("#btn-seat").addEventListener("click", () => act(() => call("POST", path("/rounds"), { round: summary.round + 1 })));
$("#btn-finals").addEventListener("click", () => act(() => call("POST", path("/finals"), { stage: summary.finals.next })));
$("#btn-pause").addEventListener("click", () => act(() => call("POST", path("/pause"), { paused: !summary.settings.paused })));
$("#timer").addEventListener("change", (e) => act(() => call("POST", path("/settings"), { timer: e.target.value })));

$("#calls").addEventListener("submit", (e) => {
  e.preventDefault();
  const form = e.target;
  act(() => call("POST", path(`/calls/${form.dataset.call}/answer`), { answer: form.answer.value }));
});

function scoresOf(text) {
  const out = {};
  for (const part of text.split(",")) {
    const [name, value] = part.split("=").map((s) => s.trim());
    if (name) out[name] = Number.parseInt(value, 10);
  }
  return out;
}

function tilesOf(text) {
  return text.split(/[\s,]+/).filter((code) => code && code !== "-");
}

$("#override-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const f = e.target;
  const kind = f.kind.value;
  const body = { round: Number(f.round.value), table: Number(f.table.value) };
  if (kind === "score" || kind === "result") body.game = Number(f.number.value);
  else body.turn = Number(f.number.value);
  if (kind === "score") { body.player = f.player.value.trim(); body.score = Number.parseInt(f.score.value, 10); }
  if (kind === "result") body.scores = scoresOf(f.score.value);
  if (kind === "set-valid") body.set = tilesOf(f.set.value);
  // Drawn tiles matter only once the round is counted: the server asks for them then.
  if ((kind === "set-valid" || kind === "void-turn") && f.drawn.value.trim()) body.drawn = tilesOf(f.drawn.value);
  act(async () => {
    const done = await call("POST", path("/overrides"), { kind, body, reason: f.reason.value });
    $("#override-effect").textContent = done.effect || "";
    f.reason.value = "";
  });
});

function overlaySvg(reading) {
  if (!reading) return "";
  const bad = new Set(reading.sets.filter((s) => !s.valid).flatMap((s) => s.tiles));
  const shapes = reading.tiles.map((tile) => `<polygon points="${tile.corners.map((p) => p.join(",")).join(" ")}"
    fill="none" stroke="${bad.has(tile.id) ? "#f44" : "#4f4"}" stroke-width="${Math.max(2, reading.width / 400)}"/>`).join("");
  return `<svg viewBox="0 0 ${reading.width} ${reading.height}" preserveAspectRatio="none">${shapes}</svg>`;
}

$("#dispute-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = e.target;
  try {
    const d = await call("GET", path(`/turns/${f.round.value}/${f.table.value}/${f.turn.value}`));
    const v = d.verdict;
    const side = (key, id, reading) => (id ? `<figure><img alt="" src="${photoUrl(d.game_id, id, d.watch_token)}">${overlaySvg(reading)}
      <figcaption>${esc(t(key))}</figcaption></figure>` : "");
    $("#dispute").innerHTML = `<div class="photos">${side("hall.before", v.before_photo_id, d.readings.before)}${side("hall.after", v.after_photo_id, d.readings.after)}</div>
      <p><strong>${esc(t("hall.turn_by", { player: v.player }))}</strong> ${esc(v.message)}</p>
      <p>${esc(t(v.timed_out ? "hall.ended_timeout" : "hall.ended_player"))}</p>
      <p>${esc(t("hall.corrections", { count: d.corrections.length }))}</p>
      <ul>${d.overrides.map((o) => `<li>${esc(o.kind)} — ${esc(o.reason)}</li>`).join("")}</ul>`;
    showError($("#error"), null);
  } catch (error) {
    showError($("#error"), error);
  }
});

async function start() {
  await setLanguage(preferredLanguage());
  $("#link-screen").href = `screen.html?t=${encodeURIComponent(tournament)}`;
  $("#link-sheets").href = `director.html?t=${encodeURIComponent(tournament)}&token=${encodeURIComponent(token)}#sheets`;
  $("#link-export").href = `${path("/export.json")}?token=${encodeURIComponent(token)}`;
  if (location.hash === "#sheets") {
    document.querySelector(".console").hidden = true;
    document.body.classList.add("print-sheets");
    $("#sheets").hidden = false;
  }
  await refresh();
  const summaryWatch = summary && summary.watch_token;
  if (summaryWatch) $("#link-screen").href += `&token=${encodeURIComponent(summaryWatch)}`;
  follow({ onChange: update, status: $("#live-status") });
  setInterval(tickTimes, 1000);
}

start();
