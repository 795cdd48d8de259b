// Every judged turn, newest first, with the photos that decided it.

import { $, api, meldNeeded, words } from "../common.js";
import { esc, plural, verdictHtml } from "../format.js";

export async function renderHistory() {
  const el = $("#history");
  let h;
  try { h = await api.history(); } catch (e) { el.innerHTML = `<p class="bad">${esc(words(e))}</p>`; return; }
  const turns = (h && h.turns) || [];
  if (!turns.length) { el.innerHTML = `<p class="muted">No turn has ended yet.</p>`; return; }
  el.innerHTML = turns.slice().reverse().map((t) => {
    const photos = Object.entries(t).filter(([k, v]) => /photo_id$/.test(k) && v != null)
      .map(([k, v]) => `<figure><img loading="lazy" src="${esc(api.fileUrl(`/photos/${encodeURIComponent(v)}`))}" alt="${esc(k)}"><figcaption>${esc(k.replace(/_?photo_id$/, "") || "photo")}</figcaption></figure>`).join("");
    return `<details class="card turn ${t.legal ? "legal" : "illegal"}"><summary><b>${esc(t.round != null ? `R${t.round} · ` : "")}Turn ${esc(t.turn)}</b> ${esc(t.player)}: ` +
      `${t.timed_out ? "time ran out" : t.legal ? "legal" : "not legal"} · ${plural((t.played || []).length, "tile")} played</summary>` +
      verdictHtml(t, { meldNeeded: meldNeeded() }) + (photos ? `<div class="photos">${photos}</div>` : "") + `</details>`;
  }).join("");
}
