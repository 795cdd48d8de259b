// The end of a round: who went out and every other rack, photographed or typed. A rack
// photo shows each tile's reading drawn on it, with every warning the server gives, so
// the count is checked before it is confirmed.

import { onGame } from "../app.js";
import { $, RACK_SAMPLE, alerts, api, guard, sampleFile, state, turnCall, turnOf } from "../common.js";
import { chips, esc } from "../format.js";
import { t, tm } from "../i18n.js";
import { Overlay } from "../overlay.js";

export function renderRoundEnd() {
  const g = state.game;
  $("#re-title").textContent = t("re.title", { round: g.round ? g.round.number : "" });
  const sel = $("#re-winner");
  const names = g.players.map((p) => p.name);
  if (sel.dataset.for !== names.join("|")) {
    sel.innerHTML = names.map((p) => `<option value="${esc(p)}">${esc(p)}</option>`).join("") +
      `<option value="">${esc(t("re.nobody"))}</option>`;
    sel.dataset.for = names.join("|");
  }
  // Whoever laid their last tile did it on their own turn: the likely winner.
  sel.value = turnOf(g) ? turnOf(g).player : names[0];
  renderRacks();
}

function rackPlayers() {
  const winner = $("#re-winner").value;
  return state.game.players.map((p) => p.name).filter((p) => p !== winner);
}

function renderRacks() {
  const el = $("#racks");
  el.innerHTML = rackPlayers().map((p) => {
    const r = state.racks[p] || {};
    const warnings = (r.warnings || []).map((w) => `<li>${esc(w)}</li>`).join("");
    return `<div class="card rack" data-player="${esc(p)}">
      <h3>${esc(t("re.rack_of", { player: p }))}</h3>
      <div class="controls">
        <label class="button ghost file">${esc(t("re.photo"))}
          <input type="file" class="rack-photo" accept="image/*" capture="environment"></label>
        <button type="button" class="ghost small rack-sample">${esc(t("re.sample"))}</button>
      </div>
      ${r.photo_id ? rackView(r) : ""}
      ${warnings ? `<ul class="rack-warnings">${warnings}</ul>` : ""}
      <label>${esc(t("re.codes"))}
        <input type="text" class="rack-codes" autocomplete="off" autocapitalize="characters" value="${esc(r.codes || "")}" placeholder="R5 J K13"></label>
      <div class="rack-tiles">${r.tiles ? `${chips(r.tiles)} <b class="rack-total">${esc(t("re.points", { count: r.total }))}</b>` : ""}</div>
      <label class="switch"><input type="checkbox" class="rack-ok" ${r.confirmed ? "checked" : ""} ${r.tiles ? "" : "disabled"}>
        ${esc(t("re.confirm", { player: p }))}</label>
    </div>`;
  }).join("");
  // Each tile's reading drawn on its rack photo (amber: read with low confidence).
  el.querySelectorAll(".rack").forEach((card) => {
    const r = state.racks[card.dataset.player];
    const canvas = card.querySelector(".rack-view canvas");
    if (!r || !canvas || !r.marks) return;
    const view = new Overlay(canvas);
    view.show({ width: r.width, height: r.height, tiles: r.marks, sets: [] });
  });
  updateCountButton();
}

// The rack photo, shown from the part its tiles lie in: a phone held upright or far off
// shows the stand small in a photo that is mostly table and wall, and its readings
// would crowd together. Every tile read is in the view, those lying off the rack too.
function rackView(r) {
  const src = esc(api.fileUrl(`/photos/${encodeURIComponent(r.photo_id)}`));
  const v = tilesView(r) || { x: 0, y: 0, w: r.width, h: r.height };
  const frame = `width:${(100 * r.width / v.w).toFixed(3)}%;left:${(-100 * v.x / v.w).toFixed(3)}%;`
    + `top:${(-100 * v.y / v.h).toFixed(3)}%`;
  return `<div class="rack-view" style="aspect-ratio:${Math.round(v.w)}/${Math.round(v.h)}">`
    + `<div class="rack-frame" style="${frame}"><img alt="" src="${src}"><canvas></canvas></div></div>`;
}

