// Reading the control plane's JSON, and formatting numbers the same way on every page.

// The operator token, for a control plane that wants credentials for topology reads (any but a local one read
// from its own machine: docs/security.md). Asked for once, on the first 401, and kept for this tab only
// (sessionStorage), never in the URL. It is sent as Authorization: Bearer, as the CLI sends it.
const TOKEN_KEY = 'weft-operator-token';
let asked = false;

function headers() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** GET a JSON document; throws an Error carrying the server's message (and .status) on a non-2xx answer. */
export async function getJson(url) {
  let r = await fetch(url, { cache: 'no-store', headers: headers() });
  if (r.status === 401 && !asked) {
    asked = true;
    const token = window.prompt('This control plane wants the operator token (the first line of its admin.token,'
      + ' or of --admin-token-file) to show the mesh:');
    if (token && token.trim()) {
      sessionStorage.setItem(TOKEN_KEY, token.trim());
      r = await fetch(url, { cache: 'no-store', headers: headers() });
    }
  }
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  if (!r.ok) {
    const e = new Error((body && body.error) || `${url} answered ${r.status}`);
    e.status = r.status;
    throw e;
  }
  return body;
}

export function rate(v) { return v == null ? '–' : v >= 100 ? `${v.toFixed(0)}/s` : `${v.toFixed(1)}/s`; }
export function pct(v) { return v == null ? '–' : `${(v * 100).toFixed(v >= 0.9995 || v === 0 ? 1 : 2)}%`; }
export function ms(v) {
  if (v == null) return '–';
  if (v < 1) return `${(v * 1000).toFixed(0)} µs`;
  if (v < 1000) return `${v.toFixed(v < 10 ? 2 : 1)} ms`;
  return `${(v / 1000).toFixed(2)} s`;
}
export function count(v) { return v == null ? '–' : v.toFixed(0); }
export function bytes(v) { return v == null ? '–' : v < 10000 ? `${v.toFixed(0)} B` : `${(v / 1024).toFixed(1)} KB`; }
export function micros(v) { return v == null ? '–' : `${v.toFixed(0)} µs`; }
export function duration(seconds) {
  if (seconds == null) return '–';
  const s = Math.floor(seconds);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min`;
  if (s < 172800) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d`;
}

/** Health of a success rate: ok (>= 99%), warn (>= 95%), bad, or none without traffic. */
export function health(success) {
  if (success == null) return 'none';
  return success >= 0.99 ? 'ok' : success >= 0.95 ? 'warn' : 'bad';
}
export const COLORS = { ok: '#2e9d5b', warn: '#d4a017', bad: '#d64545', none: '#9aa3ad' };

/** Fills a new element: on* attributes become listeners, children are nodes or text (never parsed as HTML). */
function fill(e, attrs, children) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c == null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

/** A DOM element: el('td', {class: 'num'}, 'text', child...). */
export function el(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

export const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** A table from column specs [{title, num, cell: row => text|Node}] and rows; onRow makes rows clickable. */
export function table(columns, rows, onRow) {
  return el('table', {},
    el('thead', {}, el('tr', {}, columns.map(c => el('th', { class: c.num ? 'num' : null }, c.title)))),
    el('tbody', {}, rows.map(r => el('tr', onRow ? { class: 'clickable', onclick: () => onRow(r) } : {},
      columns.map(c => el('td', { class: c.num ? 'num' : null }, c.cell(r)))))));
}

export const q = encodeURIComponent;
