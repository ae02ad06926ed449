// The service map: services as nodes, caller → callee edges coloured by health with rate, success rate and p99,
// laid out in columns by call depth. The culprit from GET /v1/diagnose is marked when that route answers: asked every
// 15 s, not at every refresh, because a diagnosis reads the whole span store (up to a second or more when it is full).
import { getJson, el, svg, rate, pct, ms, health, COLORS, q } from './api.js';

const NODE_W = 190, NODE_H = 58, COL_W = 420, ROW_H = 84, PAD = 30;
/** A call depth with more services than this is drawn as several columns side by side, so the map stays wide, not tall. */
const MAX_ROWS = 12;
const DIAGNOSE_EVERY_MS = 15000;

export function mountMap(root) {
  const filter = el('input', { type: 'search', placeholder: 'filter services', id: 'map-filter', size: 24 });
  const limit = el('select', { id: 'map-limit' }, [30, 60, 120, 250, 500].map(n =>
    el('option', n === 60 ? { value: n, selected: 'selected' } : { value: n }, `${n} busiest`)));
  const info = el('span', { class: 'note' });
  const banner = el('div', { id: 'culprit', class: 'banner', hidden: 'hidden' });
  const canvas = el('div', { class: 'panel', id: 'map' });
  const notes = el('div', { class: 'note' });
  let state = null;
  let diagnosis = null;
  let diagnosedAt = 0;
  const redraw = () => { if (state) draw(canvas, state.map, state.diagnosis); };
  let typing = null;
  filter.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(() => page.refresh(), 300); });
  limit.addEventListener('change', () => page.refresh());
  root.append(el('h1', {}, 'Service map'), el('div', { class: 'toolbar' }, filter, limit, info), banner, canvas, notes);

  const page = {
    async refresh() {
      const asked = Date.now() - diagnosedAt >= DIAGNOSE_EVERY_MS;
      const [map, answer] = await Promise.all([
        getJson(`/v1/ui/map?filter=${q(filter.value.trim())}&limit=${limit.value}`),
        asked ? diagnose() : Promise.resolve(diagnosis),
      ]);
      if (asked) { diagnosis = answer; diagnosedAt = Date.now(); }
      state = { map, diagnosis };
      info.textContent = `${map.services.length} of ${map.matchingServices} services shown` +
        (map.hiddenServices > 0 ? ` (${map.hiddenServices} quieter ones hidden: filter to find them)` : '') +
        ` · ${map.edges.length} edges · rates over the last ${map.windowSeconds ? map.windowSeconds.toFixed(0) : '–'} s`;
      notes.textContent = map.notes.join(' · ');
      if (diagnosis && diagnosis.verdict) {
        banner.hidden = false;
        banner.className = 'banner' + ((diagnosis.culprits || []).length ? ' culprit' : '');
        banner.textContent = diagnosis.verdict;
      } else {
        banner.hidden = true;
      }
      redraw();
    },
  };
  return page;
}

/** GET /v1/diagnose's answer, or null when it gives none (an error status): then no culprit is shown. */
async function diagnose() {
  try {
    return await getJson('/v1/diagnose');
  } catch {
    return null;
  }
}

/** Column of each service: 0 for those nobody calls, else one more than its deepest caller (cycles cut). */
export function depths(names, edges) {
  const depth = new Map(names.map(n => [n, 0]));
  for (let round = 0; round < names.length; round++) {
    let changed = false;
    for (const e of edges) {
      if (e.from === e.to || !depth.has(e.from) || !depth.has(e.to)) continue;
      const d = depth.get(e.from) + 1;
      if (d > depth.get(e.to) && d < names.length) { depth.set(e.to, d); changed = true; }
    }
    if (!changed) break;
  }
  return depth;
}

