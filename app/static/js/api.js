// The server's API (see /docs of a running server). Every failure becomes an ApiError whose
// message is a sentence a player understands: the server's own `detail`, or our words.

export class ApiError extends Error {
  // `detail`: the server's English words; `message_id`: its {id, params} where it gives one
  // (the page words it in the chosen language, see common.js `words`).
  constructor(message, status = 0, messageId = null) {
    super(message);
    this.status = status;
    this.messageId = messageId;
  }
}

// Words for a status when the server gave none (keys of the catalogues: "status.<code>").
export const STATUS_KEYS = [401, 403, 404, 409, 413, 415, 422, 429, 500];

function detailText(detail) {
  if (typeof detail === "string") return detail;
  // FastAPI's validation errors are a list of {loc, msg}: keep the words, drop the JSON.
  if (Array.isArray(detail)) {
    return detail.map((d) => (d && d.msg ? String(d.msg) : "")).filter(Boolean).join("; ");
  }
  return "";
}

export class Api {
  constructor() {
    this.game = null; // game id
    this.token = null; // the game's token (or its watch token)
    this.tableToken = null;
    this.clockOffsetMs = 0; // server clock minus ours, from the latest Game
  }

  headers(extra = {}) {
    const h = { ...extra };
    if (this.token) h["X-Token"] = this.token;
    return h;
  }

  async request(method, path, { json, form, body, contentType, auth = "game" } = {}) {
    const headers = {};
    if (auth === "game" && this.token) headers["X-Token"] = this.token;
    if (auth === "table" && this.tableToken) headers["X-Token"] = this.tableToken;
    let payload = body;
    if (json !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(json);
    } else if (form) {
      payload = form;
    } else if (contentType) {
      headers["Content-Type"] = contentType;
    }
    let response;
    try {
      response = await fetch(path, { method, headers, body: payload, cache: "no-store" });
    } catch (_e) {
      throw new ApiError("", 0, { id: "page.unreachable" });
    }
    const type = response.headers.get("content-type") || "";
    if (!response.ok) {
      let words = "";
      let id = null;
      if (type.includes("json")) {
        try {
          const body = await response.json();
          words = detailText(body.detail);
          id = body.message_id || null;
        } catch (_e) { /* keep "" */ }
      }
      throw new ApiError(words, response.status, id);
    }
    if (type.includes("json")) return response.json();
    return response.text();
  }

  gamePath(rest = "") { return `/api/games/${encodeURIComponent(this.game)}${rest}`; }

  // A link to a file of this game that an <img> or <a> can open without headers.
  fileUrl(rest) {
    const sep = rest.includes("?") ? "&" : "?";
    return this.gamePath(rest) + `${sep}token=${encodeURIComponent(this.token || "")}`;
  }

  health() { return this.request("GET", "/api/health", { auth: "none" }); }
  editions() { return this.request("GET", "/api/editions", { auth: "none" }); }
  createGame(body) { return this.request("POST", "/api/games", { json: body, auth: "table" }); }

  async getGame() {
    const sent = Date.now();
    const game = await this.request("GET", this.gamePath());
    this.noteServerTime(game, sent);
    return game;
  }

  noteServerTime(game, sentMs = Date.now()) {
    if (game && game.server_time != null) {
      const now = Date.now();
      // The server stamped its time somewhere between our send and its arrival.
      this.clockOffsetMs = toMs(game.server_time) - (sentMs + now) / 2;
    }
  }

  serverNow() { return Date.now() + this.clockOffsetMs; }

  startDraw(file) { return this.request("POST", this.gamePath("/start-draw"), { form: photoForm(file) }); }
  startRound(starter) {
    return this.request("POST", this.gamePath("/rounds"), { json: starter ? { starter } : {} });
  }
  // Every turn call names the turn the phone saw: a late or repeated press gets a 409.
  pause(turnId) { return this.request("POST", this.gamePath("/turn/pause"), { json: { turn_id: turnId } }); }
  resume(turnId) { return this.request("POST", this.gamePath("/turn/resume"), { json: { turn_id: turnId } }); }
  extend(turnId) { return this.request("POST", this.gamePath("/turn/extend"), { json: { turn_id: turnId } }); }
  endTurn(turnId, photoId) {
    return this.request("POST", this.gamePath("/turn/end"),
      { json: photoId ? { turn_id: turnId, photo_id: photoId } : { turn_id: turnId } });
  }
  // Someone went out (`out`), or back to the table (the turn runs on).
  goingOut(out, turnId) {
    return this.request("POST", this.gamePath("/round/out"), { json: { out, turn_id: turnId } });
  }
  games() { return this.request("GET", "/api/games", { auth: "table" }); }
  photo(file) { return this.request("POST", this.gamePath("/photo"), { form: photoForm(file) }); }
  frame(blob, camera) {
    const named = camera ? `?camera=${encodeURIComponent(camera)}` : "";
    return this.request("POST", this.gamePath(`/frames${named}`), { body: blob, contentType: "image/jpeg" });
  }
  frameStats() { return this.request("GET", this.gamePath("/frames/stats")); }
  reading() { return this.request("GET", this.gamePath("/reading")); }
  correct(tileId, code) {
    return this.request("POST", this.gamePath("/corrections"), { json: { tile_id: tileId, code } });
  }
  rackPhoto(player, file) {
    const form = photoForm(file);
    form.append("player", player);
    return this.request("POST", this.gamePath("/racks"), { form });
  }
  rackCodes(player, codes) {
    return this.request("POST", this.gamePath("/racks"), { json: { player, codes } });
  }
  endRound(body) { return this.request("POST", this.gamePath("/round/end"), { json: body }); }
  finish() { return this.request("POST", this.gamePath("/finish")); }
  history() { return this.request("GET", this.gamePath("/history")); }
  sheetCsv() { return this.request("GET", this.gamePath("/sheet.csv")); }

  liveSocketUrl(camera) {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const named = camera ? `&camera=${encodeURIComponent(camera)}` : "";
    return `${proto}//${location.host}${this.gamePath("/live")}?token=${encodeURIComponent(this.token || "")}${named}`;
  }
}

function photoForm(file) {
  const form = new FormData();
  form.append("photo", file, file.name || "photo.jpg");
  return form;
}

// Server times may come as epoch seconds, epoch milliseconds or ISO text.
export function toMs(value) {
  if (value == null) return NaN;
  if (typeof value === "number") return value > 1e11 ? value : value * 1000;
  const n = Number(value);
  if (!Number.isNaN(n) && String(value).trim() !== "") return n > 1e11 ? n : n * 1000;
  return Date.parse(value);
}
