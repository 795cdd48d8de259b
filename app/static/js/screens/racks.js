// The end of a round: who went out and every other rack, photographed or typed.

import { onGame } from "../app.js";
import { $, RACK_SAMPLE, alerts, api, guard, sampleFile, state, turnOf } from "../common.js";
import { chips, esc, plural } from "../format.js";

// ---------------------------------------------------------------- round end

export function renderRoundEnd() {
  const g = state.game;
  $("#re-round").textContent = g.round ? g.round.number : "";
  const sel = $("#re-winner");
  const names = g.players.map((p) => p.name);
  if (sel.dataset.for !== names.join("|")) {
    sel.innerHTML = names.map((p) => `<option value="${esc(p)}">${esc(p)}</option>`).join("") +
      `<option value="">Nobody — the pool is empty</option>`;
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
    return `<div class="card rack" data-player="${esc(p)}">
      <h3>${esc(p)}'s rack</h3>
      <div class="controls">
        <label class="button ghost file">Photograph the rack
          <input type="file" class="rack-photo" accept="image/*" capture="environment"></label>
        <button type="button" class="ghost small rack-sample">Sample rack</button>
      </div>
      <label>Tiles left on the rack (codes: K black, R red, B blue, O orange, J joker)
        <input type="text" class="rack-codes" autocomplete="off" autocapitalize="characters" value="${esc(r.codes || "")}" placeholder="R5 J K13"></label>
      <div class="rack-tiles">${r.tiles ? `${chips(r.tiles)} <b class="rack-total">${esc(r.total)} points</b>` : ""}</div>
      ${r.edge ? `<p class="small rack-warning"><b>${plural(r.edge, "tile")} at the photo's edge:</b> the edge may cut ${r.edge === 1 ? "it" : "them"} or hide more. Photograph the whole rack.</p>` : ""}
      <label class="switch"><input type="checkbox" class="rack-ok" ${r.confirmed ? "checked" : ""} ${r.tiles ? "" : "disabled"}>
        These are ${esc(p)}'s tiles</label>
    </div>`;
  }).join("");
  updateCountButton();
}

function updateCountButton() {
  const all = rackPlayers().every((p) => state.racks[p] && state.racks[p].confirmed);
  $("#btn-count-round").disabled = !all;
}

function applyRack(player, r) {
  state.racks[player] = { codes: (r.tiles || []).join(" "), tiles: r.tiles || [], total: r.total, confirmed: false, photo_id: r.photo_id, edge: (r.edge_tiles || []).length };
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
    card.querySelector(".rack-tiles").innerHTML = `<span class="muted">Reading the rack…</span>`;
    const r = await guard(() => api.rackPhoto(player, file));
    if (r) applyRack(player, r); else renderRacks();
  } else if (e.target.classList.contains("rack-codes")) {
    const codes = e.target.value.trim();
    const r = await guard(() => api.rackCodes(player, codes));
    if (r) applyRack(player, r);
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
  alerts.say(`Round over.${lead ? ` ${lead} leads.` : ""}`);
});
