// The hall pages' live link: the tournament's socket (/api/tournaments/{id}/live) says what
// changed ("tables", "calls", "standings", "settings", "log") and the page fetches those
// parts. While the socket is down the page reconnects with a growing wait and polls
// slowly meanwhile; once it is back, it fetches everything (what changed while it was away).

import { t } from "../i18n.js";
import { token, tournament } from "./hallapi.js";

export const ALL = ["tables", "calls", "standings", "settings", "log"];
const RETRY_MS = [1000, 2000, 4000, 8000, 15000]; // then 15 s until it is back
const DOWN_POLL_MS = 10000; // only while the socket is down
const PING_MS = 25000; // a quiet link is tested (a proxy or a sleeping laptop drops it)
const PONG_WAIT_MS = 10000;
const STATES = { connecting: "hall.connecting", live: "hall.live", reconnecting: "hall.reconnecting" };

function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/api/tournaments/${encodeURIComponent(tournament)}/live?token=${encodeURIComponent(token)}`;
}

// Calls `fetchParts(parts)` one at a time: parts told while one runs are fetched together
// right after it, so a burst of changes costs one or two fetches, never a queue of them.
export function coalesced(fetchParts) {
  let running = null;
  let waiting = null;
  async function run(parts) {
    if (running) {
      waiting = new Set([...(waiting || []), ...parts]);
      return running;
    }
    running = (async () => {
      let next = new Set(parts);
      while (next) {
        await fetchParts([...next]);
        next = waiting;
        waiting = null;
      }
    })();
    try { await running; } finally { running = null; }
  }
  return run;
}

// Follows the tournament: `onChange(parts)` for each change (and everything on each
// (re)connection, and on each slow poll while down); `status` shows live / reconnecting.
export function follow({ onChange, status }) {
  let ws = null;
  let tries = 0;
  let poll = null;
  let ping = null;
  let pongDue = null;
  let state = null;

  function show(next) {
    if (state === next) return;
    state = next;
    if (!status) return;
    status.dataset.state = next;
    status.dataset.i18n = STATES[next];
    status.textContent = t(STATES[next]);
  }

  function stopTimers() {
    clearInterval(ping);
    clearTimeout(pongDue);
    ping = pongDue = null;
  }

  function down() {
    stopTimers();
    show("reconnecting");
    if (!poll) {
      poll = setInterval(() => onChange(ALL), DOWN_POLL_MS);
      onChange(ALL); // at once: a refusal's or a lost server's words show now
    }
    const wait = RETRY_MS[Math.min(tries, RETRY_MS.length - 1)] * (0.8 + 0.4 * Math.random());
    tries += 1;
    setTimeout(connect, wait);
  }

  function connect() {
    let socket;
    try { socket = new WebSocket(socketUrl()); } catch { down(); return; }
    ws = socket;
    socket.onopen = () => {
      tries = 0;
      clearInterval(poll);
      poll = null;
      show("live");
      ping = setInterval(() => {
        socket.send(JSON.stringify({ type: "ping" }));
        if (!pongDue) pongDue = setTimeout(() => socket.close(), PONG_WAIT_MS);
      }, PING_MS);
      onChange(ALL); // what changed while it was connecting or away
    };
    socket.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      if (message.type === "pong") { clearTimeout(pongDue); pongDue = null; }
      else if (message.type === "changed") onChange(message.parts);
    };
    // A refused token closes it too: the slow poll's request then shows the server's words.
    socket.onclose = () => { if (ws === socket) { ws = null; down(); } };
  }

  show("connecting");
  connect();
}
