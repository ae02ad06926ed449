// Traces from the control plane's Zipkin-compatible API (/api/v2): a search by service, status, minimum duration
// and time, and one trace as a waterfall with each span's queue, connect, upstream (or app) and answer time, the
// critical path highlighted. The step annotations are the ones ./weft trace reads (cli/Waterfall).
import { getJson, el, table, ms, q } from './api.js';

/** Spans of the last moments may still be on their way from the other sidecars: a trace that young looks cut. */
const SETTLE_MS = 2000;
const LOOKBACKS = [['5m', 300000], ['15m', 900000], ['1h', 3600000], ['6h', 21600000]];

export function mountTraces(root, _args, params) {
  const service = el('select', { id: 'trace-service' }, el('option', { value: '' }, 'any service'));
  const status = el('select', { id: 'trace-status' },
    el('option', { value: '' }, 'any status'), el('option', { value: 'error' }, 'failed only'),
    el('option', { value: 'ok' }, 'succeeded only'));
  const minMs = el('input', { id: 'trace-min', type: 'number', min: 0, step: 1, placeholder: 'min ms', size: 8 });
  const lookback = el('select', { id: 'trace-lookback' }, LOOKBACKS.map(([n, v]) =>
    el('option', n === '15m' ? { value: v, selected: 'selected' } : { value: v }, `last ${n}`)));
  const until = el('input', { id: 'trace-until', type: 'datetime-local', step: 1,
    title: 'until (empty: now, less the last 2 s whose spans may still be arriving)' });
  const limit = el('select', { id: 'trace-limit' }, [20, 50, 200].map(n => el('option', { value: n }, `${n} traces`)));
  const list = el('div', { id: 'trace-list' });
  const wanted = params.get('service');
  for (const c of [service, status, minMs, lookback, until, limit]) c.addEventListener('change', () => page.refresh());
  root.append(el('h1', {}, 'Traces'), el('div', { class: 'toolbar' }, service, status, minMs, lookback,
    el('label', {}, 'until ', until), limit), list);
  let servicesLoaded = false;
  let shownKey = null;

  const page = {
    async refresh() {
      if (!servicesLoaded) {
        const names = await getJson('/api/v2/services');
        for (const n of names) service.append(el('option', n === wanted ? { value: n, selected: 'selected' } : { value: n }, n));
        servicesLoaded = true;
      }
      const minUs = Math.max(0, Math.round(Number(minMs.value || 0) * 1000));
      // An 'until' in the past pins the window (the list stops moving); empty follows now, 2 s behind.
      const endTs = until.value ? new Date(until.value).getTime() : Date.now() - SETTLE_MS;
      let url = `/api/v2/traces?limit=${limit.value}&lookback=${lookback.value}&endTs=${endTs}&minDuration=${minUs}`;
      if (service.value) url += `&serviceName=${q(service.value)}`;
      if (status.value === 'error') url += '&annotationQuery=error';
      let traces = await getJson(url);
      let summaries = traces.map(summarize);
      if (status.value === 'ok') summaries = summaries.filter(s => !s.failed);
      // Redrawn only when the answer changed, so a row is not replaced under the mouse for nothing.
      const key = JSON.stringify(summaries);
      if (key === shownKey) return;
      shownKey = key;
      list.replaceChildren(summaries.length ? table([
        { title: 'trace', cell: s => el('a', { href: `#/trace/${s.id}` }, s.id) },
        { title: 'started', cell: s => new Date(s.start / 1000).toLocaleTimeString([], { hour: '2-digit',
          minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3 }) },
        { title: 'duration', num: true, cell: s => ms(s.duration / 1000) },
        { title: 'spans', num: true, cell: s => s.spans },
        { title: 'status', cell: s => el('span', { class: s.failed ? 'bad' : 'ok' }, s.status + (s.failed ? ' failed' : '')) },
        { title: 'request', cell: s => s.request },
        { title: 'path', cell: s => s.services },
      ], summaries, s => { location.hash = `#/trace/${s.id}`; })
        : el('p', { class: 'note' }, 'No traces match (are sidecars sending spans to this control plane? see docs/observability.md).'));
    },
  };
  return page;
}

