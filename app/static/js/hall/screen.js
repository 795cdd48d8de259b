// The big screen: the standings (rank, points, tie-break values) and this round's tables,
// read-only with the tournament's watch token. Live: the tournament's socket says when the
// standings changed, and only then are they fetched (hallsocket.js); no reload, no polling.

import { preferredLanguage, setLanguage, t } from "../i18n.js";
import { call, esc, path, showError, tieBreak } from "./hallapi.js";
import { coalesced, follow } from "./hallsocket.js";

const $ = (sel) => document.querySelector(sel);

async function refresh() {
  try {
    const data = await call("GET", path("/standings"));
    $("#title").textContent = data.name;
    $("#round-label").textContent = t("hall.round_of", { number: data.round, rounds: data.rounds });
    const breaks = data.tie_breaks;
    $("#standings").innerHTML = `<tr><th>#</th><th>${esc(t("hall.player"))}</th><th>${esc(t("hall.points"))}</th>
      ${breaks.map((b) => `<th>${esc(tieBreak(b))}</th>`).join("")}</tr>
      ${data.standings.map((s) => `<tr><td>${s.place}</td><td>${esc(s.player)}</td><td>${s.tournament_points}</td>
        ${breaks.map((b) => `<td>${esc(s.tie_breaks[b] ?? "")}</td>`).join("")}</tr>`).join("")}`;
    const tables = data.seating ? data.seating.tables : [];
    $("#seating").innerHTML = tables.map((players, i) => `<li><strong>${esc(t("hall.table_n", { number: i + 1 }))}</strong>: ${players.map(esc).join(", ")}</li>`).join("");
    showError($("#error"), null);
  } catch (error) {
    showError($("#error"), error);
  }
}

// Each change (and each (re)connection) fetches the standings once.
setLanguage(preferredLanguage()).then(() => follow({ onChange: coalesced(refresh), status: $("#live-status") }));
