// Words and tile chips: how readings, verdicts and penalties look on the page. Every word
// comes from the language catalogue (i18n.js); tiles are coloured chips on screen and
// words ("red 7") in speech and in a chip's title.

import { t, tileWords, tm } from "./i18n.js";

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

export function chip(item, { extra = "" } = {}) {
  const code = codeOf(item);
  const m = /^([A-Z])(\d+)?(?:=(.*))?$/.exec(code);
  let cls = "unknown";
  let face = esc(code);
  let title = code;
  if (m && m[1] === "J") {
    cls = "joker";
    face = m[3] ? `J<small>=${esc(m[3])}</small>` : "J";
    title = m[3] ? t("tile.joker_as", { tile: tileWords(m[3]) }) : tileWords("J");
  } else if (m && COLOR_OF[m[1]]) {
    cls = COLOR_OF[m[1]];
    face = esc(m[2] ?? "?");
    title = tileWords(code);
  }
  return `<span class="tile t-${cls} ${extra}" title="${esc(title)}" aria-label="${esc(title)}" data-code="${esc(code)}">${face}</span>`;
}

export function chips(items, opts) {
  if (!items || !items.length) return `<span class="muted">${esc(t("tiles.none"))}</span>`;
  return `<span class="tiles">${items.map((x) => chip(x, opts)).join("")}</span>`;
}

// Tiles in words, for speech and plain sentences: "red 7, blue 7".
export function tilesInWords(items) { return (items || []).map((x) => tileWords(codeOf(x))).join(", "); }

export function clock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// The set of a reading as chips, each joker with the tile it stands for (J=R9).
export function setChips(reading, set) {
  const byId = new Map((reading.tiles || []).map((x) => [x.id, x]));
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
  if (!set.valid) return t("set.invalid");
  return set.kind === "group" ? t("set.group") : set.kind === "run" ? t("set.run") : t("set.valid");
}

// A set's reasons: the server's message ids where it gives them, else its English words.
export function reasonsText(item) {
  const ids = item.reason_ids || [];
  if (ids.length) return ids.map((m) => tm(m)).join("; ");
  return (item.reasons || []).join("; ");
}

// What kind of verdict: a pass is its own thing, not a refused turn.
export function verdictKind(v) {
  if (v.timed_out) return "timeout";
  if (v.passed) return "pass";
  return v.legal ? "legal" : "illegal";
}

// The one line a verdict folds into: who, what, and what to draw.
export function verdictHeadline(v) {
  const p = { player: v.player || "", count: (v.played || []).length, draws: v.draws || 0 };
  const kind = verdictKind(v);
  if (kind === "timeout") return t(v.penalty ? "verdict.timeout_penalty" : v.passed ? "verdict.timeout_pass" : "verdict.timeout_legal", p);
  if (kind === "pass") return t("verdict.pass", { ...p, count: p.draws });
  if (kind === "legal") return t("verdict.legal", p);
  return t("verdict.illegal", p);
}

function problemsOf(v) {
  const ids = v.problem_ids || [];
  if (ids.length) return ids.map((m) => tm(m));
  // A pass says so in its headline; the referee's "laid nothing" adds nothing.
  return (v.problems || []).filter((x) => !(v.passed && /a pass$/.test(x)));
}

function checksOf(v) {
  const ids = v.check_ids || [];
  if (ids.length) return ids.map((m) => tm(m));
  return v.check || []; // a verdict stored before the ids were sent: its English words
}