// The box round every tile read, a margin of a tenth of its size (and at least a
// fiftieth of the photo) added, no narrower than 4:3; null where that is most of the photo.
function tilesView(r, { most = 0.6 } = {}) {
  const xs = [], ys = [];
  for (const m of r.marks || []) for (const [x, y] of m.corners || []) { xs.push(x); ys.push(y); }
  if (!xs.length || !r.width || !r.height) return null;
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const pad = Math.max(0.1 * Math.max(x1 - x0, y1 - y0), 0.02 * Math.max(r.width, r.height));
  x0 -= pad; x1 += pad; y0 -= pad; y1 += pad;
  if (x1 - x0 < (4 / 3) * (y1 - y0)) { // widen about its middle to 4:3
    const grow = ((4 / 3) * (y1 - y0) - (x1 - x0)) / 2;
    x0 -= grow; x1 += grow;
  }
  // kept inside the photo: shifted back in where it can be, cut where it is wider
  const fit = (lo, hi, size) => {
    const w = Math.min(hi - lo, size);
    const start = Math.min(Math.max(lo, 0), size - w);
    return [start, w];
  };
  const [x, w] = fit(x0, x1, r.width);
  const [y, h] = fit(y0, y1, r.height);
  if (w * h > most * r.width * r.height) return null;
  return { x, y, w, h };
}

function updateCountButton() {
  const all = rackPlayers().every((p) => state.racks[p] && state.racks[p].confirmed);
  $("#btn-count-round").disabled = !all;
}

// `sent`: the codes typed that this reply counts (a photo's reply: none).
function applyRack(player, r, { sent = null } = {}) {
  // Every warning, in the page's language where the server gives its id.
  const ids = r.warning_ids || [];
  const warnings = ids.length ? ids.map((m) => tm(m)) : (r.warnings || []);
  const codes = (r.tiles || []).join(" ");
  const had = state.racks[player];
  // A tick given to these very tiles while their count was on its way stays.
  const confirmed = Boolean(sent !== null && had && had.confirmed && had.codes === codes);
  state.racks[player] = {
    codes, tiles: r.tiles || [], total: r.total, confirmed, sent,
    photo_id: r.photo_id, warnings, marks: r.marks, width: r.width, height: r.height,
  };
  renderRacks();
}

$("#re-winner").addEventListener("change", renderRacks);
$("#racks").addEventListener("change", async (e) => {
  const card = e.target.closest(".rack");
  if (!card) return;
  const player = card.dataset.player;
  if (e.target.classList.contains("rack-photo")) {
    const file = e.target.files[0];
    e.target.value = "";
    if (!file) return;
    card.querySelector(".rack-tiles").innerHTML = `<span class="muted">${esc(t("re.reading"))}</span>`;
    const r = await guard(() => api.rackPhoto(player, file));
    if (r) applyRack(player, r); else renderRacks();
  } else if (e.target.classList.contains("rack-codes")) {
    const codes = e.target.value.trim();
    // A tap on the tick box blurs the codes field, which says "change" again for codes
    // already counted: nothing to ask, and the tick must stay.
    const had = state.racks[player];
    if (had && had.sent === codes) return;
    const r = await guard(() => api.rackCodes(player, codes));
    if (r) applyRack(player, r, { sent: codes });
  } else if (e.target.classList.contains("rack-ok")) {
    if (state.racks[player]) state.racks[player].confirmed = e.target.checked;
    updateCountButton();
  }
});
$("#racks").addEventListener("click", async (e) => {
  const b = e.target.closest(".rack-sample");
  if (!b) return;
  const player = b.closest(".rack").dataset.player;
  await guard(async () => {
    const r = await api.rackPhoto(player, await sampleFile(RACK_SAMPLE));
    applyRack(player, r);
  });
});

$("#btn-count-round").addEventListener("click", async () => {
  const winner = $("#re-winner").value || null;
  const racks = {};
  for (const p of rackPlayers()) racks[p] = state.racks[p].codes;
  const game = await guard(() => api.endRound({ winner, racks, pool_empty: !winner }));
  if (!game) return;
  state.racks = {};
  state.verdict = null;
  state.tab = "sheet";
  onGame(game);
  const lead = game.sheet && game.sheet.leader;
  alerts.say(lead ? t("say.round_over_lead", { player: lead }) : t("say.round_over"));
});

// A slip: back to the table, and the stopped turn runs on.
$("#btn-back-play").addEventListener("click", async () => {
  const turn = turnOf(state.game);
  const game = await turnCall(() => api.goingOut(false, turn && (turn.id ?? turn.number)));
  state.tab = "play";
  if (game) onGame(game);
});
