// Small SVG line charts for the detail pages: a common time axis, gaps where a value is missing (null).
import { svg } from './api.js';

const W = 460, H = 170, L = 56, R = 12, T = 24, B = 22;

/**
 * One chart: title, times (epoch ms), lines [{name, values, color}], a formatter for the y axis.
 * Returns an <svg class="chart"> with data-title set, so tests and users can find it.
 */
export function lineChart(title, times, lines, format) {
  const chart = svg('svg', { class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, 'data-title': title });
  chart.append(svg('text', { x: 8, y: 16, class: 'title' }, title));
  const all = lines.flatMap(l => l.values).filter(v => v != null && isFinite(v));
  if (times.length < 2 || all.length === 0) {
    chart.append(svg('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle' }, 'no data yet'));
    return chart;
  }
  const t0 = times[0], t1 = times[times.length - 1];
  let max = Math.max(...all), min = Math.min(0, ...all);
  if (max === min) max = min + 1;
  const x = t => L + (W - L - R) * (t - t0) / Math.max(1, t1 - t0);
  const y = v => T + (H - T - B) * (1 - (v - min) / (max - min));
  for (const f of [0, 0.5, 1]) {
    const v = min + (max - min) * f;
    chart.append(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
    chart.append(svg('text', { x: L - 4, y: y(v) + 4, 'text-anchor': 'end' }, format(v)));
  }
  const clock = t => new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  chart.append(svg('text', { x: L, y: H - 6 }, clock(t0)));
  chart.append(svg('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, clock(t1)));
  let lx = W - R;
  for (const line of [...lines].reverse()) {
    let d = '', pen = false;
    line.values.forEach((v, i) => {
      if (v == null || !isFinite(v)) { pen = false; return; }
      d += `${pen ? 'L' : 'M'}${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    chart.append(svg('path', { d, stroke: line.color, 'data-series': line.name }));
    const label = svg('text', { x: lx, y: 16, 'text-anchor': 'end', fill: line.color }, line.name);
    label.style.fill = line.color;
    chart.append(label);
    lx -= 8 + 7 * line.name.length;
  }
  return chart;
}
