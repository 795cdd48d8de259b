// The Game tab: this game's facts and the links to share it.

import { stopPolling } from "../app.js";
import { $, KEYS, api, state } from "../common.js";
import { clock, esc, plural } from "../format.js";
import { showNewGame } from "./setup.js";

export function renderInfo() {
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