function draw(canvas, map, diagnosis) {
  const names = map.services.map(s => s.name);
  if (names.length === 0) {
    canvas.replaceChildren(el('p', { class: 'note' }, 'No services registered yet (or none match the filter).'));
    return;
  }
  const culprits = new Set((diagnosis?.culprits || []).map(c => c.service));
  const backPressure = new Set((diagnosis?.backPressure || []).map(c => c.service));
  const overloaded = new Map((diagnosis?.overloaded || []).map(o => [o.service, o.reason]));
  const culpritEndpoints = new Map();
  for (const c of diagnosis?.culprits || []) {
    if (c.endpoint) culpritEndpoints.set(c.service, [...(culpritEndpoints.get(c.service) || []), c.endpointId || c.endpoint]);
  }
  const depth = depths(names, map.edges);
  const byDepth = [];
  for (const s of map.services) {
    const d = depth.get(s.name);
    (byDepth[d] ||= []).push(s);
  }
  // Columns of one depth sit close together (no edge runs between them); a new depth leaves room for edge labels.
  const columns = [];
  const xs = [];
  let x = PAD;
  for (const level of byDepth.filter(Boolean)) {
    for (let i = 0; i < level.length; i += MAX_ROWS) {
      if (columns.length) x += i === 0 ? COL_W : NODE_W + 30;
      columns.push(level.slice(i, i + MAX_ROWS));
      xs.push(x);
    }
  }
  const pos = new Map();
  columns.forEach((col, c) => col.forEach((s, r) => pos.set(s.name, { x: xs[c], y: PAD + r * ROW_H })));
  const width = PAD + x + NODE_W;
  const height = PAD * 2 + Math.max(...columns.map(c => c.length)) * ROW_H;
  const root = svg('svg', { class: 'map', width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg('defs', {}, Object.entries(COLORS).map(([k, c]) =>
    svg('marker', { id: `arrow-${k}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' },
      svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: c })))));
  for (const e of map.edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    const h = health(e.success);
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2;
    let x2 = b.x, y2 = b.y + NODE_H / 2;
    let d;
    if (x2 > x1) {
      const mx = (x1 + x2) / 2;
      d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
    } else {
      // Back or same-column edge (a cycle): loop over the top.
      x2 = b.x + NODE_W / 2; y2 = b.y;
      d = `M${a.x + NODE_W / 2},${a.y} C${a.x + NODE_W / 2},${a.y - 40} ${x2},${y2 - 40} ${x2},${y2}`;
    }
    const label = `${rate(e.rate)} · ${pct(e.success)} · p99 ${ms(e.p99)}`;
    const open = () => { location.hash = `#/edge/${q(e.from)}/${q(e.to)}`; };
    const g = svg('g', { class: 'edge', 'data-from': e.from, 'data-to': e.to, 'data-health': h, onclick: open },
      svg('title', {}, `${e.from} → ${e.to}: ${label} (click for its charts)`),
      svg('path', { d, class: 'hit' }),
      svg('path', { d, stroke: COLORS[h], 'marker-end': `url(#arrow-${h})` }),
      svg('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 6, 'text-anchor': 'middle' }, label));
    root.append(g);
  }
  for (const s of map.services) {
    const p = pos.get(s.name);
    const h = health(s.success);
    const cls = 'node' + (culprits.has(s.name) ? ' culprit' : backPressure.has(s.name) ? ' backpressure'
      : overloaded.has(s.name) ? ' overloaded' : '');
    const g = svg('g', { class: cls, transform: `translate(${p.x},${p.y})`, 'data-service': s.name,
      onclick: () => { location.hash = `#/service/${q(s.name)}`; } },
      svg('title', {}, `${s.name}: ${s.instances} instance(s)`),
      svg('rect', { width: NODE_W, height: NODE_H, stroke: COLORS[h] }),
      svg('text', { x: 10, y: 20, class: 'name' }, s.name.length > 24 ? s.name.slice(0, 23) + '…' : s.name),
      svg('text', { x: 10, y: 38 }, !s.rate ? 'no inbound traffic' : `${rate(s.rate)} · ${pct(s.success)}`),
      svg('text', { x: 10, y: 52 }, `p99 ${ms(s.p99)} · ${s.instances}×`));
    const tag = (text, cls, title) => g.append(svg('text', { x: NODE_W - 8, y: 14, 'text-anchor': 'end', class: cls },
      svg('title', {}, title), text));
    if (culprits.has(s.name)) {
      const at = culpritEndpoints.get(s.name);
      tag('CULPRIT', 'tag', at ? `the culprit: endpoint ${at.join(', ')}` : 'the culprit: the whole service');
    } else if (backPressure.has(s.name)) {
      tag('back-pressure', 'tag bp', 'waiting on a slower callee: not a cause');
    } else if (overloaded.has(s.name)) {
      tag('OVERLOADED', 'tag bp', overloaded.get(s.name));
    }
    root.append(g);
  }
  canvas.replaceChildren(root);
}
