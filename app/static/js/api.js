// The server's API (see /docs of a running server). Every failure becomes an ApiError whose
// message is a sentence a player understands: the server's own `detail`, or our words.

export class ApiError extends Error {
  constructor(message, status = 0) {
    super(message);
    this.status = status;
  }
}

const STATUS_WORDS = {
  401: "This phone has no key for that game. Open the link printed by the server again.",
  403: "This link may only watch the game, not change it.",
  404: "The server does not know that game (any more).",
  413: "That picture is too large to send.",
  415: "That file is not a picture the server can read.",
  422: "The server could not understand that request.",
  429: "The server is busy; try again in a moment.",
};

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
      throw new ApiError("The server cannot be reached. Is the referee server (rummikub serve) still running, " +
        "and is this phone on the same network?");
    }
    const type = response.headers.get("content-type") || "";
    if (!response.ok) {
      let words = "";
      if (type.includes("json")) {
        try { words = detailText((await response.json()).detail); } catch (_e) { /* keep "" */ }
      }
      if (!words) words = STATUS_WORDS[response.status] ||
        (response.status >= 500 ? "The server ran into a problem; the game is unchanged. Try again."
                                : `The server refused that (${response.status}).`);
      throw new ApiError(words, response.status);
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
  pause() { return this.request("POST", this.gamePath("/turn/pause")); }
  resume() { return this.request("POST", this.gamePath("/turn/resume")); }
  extend() { return this.request("POST", this.gamePath("/turn/extend")); }
  endTurn(photoId) {
    return this.request("POST", this.gamePath("/turn/end"), { json: photoId ? { photo_id: photoId } : {} });
  }
  photo(file) { return this.request("POST", this.gamePath("/photo"), { form: photoForm(file) }); }
  frame(blob, camera) {
    const named = camera ? `?camera=${encodeURIComponent(camera)}` : "";
    return this.request("POST", this.gamePath(`/frames${named}`), { body: blob, contentType: "image/jpeg" });
  }
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