// The verdict of a turn in words, for the verdict panel: a one-line summary that opens on
// a tap into the facts, the problems and the penalty (said once, in the penalty box).
export function verdictHtml(v, { meldNeeded = 30 } = {}) {
  if (!v) return "";
  const kind = verdictKind(v);
  const cls = { legal: "ok", pass: "pass", illegal: "bad", timeout: "bad" }[kind];
  const parts = [`<summary><span class="headline ${cls}">${esc(verdictHeadline(v))}</span>` +
    ((v.played || []).length ? ` ${chips(v.played)}` : "") + `</summary>`];
  parts.push(`<dl class="facts">`);
  if ((v.played || []).length) parts.push(`<dt>${esc(t("verdict.played"))}</dt><dd>${chips(v.played)}</dd>`);
  // A pass or a meld of invalid sets counts 0: the problems below say why.
  if (v.meld_total && v.first_meld !== false) {
    const need = v.meld_needed ?? meldNeeded;
    const reaches = v.meld_total >= need;
    parts.push(`<dt>${esc(t("verdict.meld"))}</dt><dd>${esc(t("verdict.meld_points", { points: v.meld_total }))} ` +
      (reaches ? `<b class="ok">${esc(t("verdict.meld_reaches", { need }))}</b>` : `<b class="bad">${esc(t("verdict.meld_below", { need }))}</b>`) + `</dd>`);
  }
  if (v.left_table && v.left_table.length) {
    parts.push(`<dt>${esc(t("verdict.left_table"))}</dt><dd>${chips(v.left_table, { extra: "back" })}</dd>`);
  }
  // Tiles under a hand when the turn was judged: kept on the table, named for a look.
  if (v.hidden && v.hidden.length) {
    parts.push(`<dt>${esc(t("verdict.hidden"))}</dt><dd class="hidden-tiles">${chips(v.hidden)} <span class="muted">${esc(t("verdict.hidden_note"))}</span></dd>`);
  }
  if (v.draws && !v.penalty) parts.push(`<dt>${esc(t("verdict.draw"))}</dt><dd><b class="big">${esc(t("tiles.count", { count: v.draws }))}</b></dd>`);
  if (v.time_used_s != null) parts.push(`<dt>${esc(t("verdict.time_used"))}</dt><dd>${clock(v.time_used_s)}</dd>`);
  parts.push(`</dl>`);
  const problems = problemsOf(v);
  if (problems.length) parts.push(`<ul class="problems">${problems.map((x) => `<li>${esc(x)}</li>`).join("")}</ul>`);
  // What the verdict asks a person to look at before it stands (a hand over tiles, a tile
  // at one photo's edge): in the page's language where the server gives the ids.
  const checks = checksOf(v);
  if (checks.length) {
    parts.push(`<h4>${esc(t("verdict.check"))}</h4><ul class="checks">` +
      checks.map((x) => `<li>${esc(x)}</li>`).join("") + `</ul>`);
  }
  if (v.invalid_sets && v.invalid_sets.length) {
    parts.push(`<h4>${esc(t("verdict.invalid_sets"))}</h4><ul class="invalid-sets">` + v.invalid_sets.map((s) =>
      `<li>${chips(s.tiles || [])}<br><span class="reason">${esc(reasonsText(s))}</span></li>`).join("") + `</ul>`);
  }
  // Sets already invalid before the turn and left as they were: said, not this player's problem.
  const before = (v.preexisting_ids || []).length ? v.preexisting_ids.map((m) => tm(m)) : (v.preexisting_invalid || []);
  if (before.length) {
    parts.push(`<h4>${esc(t("verdict.invalid_before"))}</h4><ul class="preexisting muted">` +
      before.map((x) => `<li>${esc(x)}</li>`).join("") + `</ul>`);
  }
  if (v.penalty) parts.push(penaltyHtml(v.penalty));
  if (v.suggestion) parts.push(`<p class="suggestion"><b>${esc(t("verdict.fix"))}</b> ${suggestionHtml(v.suggestion)}</p>`);
  return parts.join("");
}

export function penaltyHtml(p) {
  const back = p.tiles_back || [];
  return `<div class="penalty"><h4>${esc(t("penalty.title"))}</h4>` +
    (back.length ? `<p>${esc(t("penalty.back"))} ${chips(back, { extra: "back" })}</p>` : `<p>${esc(t("penalty.table_stays"))}</p>`) +
    (p.draw ? `<p>${esc(t("penalty.draw"))} <b class="big">${esc(t("tiles.count", { count: p.draw }))}</b></p>` : "") + `</div>`;
}

export function suggestionHtml(s) {
  if (typeof s === "string") return esc(s);
  if (Array.isArray(s)) return s.map((set) => chips(Array.isArray(set) ? set.map(codeOf) : [codeOf(set)])).join(" ");
  if (s && s.sets) return suggestionHtml(s.sets);
  return "";
}

// What the page says aloud: the headline, then the penalty in words (tiles as words).
export function verdictSpeech(v) {
  if (!v) return "";
  const head = verdictHeadline(v);
  const back = v.penalty ? v.penalty.tiles_back || [] : [];
  if (!back.length) return head;
  return `${head}. ${t("penalty.spoken", { tiles: tilesInWords(back), count: v.penalty.draw || 0 })}`;
}
