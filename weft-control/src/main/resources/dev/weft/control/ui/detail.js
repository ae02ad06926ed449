// Detail pages: a service (its golden metrics over the last hour, its endpoints, callers and callees, its mesh
// tax) and an edge caller → callee (rate, success, latency percentiles, in flight), from /v1/ui/series.
import { getJson, el, table, rate, pct, ms, count, micros, bytes, q } from './api.js';
import { lineChart } from './charts.js';

const C = { rate: '#3a6fd8', success: '#2e9d5b', p50: '#2e9d5b', p90: '#d4a017', p99: '#d64545', inFlight: '#8e6ccf',
  cpu: '#b7791f', heap: '#3a6fd8' };

/** The charts of one series answer; withTax adds the mesh tax charts (services and endpoints, not edges). */
export function charts(s, withTax) {
  const t = s.times || [];
  const box = el('div', { class: 'charts' },
    lineChart('Latency (p50 / p90 / p99)', t, [
      { name: 'p50', values: s.p50 || [], color: C.p50 },
      { name: 'p90', values: s.p90 || [], color: C.p90 },
      { name: 'p99', values: s.p99 || [], color: C.p99 }], ms),
    lineChart('Request rate', t, [{ name: 'req/s', values: s.rate || [], color: C.rate }], rate),
    lineChart('Success rate', t, [{ name: 'success', values: s.success || [], color: C.success }], pct),
    lineChart('In flight', t, [{ name: 'in flight', values: s.inFlight || [], color: C.inFlight }], count));
  if (withTax) {
    box.append(
      lineChart('Mesh tax: sidecar CPU per request', t,
        [{ name: 'µs/req', values: s.cpuMicrosPerRequest || [], color: C.cpu }], micros),
      lineChart('Mesh tax: sidecar heap per request', t,
        [{ name: 'B/req', values: s.heapBytesPerRequest || [], color: C.heap }], bytes));
  }
  return box;
}

const ROW_COLUMNS = [
  { title: 'rate', num: true, cell: r => rate(r.rate) },
  { title: 'success', num: true, cell: r => pct(r.success) },
  { title: 'p50', num: true, cell: r => ms(r.p50) },
  { title: 'p90', num: true, cell: r => ms(r.p90) },
  { title: 'p99', num: true, cell: r => ms(r.p99) },
  { title: 'in flight', num: true, cell: r => count(r.inFlight) },
];

export function mountService(root, [name]) {
  const head = el('h1', {}, `Service ${name}`);
  const now = el('div');
  const chartBox = el('div');
  const endpointTitle = el('h2', {}, 'Endpoints (each registered instance, what its sidecar served)');
  const endpoints = el('div');
  const endpointCharts = el('div', { id: 'endpoint-charts' });
  const edges = el('div');
  let selected = null;
  root.append(el('p', {}, el('a', { href: '#/map' }, '← map')), head, now, chartBox, endpointTitle, endpoints,
    endpointCharts, el('h2', {}, 'Calls in and out'), edges);
  return {
    async refresh() {
      const [svc, series] = await Promise.all([
        getJson(`/v1/ui/service?name=${q(name)}`),
        getJson(`/v1/ui/series?service=${q(name)}`),
      ]);
      now.replaceChildren(svc.now ? table([{ title: 'now', cell: () => name }, ...ROW_COLUMNS,
        { title: 'mesh CPU/req', num: true, cell: r => micros(r.cpuMicrosPerRequest) },
        { title: 'mesh heap/req', num: true, cell: r => bytes(r.heapBytesPerRequest) }], [svc.now])
        : el('p', { class: 'note' }, series.note || 'no traffic served in the last window'));
      chartBox.replaceChildren(charts(series, true));
      endpoints.replaceChildren(svc.endpoints.length ? table([{ title: 'instance', cell: r => r.instance }, ...ROW_COLUMNS,
        { title: 'mesh CPU/req', num: true, cell: r => micros(r.cpuMicrosPerRequest) }], svc.endpoints,
        r => { selected = r.instance; this.refresh(); }) : el('p', { class: 'note' }, 'no endpoint figures yet'));
      if (selected) {
        const s = await getJson(`/v1/ui/series?service=${q(name)}&instance=${q(selected)}`);
        endpointCharts.replaceChildren(el('h2', {}, `Endpoint ${selected}`), charts(s, true));
      }
      const link = r => { location.hash = `#/edge/${q(r.from)}/${q(r.to)}`; };
      edges.replaceChildren(table([{ title: 'edge', cell: r => `${r.from} → ${r.to}` }, ...ROW_COLUMNS],
        [...svc.callers, ...svc.callees], link));
    },
  };
}

export function mountEdge(root, [from, to]) {
  const now = el('div');
  const chartBox = el('div', { id: 'edge-charts' });
  root.append(el('p', {}, el('a', { href: '#/map' }, '← map')),
    el('h1', {}, `Edge ${from} → ${to}`),
    el('p', { class: 'note' }, `What ${from}'s sidecars sent to ${to}: latency from the caller's sidecar, in flight at ${to}'s endpoints and queued for them.`),
    now, chartBox,
    el('p', {}, el('a', { href: `#/traces?service=${q(from)}` }, `traces through ${from}`), ' · ',
      el('a', { href: `#/service/${q(to)}` }, `service ${to}`)));
  return {
    async refresh() {
      const s = await getJson(`/v1/ui/series?from=${q(from)}&to=${q(to)}`);
      const last = i => (s[i] || []).filter(v => v != null).at(-1);
      now.replaceChildren(s.times.length ? table([{ title: 'last', cell: () => `${from} → ${to}` }, ...ROW_COLUMNS],
        [{ rate: last('rate'), success: last('success'), p50: last('p50'), p90: last('p90'), p99: last('p99'), inFlight: last('inFlight') }])
        : el('p', { class: 'note' }, s.note || 'no data yet'));
      chartBox.replaceChildren(charts(s, false));
    },
  };
}
