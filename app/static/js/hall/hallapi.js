// The hall pages' link to the server: the tournament id and token from the page's address
// (?t=ID&token=TOKEN), JSON requests that turn the server's {"detail"} into an Error.

import { t } from "../i18n.js";

const params = new URLSearchParams(location.search);
export const tournament = params.get("t") || "";
export const token = params.get("token") || "";

export function path(rest = "") {
  return `/api/tournaments/${encodeURIComponent(tournament)}${rest}`;
}

export async function call(method, url, json) {
  const headers = { "X-Token": token };
  if (json !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method, headers, cache: "no-store", body: json === undefined ? undefined : JSON.stringify(json),
  });
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new Error((body && body.detail) || `HTTP ${response.status}`);
  return body;
}

// A tie-break's name in the page's language (the names of referee/tournament/format.py).
const TIE_BREAK_KEYS = {
  "final-round-board": "hall.tb.final-round-board", "final-round-result": "hall.tb.final-round-result",
  points: "hall.tb.points", wins: "hall.tb.wins", "head-to-head": "hall.tb.head-to-head", buchholz: "hall.tb.buchholz",
};

export function tieBreak(name) {
  return TIE_BREAK_KEYS[name] ? t(TIE_BREAK_KEYS[name]) : name;
}

export function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

export function showError(el, error) {
  el.hidden = !error;
  el.textContent = error ? error.message || String(error) : "";
}
