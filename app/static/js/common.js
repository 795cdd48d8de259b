// What every screen shares: the page's state, the server's API, alerts, the overlay and
// small helpers (toasts, errors in words, which turn is running).

import { Alerts } from "./alerts.js";
import { Api, ApiError, STATUS_KEYS } from "./api.js";
import { verdictSpeech } from "./format.js";
import { language, t, tm } from "./i18n.js";
import { Overlay } from "./overlay.js";

export const $ = (sel) => document.querySelector(sel);
export const api = new Api();
export const alerts = new Alerts();
export const overlay = new Overlay($("#overlay"));

export const KEYS = { table: "rummikub.table", current: "rummikub.current", games: "rummikub.games", prefs: "rummikub.prefs" };
// A valid table first, then tables with mistakes.
export const TABLE_SAMPLES = ["valid_table.jpg", "table_runs_groups.jpg", "white_table.jpg"];
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
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, kind === "error" ? 8000 : 3500);
}

// A message about the previous photo is gone once another is sent: a refusal left showing
// beside the next photo's verdict reads as that photo's.
export function clearToast(kind = "error") {
  const el = $("#toast");
  if (el.dataset.kind !== kind) return;
  clearTimeout(toastTimer);
  el.hidden = true;
}

// An error in the player's language: the server's message id where it gives one, its
// English words in English, else what the status means.
export function words(error) {
  if (error instanceof ApiError) {
    if (error.messageId) return tm(error.messageId, error.message);
    if (error.message && language() === "en") return error.message;
    const status = STATUS_KEYS.includes(error.status) ? error.status : error.status >= 500 ? 500 : null;
    return status ? t(`status.${status}`) : t("status.other", { status: error.status });
  }
  if (error && error.messageId) return tm(error.messageId);
  if (error && error.message) return error.message.startsWith("page.") ? t(error.message) : error.message;
  return t("page.failed");
}

export async function guard(fn) {
  try { return await fn(); } catch (e) { toast(words(e)); return undefined; }
}

// A calm line at the top of the table screen (under the sticky turn banner): a late press,
// a camera taken over. It stays until the next one or a tap.
export function notice(text) {
  const el = $("#notice");
  el.textContent = text;
  el.hidden = !text;
}
document.addEventListener("click", (e) => { if (e.target.closest("#notice")) notice(""); });

// A call on the running turn. A 409 (that turn ended meanwhile: another phone, the clock)
// is said calmly and the game is fetched again; other errors are toasts.
export async function turnCall(fn) {
  const turn = turnOf(state.game);
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError && e.status === 409) {
      // The server's words where it says what happened; "that turn has ended" otherwise.
      const said = e.messageId && e.messageId.id !== "turn.ended";
      notice(said ? words(e) : t("notice.turn_ended", { player: turn ? turn.player : "" }));
      if (hooks.refresh) await hooks.refresh();
    } else {
      toast(words(e));
    }
    return undefined;
  }
}

// Each verdict is spoken once, however many ways the page hears of it (its own "End
// turn", a poll, the live socket).
export function sayVerdict(v) {
  if (!v) return;
  const key = `${v.round}:${v.turn}`;
  if (state.spokenVerdict === key) return;
  state.spokenVerdict = key;
  alerts.say(verdictSpeech(v));
}

// Set by app.js (screens call back into it without importing it at load time).
export const hooks = { refresh: null };

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
  if (!response || !response.ok) throw new Error("page.no_samples");
  const blob = await response.blob();
  return new File([blob], name, { type: blob.type || "image/jpeg" });
}
