// The finals as the console and the big screen show them: each seated stage's tables with
// their wins (a final to N wins) or summed points, and the winner once declared. Rendered
// from the `finals` of GET /standings (app/server/hallfinals.py).

import { t } from "../i18n.js";
import { esc } from "./hallapi.js";

function tableHtml(stage, table) {
  const score = (p) => (table.wins ? table.wins[p] : table.points[p]);
  const order = table.ranking || table.players;
  const progress = table.wins
    ? t("hall.wins_to", { wins: table.wins_needed })
    : t("hall.games_of", { games: table.games, needed: table.games_needed });
  return `<div class="finals-table" data-stage="${esc(stage)}" data-table="${table.table}">
    <h3>${esc(t(`hall.stage.${stage}`))} ${table.table > 1 || stage === "semi-final" ? table.table : ""}</h3>
    <p class="muted">${esc(progress)}</p>
    <ol>${order.map((p) => `<li>${esc(p)} <strong>${esc(score(p))}</strong></li>`).join("")}</ol></div>`;
}

export function finalsHtml(finals) {
  if (!finals || !finals.seated.length) return "";
  const winner = finals.winner ? `<p class="champion">${esc(t("hall.champion", { player: finals.winner }))}</p>` : "";
  // The stage playing first: the final above the semi-finals it came from.
  const stages = [...finals.seated].reverse();
  return `${winner}${stages.map((s) => s.tables.map((table) => tableHtml(s.stage, table)).join("")).join("")}`;
}

// The console's button label for the next stage; null when none is due.
export function nextStageLabel(finals) {
  if (!finals || !finals.next) return null;
  return t(finals.next === "final" ? "hall.seat_final" : "hall.seat_semis");
}
