// Unit tests of the dashboard's pure functions (no browser): the trace tree, the critical path, a span's steps, the
// map's call depths. Run with `node --test` by UiScriptsTest; the page itself is tested in Chromium by weft-cli.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tree, criticalPath, segments } from '../../main/resources/dev/weft/control/ui/traces.js';
import { depths } from '../../main/resources/dev/weft/control/ui/map.js';

const span = (id, parentId, kind, timestamp, duration, extra = {}) =>
  ({ traceId: 't', id, parentId, kind, timestamp, duration, localEndpoint: { serviceName: 'x' }, ...extra });

test('a SERVER span sharing its CLIENT span id hangs under it, and a missing parent makes a root', () => {
  const t = [span('a', null, 'CLIENT', 0, 100), span('a', null, 'SERVER', 10, 80), span('b', 'zz', 'CLIENT', 5, 1)];
  const { roots } = tree(t);
  assert.deepEqual(roots.map(r => r.key), ['a/CLIENT', 'b/CLIENT']);
  assert.deepEqual(roots[0].children.map(c => c.key), ['a/SERVER']);
});

test('the critical path follows the child that finished last, then the one that ended before it started', () => {
  // root 0..100; children: c1 0..30, c2 10..60 (overlaps c1), c3 65..95. Path: root, c3, c2 (ends 60 < 65), not c1
  // (it ends at 30, after c2 started at 10).
  const t = [span('r', null, 'SERVER', 0, 100), span('c1', 'r', 'CLIENT', 0, 30), span('c2', 'r', 'CLIENT', 10, 50),
    span('c3', 'r', 'CLIENT', 65, 30)];
  const on = criticalPath(tree(t).roots);
  assert.deepEqual([...on].sort(), ['c2/CLIENT', 'c3/CLIENT', 'r/SERVER']);
});

test("a Weft span's bar is its queue, connect, upstream and answer steps; a SERVER's wait is the app's", () => {
  const ann = (v, ts) => ({ value: v, timestamp: ts });
  const client = span('a', null, 'CLIENT', 100, 100, { annotations: [ann('admitted', 110), ann('connected', 115),
    ann('sent', 120), ann('first-byte', 190)] });
  assert.deepEqual(segments(client), [['queue', 100, 110], ['connect', 110, 120], ['upstream', 120, 190],
    ['answer', 190, 200]]);
  const server = { ...client, kind: 'SERVER' };
  assert.equal(segments(server)[2][0], 'app');
  assert.deepEqual(segments(span('z', null, 'CLIENT', 0, 5)), [['plain', 0, 5]]);
  // Refused before admission: all of it was the wait.
  assert.deepEqual(segments(span('q', null, 'CLIENT', 0, 5, { tags: { 'weft.direction': 'outbound' } })), [['queue', 0, 5]]);
});

test('call depth puts callers left of callees and survives a cycle', () => {
  const d = depths(['a', 'b', 'c', 'd'], [{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'b' },
    { from: 'a', to: 'c' }]);
  assert.equal(d.get('a'), 0);
  assert.ok(d.get('b') >= 1 && d.get('c') >= 1);
  assert.ok(d.get('b') < 4 && d.get('c') < 4);
  assert.equal(d.get('d'), 0);
});
