// The score sheet, the next round and the end of the game.

import { onGame, render } from "../app.js";
import { $, alerts, api, guard, state } from "../common.js";
import { esc } from "../format.js";

// ---------------------------------------------------------------- score sheet, history, info

export function renderSheet() {
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
