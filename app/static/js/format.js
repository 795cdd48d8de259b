// Words and tile chips: how readings, verdicts and penalties look on the page.

const COLOR_OF = { K: "black", R: "red", B: "blue", O: "orange", G: "green", Y: "orange" };
const LETTER_OF = { black: "K", red: "R", blue: "B", orange: "O", green: "G", yellow: "O" };

export function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => (
    { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

// A tile of a reading ({color, number, joker}) as its code: "R9", "J".
export function tileCode(tile) {
  if (!tile) return "?";
  if (tile.code) return tile.code;
  if (tile.joker) return "J";
  return `${LETTER_OF[tile.color] || "?"}${tile.number ?? "?"}`;
}

// Codes may come as "R9", as {code: "R9", ...} or as tiles of a reading.
export function codeOf(item) {
  if (typeof item === "string") return item;
  if (item && typeof item === "object") return item.code || tileCode(item);
  return String(item);
}

export function chip(item, { extra = "", title = "" } = {}) {
  const code = codeOf(item);
  const m = /^([A-Z])(\d+)?(?:=(.*))?$/.exec(code);
  let cls = "unknown";
  let face = esc(code);
  if (m && m[1] === "J") {
    cls = "joker";
    face = m[3] ? `J<small>=${esc(m[3])}</small>` : "J";
  } else if (m && COLOR_OF[m[1]]) {
    cls = COLOR_OF[m[1]];
    face = esc(m[2] ?? "?");
  }
  const t = title || code;
  return `<span class="tile t-${cls} ${extra}" title="${esc(t)}" data-code="${esc(code)}">${face}</span>`;
}

export function chips(items, opts) {
  if (!items || !items.length) return `<span class="muted">none</span>`;
  return `<span class="tiles">${items.map((t) => chip(t, opts)).join("")}</span>`;
}

export function plural(n, word, many = `${word}s`) { return `${n} ${n === 1 ? word : many}`; }

export function clock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// The set of a reading as chips, each joker with the tile it stands for (J=R9).
export function setChips(reading, set) {
  const byId = new Map((reading.tiles || []).map((t) => [t.id, t]));
  let j = 0;
  const codes = set.tiles.map((id) => {
    const tile = byId.get(id);
    let code = tileCode(tile);
    if (tile && tile.joker && set.jokers && j < set.jokers.length) code = `J=${set.jokers[j++]}`;
    return { code, uncertain: tile && tile.uncertain };
  });
  return `<span class="tiles">${codes.map((c) => chip(c.code, { extra: c.uncertain ? "uncertain" : "" })).join("")}</span>`;
}

export function kindWord(set) {
  if (!set.valid) return "invalid";
  return set.kind === "group" ? "group" : set.kind === "run" ? "run" : "valid";
}

// The verdict of a turn in words, for the verdict panel (HTML) and for speech (text).
export function verdictHtml(v, { meldNeeded = 30 } = {}) {
  if (!v) return "";
  const parts = [];
  const ok = v.legal;
  const head = v.timed_out ? "Time ran out" : ok ? "Legal turn" : "Not a legal turn";
  parts.push(`<h3 class="${ok ? "ok" : "bad"}">${esc(v.player || "")}: ${head}</h3>`);
  if (v.message) parts.push(`<p class="message">${esc(v.message)}</p>`);
  parts.push(`<dl class="facts">`);
  parts.push(`<dt>Tiles played</dt><dd>${chips(v.played || [])}</dd>`);
  // A pass or a meld of invalid sets counts 0: the problems below say why.
  if (v.meld_total && v.first_meld !== false) {
    // Whether the rack alone reaches the minimum; the turn may still fail for other reasons.
    const need = v.meld_needed ?? meldNeeded;
    const reaches = v.meld_total >= need;
    parts.push(`<dt>Initial meld</dt><dd>${esc(v.meld_total)} points from the rack: ` +
      (reaches ? `<b class="ok">reaches ${need}</b>` : `<b class="bad">below ${need}</b>`) + `</dd>`);
  }
  if (v.left_table && v.left_table.length) {
    parts.push(`<dt>Left the table</dt><dd>${chips(v.left_table, { extra: "back" })}</dd>`);
  }
  if (v.draws) parts.push(`<dt>Draw</dt><dd><b class="big">${plural(v.draws, "tile")}</b> from the pool</dd>`);
  if (v.time_used_s != null) parts.push(`<dt>Time used</dt><dd>${clock(v.time_used_s)}</dd>`);
  parts.push(`</dl>`);
  if (v.problems && v.problems.length) {
    parts.push(`<ul class="problems">${v.problems.map((p) => `<li>${esc(p)}</li>`).join("")}</ul>`);
  }
  if (v.invalid_sets && v.invalid_sets.length) {
    parts.push(`<h4>Invalid sets</h4><ul class="invalid-sets">` + v.invalid_sets.map((s) =>
      `<li>${chips(s.tiles || [])}<br><span class="reason">${esc((s.reasons || []).join("; "))}</span></li>`).join("") + `</ul>`);
  }
  // Sets already invalid before the turn and left as they were: said, not this player's problem.
  if (v.preexisting_invalid && v.preexisting_invalid.length) {
    parts.push(`<h4>Invalid before the turn</h4><ul class="preexisting muted">` +
      v.preexisting_invalid.map((p) => `<li>${esc(p)}</li>`).join("") + `</ul>`);
  }
  if (v.penalty) parts.push(penaltyHtml(v.penalty));
  if (v.suggestion) parts.push(`<p class="suggestion"><b>A fix:</b> ${esc(suggestionText(v.suggestion))}</p>`);
  return parts.join("");
}

export function penaltyHtml(p) {
  const back = p.tiles_back || [];
  return `<div class="penalty"><h4>Penalty</h4>` +
    (p.words ? `<p>${esc(p.words)}</p>` : "") +
    `<p>Back to the rack: ${chips(back, { extra: "back" })}</p>` +
    `<p>Draw <b class="big">${plural(p.draw ?? 0, "tile")}</b> from the pool.</p></div>`;
}

export function suggestionText(s) {
  if (typeof s === "string") return s;
  if (Array.isArray(s)) return s.map((set) => (Array.isArray(set) ? set.map(codeOf).join(" ") : codeOf(set))).join(" | ");
  if (s && s.sets) return suggestionText(s.sets);
  return JSON.stringify(s);
}

export function verdictSpeech(v) {
  if (!v) return "";
  if (v.message) return v.message;
  return `${v.player}: ${v.legal ? "legal turn" : "not a legal turn"}`;
}
