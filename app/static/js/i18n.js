// The page's words in the players' language: one catalogue per language
// (i18n/{en,nl,fr,de}.json), `{name}` parameters, plural forms chosen by Intl.PluralRules
// ("key": {"one": ..., "other": ...}). Why not a library: docs/decisions/page-languages.md.

export const LANGUAGES = { en: "English", nl: "Nederlands", fr: "Français", de: "Deutsch" };
const KEY = "rummikub.lang";

let lang = "en";
let words = {};
let english = {};
let plurals = new Intl.PluralRules("en");

async function catalogue(code) {
  const response = await fetch(`i18n/${code}.json`, { cache: "no-cache" });
  if (!response.ok) throw new Error(`no catalogue for ${code}`);
  return response.json();
}

// The saved choice, else the first of the browser's languages the page speaks.
export function preferredLanguage() {
  const saved = localStorage.getItem(KEY);
  if (saved && saved in LANGUAGES) return saved;
  for (const l of navigator.languages || [navigator.language || "en"]) {
    const base = String(l).toLowerCase().split("-")[0];
    if (base in LANGUAGES) return base;
  }
  return "en";
}

export async function setLanguage(code, { save = false } = {}) {
  const chosen = code in LANGUAGES ? code : "en";
  if (!Object.keys(english).length) english = await catalogue("en");
  words = chosen === "en" ? english : await catalogue(chosen).catch(() => english);
  lang = words === english ? "en" : chosen;
  plurals = new Intl.PluralRules(lang);
  if (save) localStorage.setItem(KEY, lang);
  document.documentElement.lang = lang;
  document.title = t("brand");
  translatePage();
  return lang;
}

export function language() { return lang; }

// A catalogue given whole (Node, in tests: no fetch of i18n/*.json there).
export function useCatalogue(code, entries, englishEntries = entries) {
  english = englishEntries;
  words = entries;
  lang = code;
  plurals = new Intl.PluralRules(lang);
}

// The speech voice's language tag for SpeechSynthesisUtterance.lang.
export function speechLang() { return { en: "en-GB", nl: "nl-NL", fr: "fr-FR", de: "de-DE" }[lang]; }

export function has(key) { return key in words || key in english; }

export function t(key, params = {}) {
  let entry = words[key] ?? english[key];
  if (entry == null) return key; // a missing key shows as itself; tests/test_page_i18n.py fails on it
  if (typeof entry === "object") entry = entry[plurals.select(Number(params.count ?? 0))] ?? entry.other;
  return String(entry).replace(/\{(\w+)\}/g, (_, name) => (params[name] ?? `{${name}}`));
}

// A server message ({id, params}) in the page's language; ids live under "server." in the
// catalogues. Parameters that are themselves messages (a reason inside a problem) or tile
// codes are worded first.
export function tm(message, fallback = "") {
  if (!message || !message.id) return fallback;
  // The page's own messages (a lost connection: page.unreachable) are keys of their own.
  const key = has(`server.${message.id}`) ? `server.${message.id}` : message.id;
  if (!has(key)) return fallback || `server.${message.id}`;
  const params = {};
  for (const [name, value] of Object.entries(message.params || {})) {
    if (value && typeof value === "object" && value.id) params[name] = tm(value);
    else if (Array.isArray(value)) params[name] = value.map((v) => (v && v.id ? tm(v) : tileWords(v))).join("; ");
    else if (name === "tile" || name === "tiles") params[name] = String(value).split(/[\s;]+/).filter(Boolean).map(tileWords).join(", ");
    else if (name === "colors") params[name] = String(value).split(/\s+/).filter(Boolean).map((c) => t(`color.${c}`)).join(", ");
    else params[name] = value;
  }
  return t(key, params);
}

// A tile code in words: "R7" -> "red 7" ("rood 7"), "J" -> "joker".
export function tileWords(code) {
  const m = /^([KRBOGY])(\d{1,2})$/.exec(String(code));
  if (String(code).startsWith("J")) return t("tile.joker");
  if (!m) return String(code);
  return t("tile.words", { color: t(`color.${m[1]}`), number: m[2] });
}

// Static text of index.html: data-i18n (text), data-i18n-html (markup from the catalogue),
// data-i18n-placeholder / -aria / -title (attributes).
export function translatePage(root = document) {
  root.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  root.querySelectorAll("[data-i18n-html]").forEach((el) => { el.innerHTML = t(el.dataset.i18nHtml); });
  root.querySelectorAll("[data-i18n-placeholder]").forEach((el) => { el.placeholder = t(el.dataset.i18nPlaceholder); });
  root.querySelectorAll("[data-i18n-aria]").forEach((el) => { el.setAttribute("aria-label", t(el.dataset.i18nAria)); });
}
