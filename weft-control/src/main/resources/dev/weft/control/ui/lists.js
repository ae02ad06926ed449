// The policies in force (documents stored in the control plane, and what each sidecar made of them) and every
// registered sidecar with its readiness, version, uptime and /config.
import { getJson, el, table, duration, q } from './api.js';

export function mountPolicies(root) {
  const byService = el('div', { id: 'policy-services' });
  const docs = el('div', { id: 'policy-docs' });
  const sidecars = el('div', { id: 'policy-sidecars' });
  const note = el('p', { class: 'note' });
  root.append(el('h1', {}, 'Policies'), note, el('h2', {}, 'In force per service'), byService,
    el('h2', {}, 'Documents'), docs, el('h2', {}, 'Per sidecar: applied, or rejected and why'), sidecars);
  return {
    async refresh() {
      const p = await getJson('/v1/ui/policies');
      note.textContent = `Revision ${p.revision}. ${p.note}.`;
      // A service's own entry wins over '*' (docs/configuration.md); documents are applied whole, in name order.
      const services = [...new Set([...p.sidecars.map(s => s.service), ...p.documents.flatMap(d => d.services)])]
        .filter(s => s !== '*').sort();
      const naming = s => p.documents.filter(d => d.services.includes(s)).map(d => d.name);
      const wildcard = p.documents.filter(d => d.services.includes('*')).map(d => d.name);
      const rejected = s => p.sidecars.filter(c => c.service === s && c.status && c.status.startsWith('rejected')).length;
      byService.replaceChildren(services.length ? table([
        { title: 'service', cell: s => s },
        { title: 'its own entry in', cell: s => naming(s).join(', ') || '–' },
        { title: 'else the defaults of', cell: s => naming(s).length ? '' : (wildcard.join(', ') || 'none: built-in defaults') },
        { title: 'sidecars rejecting', num: true, cell: s => { const n = rejected(s); return n ? el('span', { class: 'bad' }, n) : '0'; } },
      ], services) : el('p', { class: 'note' }, 'No services registered.'));
      docs.replaceChildren(...(p.documents.length ? p.documents.map(d => el('div', { class: 'panel', 'data-policy': d.name },
        el('h2', {}, `${d.name}`, el('span', { class: 'note' }, d.services.length
          ? `  services: ${d.services.join(', ')}` : '  (names no service under services:)')),
        el('pre', {}, d.text))) : [el('p', { class: 'note' }, 'No policy documents stored: every sidecar runs the defaults (./weft apply stores one).')]));
      sidecars.replaceChildren(table([
        { title: 'service', cell: s => s.service },
        { title: 'instance', cell: s => s.instance },
        { title: 'status', cell: s => s.status == null ? el('span', { class: 'note' }, 'unknown (not read yet, or /config unreachable)')
          : el('span', { class: s.status.startsWith('rejected') ? 'bad' : 'ok' }, s.status) },
        { title: 'rejected sets', num: true, cell: s => s.rejections ?? '–' },
      ], p.sidecars));
    },
  };
}

export function mountSidecars(root) {
  const filter = el('input', { type: 'search', placeholder: 'filter service or instance', id: 'sidecar-filter', size: 28 });
  const info = el('span', { class: 'note' });
  const list = el('div', { id: 'sidecar-list' });
  const more = el('button', { type: 'button', hidden: 'hidden' }, 'show more');
  const open = new Map(); // instance -> the <pre> showing its /config, kept across refreshes
  let limit = 200;
  let typing = null;
  filter.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(() => page.refresh(), 300); });
  more.addEventListener('click', () => { limit += 200; page.refresh(); });
  root.append(el('h1', {}, 'Sidecars'), el('div', { class: 'toolbar' }, filter, info), list, more);

  const toggle = async (s) => {
    if (open.has(s.instance)) { open.delete(s.instance); page.refresh(); return; }
    const pre = el('pre', { 'data-config': s.instance }, 'loading /config…');
    open.set(s.instance, pre);
    page.refresh();
    try {
      pre.textContent = JSON.stringify(await getJson(`/v1/ui/sidecar-config?instance=${q(s.instance)}`), null, 2);
    } catch (e) {
      pre.textContent = `could not read /config: ${e.message}`;
    }
  };

  const page = {
    async refresh() {
      const r = await getJson(`/v1/ui/sidecars?filter=${q(filter.value.trim())}&limit=${limit}`);
      info.textContent = `${r.sidecars.length} of ${r.matching} shown (${r.total} registered)`;
      more.hidden = r.sidecars.length >= r.matching;
      const rows = [];
      for (const s of r.sidecars) {
        rows.push(el('tr', { 'data-instance': s.instance },
          el('td', {}, s.service), el('td', {}, s.instance), el('td', {}, s.address), el('td', {}, s.admin || '–'),
          el('td', {}, s.ready == null ? el('span', { class: 'note' }, s.error || 'unknown')
            : el('span', { class: s.ready ? 'ok' : 'bad' }, s.ready ? 'ready' : 'not ready')),
          el('td', {}, s.version || el('span', { class: 'note', title: 'the registration carries no version' }, '–')),
          el('td', { class: 'num' }, duration(s.uptimeSeconds)),
          el('td', {}, s.admin ? el('button', { type: 'button', onclick: () => toggle(s) },
            open.has(s.instance) ? 'hide /config' : 'show /config') : '')));
        if (open.has(s.instance)) rows.push(el('tr', {}, el('td', { colspan: 8 }, open.get(s.instance))));
      }
      list.replaceChildren(el('table', {},
        el('thead', {}, el('tr', {}, ['service', 'instance', 'address', 'admin', 'readiness', 'version', 'uptime', '']
          .map(t => el('th', {}, t)))),
        el('tbody', {}, rows)));
    },
  };
  return page;
}
