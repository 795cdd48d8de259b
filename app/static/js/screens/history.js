// Every judged turn, newest first, with the photos that decided it.

import { $, api, meldNeeded, words } from "../common.js";
import { esc, verdictHeadline, verdictHtml, verdictKind } from "../format.js";
import { t } from "../i18n.js";

const PHOTO_KEYS = { before_photo_id: "history.before", after_photo_id: "history.after" };

export async function renderHistory() {
  const el = $("#history");
  let h;
  try { h = await api.history(); } catch (e) { el.innerHTML = `<p class="bad">${esc(words(e))}</p>`; return; }
  const turns = (h && h.turns) || [];
  if (!turns.length) { el.innerHTML = `<p class="muted">${esc(t("history.none"))}</p>`; return; }
  el.innerHTML = turns.slice().reverse().map((v) => {
    const photos = Object.entries(v).filter(([k, id]) => /photo_id$/.test(k) && id != null)
      .map(([k, id]) => `<figure><img loading="lazy" src="${esc(api.fileUrl(`/photos/${encodeURIComponent(id)}`))}" alt=""><figcaption>${esc(t(PHOTO_KEYS[k] || "history.photo"))}</figcaption></figure>`).join("");
    const kind = verdictKind(v);
    const when = t("history.when", { round: v.round ?? "", turn: v.turn_in_round ?? v.turn });
    // The body is the verdict's own card, folded line and all.
    return `<details class="card turn ${kind === "illegal" || kind === "timeout" ? "illegal" : "legal"}"><summary><b>${esc(when)}</b> ${esc(verdictHeadline(v))}</summary>` +
      `<div class="verdict-body">${verdictHtml(v, { meldNeeded: meldNeeded() }).replace(/^<summary>[\s\S]*?<\/summary>/, "")}</div>` +
      (photos ? `<div class="photos">${photos}</div>` : "") + `</details>`;
  }).join("");
}