function failed(s) {
  const code = s.tags?.['http.status_code'];
  return 'error' in (s.tags || {}) || (code != null && code.startsWith('5'));
}

function summarize(trace) {
  const start = Math.min(...trace.map(s => s.timestamp || 0));
  const end = Math.max(...trace.map(s => (s.timestamp || 0) + (s.duration || 0)));
  const roots = tree(trace).roots;
  const root = roots[0]?.span;
  const services = [];
  for (const s of [...trace].sort((a, b) => a.timestamp - b.timestamp)) {
    for (const n of [s.localEndpoint?.serviceName, s.remoteEndpoint?.serviceName]) if (n && !services.includes(n)) services.push(n);
  }
  return {
    id: trace[0]?.traceId, start, duration: end - start, spans: trace.length, failed: trace.some(failed),
    status: root?.tags?.['http.status_code'] || '–', request: root ? describe(root) : '–', services: services.join(' → '),
  };
}

function describe(s) {
  const m = s.tags?.['http.method'], p = s.tags?.['http.path'];
  return m ? `${m} ${p || ''}` : (s.name || '?');
}

/** Spans as a tree: children by parent id; a span whose parent is missing (or itself) is a root. */
export function tree(trace) {
  const ids = new Set(trace.map(s => s.id));
  const nodes = trace.map(span => ({ span, key: `${span.id}/${span.kind}`, children: [] }));
  const byId = new Map();
  // A CLIENT span and the SERVER span that shares its id (B3 shared spans): the SERVER hangs under the CLIENT.
  for (const n of nodes) if (n.span.kind !== 'SERVER' || !byId.has(n.span.id)) byId.set(n.span.id, n);
  const roots = [];
  for (const n of nodes) {
    const s = n.span;
    let parent = null;
    if (s.kind === 'SERVER' && byId.get(s.id) !== n && byId.get(s.id)?.span.kind === 'CLIENT') parent = byId.get(s.id);
    else if (s.parentId && ids.has(s.parentId) && s.parentId !== s.id) parent = byId.get(s.parentId);
    (parent ? parent.children : roots).push(n);
  }
  const byStart = (a, b) => (a.span.timestamp || 0) - (b.span.timestamp || 0);
  for (const n of nodes) n.children.sort(byStart);
  roots.sort(byStart);
  return { roots, nodes };
}

/**
 * The critical path: from a span's end walk back, taking the child that finished last, then the last one to finish
 * before that one started, and so on, and the same inside each child taken (what the trace waited on, span by span).
 * A child still running when the one after it started overlapped it and is not on the path. The first child may end
 * a little after its parent (the callee's clock is another host's), so it is taken if it started before.
 */
export function criticalPath(roots) {
  const on = new Set();
  const end = n => (n.span.timestamp || 0) + (n.span.duration || 0);
  const walk = n => {
    on.add(n.key);
    let t = end(n);
    let first = true;
    for (const c of [...n.children].sort((a, b) => end(b) - end(a))) {
      const start = c.span.timestamp || 0;
      if (start >= t || (!first && end(c) > t)) continue;
      walk(c);
      t = start;
      first = false;
    }
  };
  if (roots.length) walk(roots[0]);
  return on;
}

function at(span, name) {
  return (span.annotations || []).find(a => a.value === name)?.timestamp || 0;
}

/** A span's steps as [kind, from, to] (epoch µs), from the sidecar's annotations; one plain bar without them. */
export function segments(span) {
  const ts = span.timestamp || 0, endTs = ts + (span.duration || 0);
  const admitted = at(span, 'admitted'), connected = at(span, 'connected'), sent = at(span, 'sent'), first = at(span, 'first-byte');
  const weft = admitted || sent || first || (span.tags && 'weft.direction' in span.tags);
  if (!weft) return [['plain', ts, endTs]];
  const out = [];
  const queueEnd = admitted || endTs;
  out.push(['queue', ts, queueEnd]);
  if (admitted) {
    const connectEnd = sent || connected || first || endTs;
    out.push(['connect', admitted, connectEnd]);
    if (sent && first) out.push([span.kind === 'SERVER' ? 'app' : 'upstream', sent, first]);
    if (first) out.push(['answer', first, endTs]);
  }
  return out.filter(([, a, b]) => b >= a);
}

