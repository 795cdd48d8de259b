// The score sheet, the next round and the end of the game.

import { onGame, render } from "../app.js";
import { $, alerts, api, guard, state } from "../common.js";
import { esc } from "../format.js";
import { t } from "../i18n.js";

export function renderSheet() {
  const g = state.game;
  const sheet = g.sheet || { rounds: [], totals: {} };
  const players = sheet.players || g.players.map((p) => p.name);
  const rounds = sheet.rounds || [];
  const totals = sheet.totals || {};
  const head = `<tr><th>${esc(t("sheet.player"))}</th>${rounds.map((r) => `<th>${esc(t("sheet.round_short", { round: r.number }))}</th>`).join("")}<th>${esc(t("sheet.total"))}</th></tr>`;
  const rows = players.map((p) => `<tr class="${p === sheet.leader ? "leader" : ""}"><th>${esc(p)}${p === sheet.leader ? " ★" : ""}</th>` +
    rounds.map((r) => {
      const s = r.scores ? r.scores[p] : null;
      return `<td class="${s > 0 ? "plus" : s < 0 ? "minus" : ""}">${s == null ? "" : (s > 0 ? "+" : "") + esc(s)}</td>`;
    }).join("") + `<td class="total">${esc(totals[p] ?? 0)}</td></tr>`).join("");
  $("#sheet").innerHTML = (rounds.length ? "" : `<p class="muted">${esc(t("sheet.none"))}</p>`) +
    `<table class="scores">${head}${rows}</table>` +
    (sheet.leader ? `<p class="leader-line">${esc(t("sheet.leader"))} <b>${esc(sheet.leader)}</b></p>` : "");
  $("#csv-link").href = api.fileUrl("/sheet.csv");
  $("#btn-next-round").hidden = g.state !== "round-over";
  $("#btn-finish").hidden = g.state !== "round-over";
  if (g.state === "finished" && sheet.leader) {
    $("#sheet").insertAdjacentHTML("afterbegin", `<p class="winner">${esc(t("sheet.winner", { player: sheet.leader }))}</p>`);
  }
}

$("#btn-finish").addEventListener("click", async () => {
  if (!window.confirm(t("sheet.finish_confirm"))) return;
  const game = await guard(() => api.finish());
  if (game) { onGame(game); alerts.say(game.sheet && game.sheet.leader ? t("say.wins", { player: game.sheet.leader }) : t("say.game_over")); }
});

$("#btn-next-round").addEventListener("click", () => {
  // The next round starts from the "who starts" screen, i.e. the game's setup step.
  state.tab = "start";
  render();
});
