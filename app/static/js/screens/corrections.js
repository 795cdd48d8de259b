// Tapping a tile on the picture: the correction dialog (colour, number, joker).

import { $, api, guard, overlay, state, toast } from "../common.js";
import { chip } from "../format.js";
import { t, tileWords } from "../i18n.js";
import { setReading } from "./table.js";

let correcting = null;
$("#overlay").addEventListener("click", (e) => {
  if (state.spectator) return;
  const box = $("#overlay").getBoundingClientRect();
  const tile = overlay.tileAt(e.clientX - box.left, e.clientY - box.top);
  if (tile) openCorrection(tile);
});

function openCorrection(tile) {
  correcting = { tile, color: tile.joker ? null : tile.color, number: tile.number, joker: !!tile.joker };
  $("#correct-was").innerHTML = chip(tile.joker ? "J" : `${({ black: "K", red: "R", blue: "B", orange: "O" })[tile.color] || "?"}${tile.number}`);
  $("#correct-colors").innerHTML = [["K", "black"], ["R", "red"], ["B", "blue"], ["O", "orange"], ["J", "joker"]]
    .map(([l, c]) => `<button type="button" class="tile t-${c}" data-color="${l}">${l === "J" ? t("tile.joker") : t(`color.${l}`)}</button>`).join("");
  $("#correct-numbers").innerHTML = Array.from({ length: 13 }, (_, i) => `<button type="button" data-number="${i + 1}">${i + 1}</button>`).join("");
  updateCorrection();
  $("#correct-dialog").showModal();
}

function correctionCode() {
  if (!correcting) return null;
  if (correcting.joker) return "J";
  const l = ({ black: "K", red: "R", blue: "B", orange: "O", K: "K", R: "R", B: "B", O: "O" })[correcting.color];
  return l && correcting.number ? `${l}${correcting.number}` : null;
}

function updateCorrection() {
  const code = correctionCode();
  $("#correct-code").innerHTML = code ? `${chip(code)} ${tileWords(code)}` : "?";
  $("#correct-ok").disabled = !code;
  document.querySelectorAll("#correct-colors button").forEach((b) => b.classList.toggle("chosen",
    correcting.joker ? b.dataset.color === "J" : ({ black: "K", red: "R", blue: "B", orange: "O" })[correcting.color] === b.dataset.color || correcting.color === b.dataset.color));
  document.querySelectorAll("#correct-numbers button").forEach((b) => {
    b.classList.toggle("chosen", !correcting.joker && +b.dataset.number === correcting.number);
    b.disabled = correcting.joker;
  });
}

$("#correct-colors").addEventListener("click", (e) => {
  const b = e.target.closest("[data-color]");
  if (!b) return;
  correcting.joker = b.dataset.color === "J";
  if (!correcting.joker) correcting.color = b.dataset.color;
  updateCorrection();
});
$("#correct-numbers").addEventListener("click", (e) => {
  const b = e.target.closest("[data-number]");
  if (!b) return;
  correcting.number = +b.dataset.number;
  updateCorrection();
});
$("#correct-dialog").addEventListener("close", async () => {
  if ($("#correct-dialog").returnValue !== "ok" || !correcting) return;
  const code = correctionCode();
  const tile = correcting.tile;
  correcting = null;
  const reading = await guard(() => api.correct(tile.id, code));
  if (reading) { setReading(reading); toast(t("correct.done", { tile: tileWords(code) }), "info"); }
});

