// What every screen shares: the page's state, the server's API, alerts, the overlay and
// small helpers (toasts, errors in words, which turn is running).

import { Alerts } from "./alerts.js";
import { Api, ApiError } from "./api.js";
import { Overlay } from "./overlay.js";

export const $ = (sel) => document.querySelector(sel);
export const api = new Api();
export const alerts = new Alerts();
export const overlay = new Overlay($("#overlay"));

export const KEYS = { table: "rummikub.table", current: "rummikub.current", games: "rummikub.games", prefs: "rummikub.prefs" };
export const TABLE_SAMPLES = ["table_runs_groups.jpg", "white_table.jpg", "scatter_light_wood.jpg"];
export const RACK_SAMPLE = "rack_marble.jpg";

export const state = {
  game: null,
  tab: "play",
  reading: null,
  readingKey: null,
  verdict: null,
  turnKey: null,
  turnStartSig: null,
  warned: false,
  lastTick: null,
  ending: false,
  camera: null,
  cameraTaken: null, // the server's words when another phone took over the camera
  mode: null,
  racks: {}, // player -> {codes, total, confirmed, photo_id}
  sampleIndex: 0,
  editions: [],
  prefs: loadJson(KEYS.prefs, { auto: false, photo: false }),
};

export function loadJson(key, fallback) {
  try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch (_e) { return fallback; }
}
export function saveJson(key, value) { localStorage.setItem(key, JSON.stringify(value)); }

// ---------------------------------------------------------------- messages

let toastTimer = null;
export function toast(message, kind = "error") {
  const el = $("#toast");
  el.textContent = message;
  el.className = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, kind === "error" ? 8000 : 3500);
}

export function words(error) {
  if (error instanceof ApiError) return error.message;
  return error && error.message ? error.message : "Something went wrong; try again.";
}

export async function guard(fn) {
  try { return await fn(); } catch (e) { toast(words(e)); return undefined; }
}

export function turnOf(g) { return g && g.round && g.round.turn; }

export function meldNeeded() {
  const s = state.game && state.game.settings;
  return (s && s.initial_meld_minimum) || 30;
}

export function signature(reading) {
  if (!reading || !reading.tiles) return "";
  return reading.tiles.map((t) => (t.joker ? "J" : `${t.color}${t.number}`)).sort().join(",");
}

export async function sampleFile(name) {
  let response;
  try { response = await fetch(`/api/samples/${encodeURIComponent(name)}`); } catch (_e) { response = null; }
  if (!response || !response.ok) throw new Error("The sample photos are not available on this server.");
  const blob = await response.blob();
  return new File([blob], name, { type: blob.type || "image/jpeg" });
}