function stepText(span) {
  const parts = [];
  for (const [kind, a, b] of segments(span)) if (kind !== 'plain') parts.push(`${kind} ${ms((b - a) / 1000)}`);
  const endpoint = span.tags?.['weft.endpoint'];
  if (endpoint && span.kind === 'CLIENT') parts.push(`endpoint ${endpoint} (${span.tags['weft.endpoint.address'] || '?'})`);
  if (span.tags?.['weft.attempts']) parts.push(`${span.tags['weft.attempts']} attempts`);
  if (span.tags?.error) parts.push(`error ${span.tags.error}`);
  return parts.length ? parts.join(' · ') : 'no step annotations';
}

function label(s) {
  const local = s.localEndpoint?.serviceName || '?';
  if (s.kind === 'CLIENT') return `${local} → ${s.remoteEndpoint?.serviceName || '?'}`;
  if (s.kind === 'SERVER') return `${local} (inbound)`;
  return `${local} ${s.name || ''}`;
}

export function mountTrace(root, [id]) {
  const body = el('div', { id: 'waterfall', class: 'waterfall' });
  root.append(el('p', {}, el('a', { href: '#/traces' }, '← traces')), el('h1', {}, `Trace ${id}`),
    el('div', { class: 'legend' }, [['queue', 'queue (waiting for capacity)'], ['connect', 'connect and send'],
      ['upstream', 'upstream (waiting for the answer)'], ['app', 'app (inbound: the local app)'], ['answer', 'answer body'],
      ['plain', 'span without Weft steps']].map(([k, t]) => el('span', {}, el('i', { class: `seg-${k}` }), t)),
      el('span', {}, 'bold with a red outline: the critical path')),
    body);
  let shown = false;
  return {
    async refresh() {
      // A trace is complete once shown; later polls only catch spans that arrived late.
      const trace = await getJson(`/api/v2/trace/${encodeURIComponent(id)}`);
      if (shown && body.dataset.spans === String(trace.length)) return;
      shown = true;
      body.dataset.spans = trace.length;
      render(body, trace);
    },
  };
}

function render(body, trace) {
  const { roots } = tree(trace);
  const crit = criticalPath(roots);
  const start = Math.min(...trace.map(s => s.timestamp || 0));
  const total = Math.max(1, Math.max(...trace.map(s => (s.timestamp || 0) + (s.duration || 0))) - start);
  const rows = [];
  const visit = (n, depth) => {
    const s = n.span;
    const track = el('div', { class: 'wf-track' });
    for (const [kind, a, b] of segments(s)) {
      const seg = el('div', { class: `wf-seg seg-${kind}`, title: `${kind} ${ms((b - a) / 1000)}` });
      seg.style.left = `${(100 * (a - start) / total).toFixed(3)}%`;
      seg.style.width = `${Math.max(0.2, 100 * (b - a) / total).toFixed(3)}%`;
      track.append(seg);
    }
    const status = s.tags?.['http.status_code'] || '–';
    rows.push(el('div', { class: 'wf-row' + (crit.has(n.key) ? ' crit' : ''), 'data-span': s.id, 'data-kind': s.kind || '' },
      el('div', { class: 'wf-label', title: label(s) }, '\u00a0'.repeat(depth * 3) + label(s) + `  ${status}` + (failed(s) ? ' ✗' : '')),
      track,
      el('div', { class: 'num' }, ms((s.duration || 0) / 1000)),
      el('div', { class: 'wf-detail' }, '\u00a0'.repeat(depth * 3) + `${describe(s)} · ${stepText(s)}`)));
    n.children.forEach(c => visit(c, depth + 1));
  };
  roots.forEach(r => visit(r, 0));
  body.replaceChildren(el('p', { class: 'note' }, `${trace.length} spans · ${ms(total / 1000)} · started ${new Date(start / 1000).toISOString()}`), ...rows);
}
