// The dashboard's shell: a hash router (#/map, #/service/NAME, #/edge/FROM/TO, #/traces, #/trace/ID, #/policies,
// #/sidecars) and the live refresh: the shown page's refresh() runs at once and then every 5 s, no reload needed.
import { mountMap } from './map.js';
import { mountService, mountEdge } from './detail.js';
import { mountTraces, mountTrace } from './traces.js';
import { mountPolicies, mountSidecars } from './lists.js';

const REFRESH_MS = 5000;
const pages = {
  map: mountMap, service: mountService, edge: mountEdge, traces: mountTraces, trace: mountTrace,
  policies: mountPolicies, sidecars: mountSidecars,
};
const nav = { service: 'map', edge: 'map', trace: 'traces' };

let current = null;
let timer = null;
let generation = 0;

async function refresh(gen) {
  if (!current || gen !== generation) return;
  const status = document.getElementById('status');
  try {
    await current.refresh();
    if (gen !== generation) return;
    status.textContent = `updated ${new Date().toLocaleTimeString()}`;
    status.classList.remove('error');
  } catch (e) {
    status.textContent = `refresh failed: ${e.message}`;
    status.classList.add('error');
  }
  if (gen === generation) timer = setTimeout(() => refresh(gen), REFRESH_MS);
}

function route() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const parts = (path || 'map').split('/').map(decodeURIComponent);
  const name = pages[parts[0]] ? parts[0] : 'map';
  clearTimeout(timer);
  generation++;
  const root = document.getElementById('page');
  root.replaceChildren();
  root.dataset.page = name;
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('active', a.dataset.page === (nav[name] || name));
  }
  current = pages[name](root, parts.slice(1), new URLSearchParams(query || ''));
  refresh(generation);
}

window.addEventListener('hashchange', route);
route();
