// The hall pages' link to the server: the tournament id and token from the page's address
// (?t=ID&token=TOKEN), JSON requests that turn the server's {"detail"} into an Error.

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

export function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

export function showError(el, error) {
  el.hidden = !error;
  el.textContent = error ? error.message || String(error) : "";
}
