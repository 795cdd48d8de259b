// The big screen: the standings (rank, points, tie-break values) and this round's tables,
// read-only with the tournament's watch token. Live: the tournament's socket says when the
// standings changed, and only then are they fetched (hallsocket.js); no reload, no polling.

import { preferredLanguage, setLanguage, t } from "../i18n.js";
import { finalsHtml } from "./finals.js";
import { call, esc, path, showError, tieBreak } from "./hallapi.js";
import { coalesced, follow } from "./hallsocket.js";

const $ = (sel) => document.querySelector(sel);

async function refresh() {
  try {
    const data = await call("GET", path("/standings"));
    $("#title").textContent = data.name;
    $("#round-label").textContent = data.stage && data.stage !== "round"
      ? t(`hall.stage.${data.stage}`) : t("hall.round_of", { number: data.round, rounds: data.rounds });
    const breaks = data.tie_breaks;
    const byes = data.standings.some((s) => s.byes);
    $("#standings").innerHTML = `<tr><th>#</th><th>${esc(t("hall.player"))}</th><th>${esc(t("hall.points"))}</th>
      ${breaks.map((b) => `<th>${esc(tieBreak(b))}</th>`).join("")}${byes ? `<th>${esc(t("hall.byes"))}</th>` : ""}</tr>
      ${data.standings.map((s) => `<tr><td>${s.place}</td><td>${esc(s.player)}</td><td>${s.tournament_points}</td>
        ${breaks.map((b) => `<td>${esc(s.tie_breaks[b] ?? "")}</td>`).join("")}${byes ? `<td>${s.byes || ""}</td>` : ""}</tr>`).join("")}`;
    $("#finals").innerHTML = finalsHtml(data.finals);
    $("#finals-section").hidden = !$("#finals").innerHTML;
    // During the finals their tables show under Finals instead.
    const tables = data.seating && data.stage === "round" ? data.seating.tables : [];
    $("#seating-section").hidden = data.stage !== "round";
    $("#seating").innerHTML = tables.map((players, i) => `<li><strong>${esc(t("hall.table_n", { number: i + 1 }))}</strong>: ${players.map(esc).join(", ")}</li>`).join("");
    showError($("#error"), null);
  } catch (error) {
    showError($("#error"), error);
  }
}

// Each change (and each (re)connection) fetches the standings once.
setLanguage(preferredLanguage()).then(() => follow({ onChange: coalesced(refresh), status: $("#live-status") }));
