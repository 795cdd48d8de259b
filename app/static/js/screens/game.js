// The Game tab: this game's facts, the page's language, and the links to share the game,
// each with its QR code and a copy button. A spectator sees only the watching link: the
// playing link and the webcam command need the game's own token.

import { render, stopPolling } from "../app.js";
import { $, KEYS, api, state, toast } from "../common.js";
import { clock, esc } from "../format.js";
import { LANGUAGES, language, setLanguage, t } from "../i18n.js";
import { showNewGame } from "./setup.js";

function linkBlock(kind, text, intro) {
  return `<div class="share" data-share="${kind}"><p>${esc(intro)}</p>` +
    `<p class="link-text"><code>${esc(text)}</code></p>` +
    `<div class="controls"><button type="button" class="ghost small copy" data-copy="${esc(text)}">${esc(t("info.copy"))}</button></div>` +
    `<img class="qr" alt="${esc(t("info.qr"))}" src="/api/qr.svg?data=${encodeURIComponent(text)}" onerror="this.remove()"></div>`;
}

export function renderInfo() {
  const g = state.game;
  const base = `${location.origin}${location.pathname}`;
  const playing = !state.spectator;
  const link = `${base}?g=${encodeURIComponent(g.id)}&token=${encodeURIComponent(api.token)}`;
  const watch = g.watch_token || (state.spectator ? api.token : null);
  const watchLink = watch ? `${base}?g=${encodeURIComponent(g.id)}&token=${encodeURIComponent(watch)}` : null;
  const timer = g.timer || {};
  const timerText = timer.enabled
    ? [t("info.per_turn", { time: clock(timer.seconds) }), timer.extensions ? t("info.extensions", { count: timer.extensions }) : ""].filter(Boolean).join(", ")
    : t("info.timer_off");
  $("#info").innerHTML = `<dl class="facts">
    <dt>${esc(t("info.players"))}</dt><dd>${g.players.map((p) => `${esc(p.name)}${p.melded ? " ✓" : ""}`).join(", ")}</dd>
    <dt>${esc(t("info.edition"))}</dt><dd>${esc(t(`edition.${g.edition}`))}</dd>
    <dt>${esc(t("info.timer"))}</dt><dd>${esc(timerText)}</dd>
    <dt>${esc(t("info.round"))}</dt><dd>${g.round ? esc(g.round.number) : esc(t("info.not_started"))}</dd></dl>
    <label>${esc(t("info.language"))}<select id="language">${Object.entries(LANGUAGES).map(([code, name]) =>
      `<option value="${code}" ${code === language() ? "selected" : ""}>${esc(name)}</option>`).join("")}</select></label>` +
    (playing ? linkBlock("play", link, t("info.play_link")) : "") +
    (watchLink ? linkBlock("watch", watchLink, t("info.watch_link")) : "") +
    (playing ? linkBlock("webcam", `rummikub watch --server ${location.origin} --game=${g.id} --token=${api.token} --camera 0`, t("info.webcam")) : "");
  $("#language").addEventListener("change", async (e) => {
    await setLanguage(e.target.value, { save: true });
    state.readingKey = null; // the table's words too
    renderInfo();
    render();
  });
}

$("#info").addEventListener("click", async (e) => {
  const b = e.target.closest("[data-copy]");
  if (!b) return;
  try {
    await navigator.clipboard.writeText(b.dataset.copy);
    toast(t("info.copied"), "info");
  } catch (_e) {
    // No clipboard on an insecure page: select the text so a long press copies it.
    const code = b.closest(".share").querySelector("code");
    const range = document.createRange();
    range.selectNodeContents(code);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    toast(t("info.copy_by_hand"), "info");
  }
});

$("#btn-new-game").addEventListener("click", () => {
  localStorage.removeItem(KEYS.current);
  stopPolling();
  state.tab = "play";
  showNewGame();
});
