// memoir ui: the Graph view (a memory's or prefix's neighbourhood in the taxonomy and its
// related keys, drawn as SVG rings around it), the Timeline (writes per day per agent) and
// the Watch view (watched files and their state). Plain modules, no build step.

import { h, put, api, failure, go, link, num, readAt } from './app.js';

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const kid of kids.flat()) if (kid) el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  return el;
}

/** The last segment of a node's path, or the namespace for its root. */
function shortName(n) {
  return n.path ? n.path.split('.').pop() : `${n.namespace}:`;
}

/**
 * Places the nodes on rings: the key in the middle, each distance on a ring of its own, the
 * nodes of a ring in the answer's order (by path), evenly spaced. Deterministic: the same
 * answer is always drawn the same way.
 */
function layout(nodes, size) {
  const rings = new Map();
  for (const n of nodes) {
    if (!rings.has(n.distance)) rings.set(n.distance, []);
    rings.get(n.distance).push(n);
  }
  const far = Math.max(1, ...rings.keys());
  const step = (size / 2 - 70) / far;
  const at = new Map();
  for (const [d, ring] of rings) {
    ring.forEach((n, i) => {
      // Each ring turned a little from the one inside it, so labels of rings do not line up.
      const angle = -Math.PI / 2 + (2 * Math.PI * i) / ring.length + d * 0.35;
      const r = d === 0 ? 0 : d * step;
      at.set(n.id, { x: size / 2 + r * Math.cos(angle), y: size / 2 + r * Math.sin(angle), ring: ring.length });
    });
  }
  return at;
}

/** The drawing: edges, then each node as a link to its own graph. */
function drawing(g, depth) {
  const size = 640;
  const at = layout(g.nodes, size);
  const edges = g.edges.map((e) => {
    const a = at.get(e.from);
    const b = at.get(e.to);
    return s('line', { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: `edge edge-${e.kind}` });
  });
  const nodes = g.nodes.map((n) => {
    const p = at.get(n.id);
    const r = n.distance === 0 ? 10 : 4 + Math.min(6, Math.log2(1 + n.count));
    // Labels only where they fit: the inner rings, or any ring of few nodes.
    const label = n.distance <= 1 || p.ring <= 24;
    const href = '#/graph?' + new URLSearchParams({ key: `${n.namespace}:${n.path}`, depth: String(depth), ...(readAt() ? { at: readAt() } : {}) }).toString();
    const kids = [
      s('title', {}, `${n.id} (${n.kind}, ${n.count} memor${n.count === 1 ? 'y' : 'ies'}, degree ${n.degree})`),
      s('circle', { cx: p.x, cy: p.y, r, class: `node node-${n.kind}${n.distance === 0 ? ' node-key' : ''}` }),
      label ? s('text', { x: p.x + r + 3, y: p.y + 4, class: 'node-label' }, shortName(n)) : null,
    ];
    // The namespace's root has no key of its own to walk from.
    return n.path ? s('a', { href, 'data-id': n.id, 'aria-label': `${n.id}, ${n.kind}, degree ${n.degree}` }, kids) : s('g', { 'data-id': n.id }, kids);
  });
  return s('svg', { id: 'graph-svg', class: 'memory-graph', viewBox: `0 0 ${size} ${size}`, width: size, height: size, role: 'group', 'aria-label': `Graph of ${g.key}` },
    s('g', { 'aria-hidden': 'true' }, edges), nodes);
}

export async function graphView(main, p) {
  const key = p.get('key') || '';
  const depth = p.get('depth') || '1';
  const input = h('input', { id: 'graph-key', value: key, placeholder: 'a key or prefix, e.g. prefs.lang', size: 32, spellcheck: 'false' });
  const depthSel = h('select', { id: 'graph-depth' }, ['1', '2', '3'].map((d) => h('option', { value: d, selected: d === depth }, d)));
  const form = h('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); go('graph', { key: input.value.trim(), depth: depthSel.value }); } },
    h('label', { for: 'graph-key' }, 'Key'), input, h('label', { for: 'graph-depth' }, 'Depth'), depthSel,
    h('button', { type: 'submit', class: 'primary' }, 'Show'));
  const parts = [h('h2', { text: 'Graph' }), form,
    h('p', { class: 'muted' }, 'Memories and taxonomy prefixes around a key: solid lines join a path to its parent, dashed ones memories written together (related keys).')];
  if (!key) return put(main, parts);
  const r = await api('/api/graph', { key, depth, at: readAt(), limit: 400 });
  if (!r.ok) return put(main, parts, failure(r));
  const g = r.data;
  parts.push(h('p', { id: 'graph-summary' },
    `${num(g.node_count)} node(s), ${num(g.edge_count)} edge(s) within ${g.depth} hop(s) of ${g.key} at commit ${g.commit.slice(0, 8)}`,
    g.truncated ? ' — cut short at the node limit.' : '.'));
  parts.push(h('div', { class: 'graph-box' }, drawing(g, depth)));
  if (g.components.length) {
    parts.push(h('h3', {}, 'Related groups'), h('ul', { id: 'graph-components' }, g.components.map((c) => h('li', {},
      c.map((id) => [link('memory', { key: id }, id), ' '])))));
  }
  parts.push(h('h3', {}, 'Nodes'), h('table', { id: 'graph-nodes' },
    h('thead', {}, h('tr', {}, ['Node', 'Kind', 'Memories', 'Distance', 'Degree', 'Memory'].map((c) => h('th', { text: c })))),
    h('tbody', {}, g.nodes.map((n) => h('tr', { 'data-id': n.id },
      h('td', {}, n.path ? link('graph', { key: n.id, depth }, n.id) : n.id),
      h('td', { text: n.kind }), h('td', { class: 'num', text: num(n.count) }),
      h('td', { class: 'num', text: n.distance }), h('td', { class: 'num', text: n.degree }),
      h('td', {}, n.kind === 'memory' ? link('memory', { key: n.id }, 'open') : null))))));
  put(main, parts);
}

export async function timelineView(main) {
  const r = await api('/api/timeline');
  if (!r.ok) return put(main, h('h2', { text: 'Timeline' }), failure(r));
  const d = r.data;
  const actors = d.actors;
  const name = (a) => a || '(none recorded)';
  const byDay = new Map();
  for (const row of d.days) {
    if (!byDay.has(row.date)) byDay.set(row.date, new Map());
    byDay.get(row.date).set(row.actor || '', row.commits);
  }
  const days = [...byDay.keys()].sort().reverse();
  const most = Math.max(1, ...days.map((day) => [...byDay.get(day).values()].reduce((a, b) => a + b, 0)));
  const W = 200;
  const bar = (day) => {
    let x = 0;
    const parts = actors.map((a, i) => {
      const n = byDay.get(day).get(a || '') || 0;
      const w = (n / most) * W;
      const rect = n ? s('rect', { x, y: 2, width: Math.max(1, w), height: 12, class: `series-${i % 6}` }) : null;
      x += w;
      return rect;
    });
    return s('svg', { width: W, height: 16, 'aria-hidden': 'true', class: 'timeline-bar' }, parts);
  };
  put(main, h('h2', { text: 'Timeline' }),
    h('p', { class: 'muted' }, `Writes (commits) per day (UTC) and agent, over ${num(d.commits)} commit(s) reachable from a branch.`),
    h('ul', { class: 'legend', id: 'timeline-legend' }, actors.map((a, i) => h('li', {}, h('span', { class: `swatch series-${i % 6}`, 'aria-hidden': 'true' }), name(a)))),
    h('table', { id: 'timeline' },
      h('thead', {}, h('tr', {}, h('th', { text: 'Day' }), h('th', { text: 'Total' }), actors.map((a) => h('th', { text: name(a) })), h('th', { text: 'Writes' }))),
      h('tbody', {}, days.map((day) => {
        const counts = byDay.get(day);
        const total = [...counts.values()].reduce((a, b) => a + b, 0);
        return h('tr', { 'data-day': day },
          h('td', {}, link('history', { since: `${day} 00:00`, until: `${day} 23:59:59`, all: '1' }, day)),
          h('td', { class: 'num', text: num(total) }),
          actors.map((a) => h('td', { class: 'num', text: counts.get(a || '') ? num(counts.get(a || '')) : '' })),
          h('td', {}, bar(day)));
      }))));
}

export async function watchView(main) {
  const r = await api('/api/watch', { at: readAt() });
  if (!r.ok) return put(main, h('h2', { text: 'Watch' }), failure(r));
  const d = r.data;
  const parts = [h('h2', { text: 'Watch' }),
    h('p', { id: 'watch-summary' }, `${num(d.count)} watched file(s): ${num(d.changed)} changed since the last scan, ${num(d.missing)} missing. `,
      h('span', { class: 'muted' }, 'Add files and scan them with memoir watch add and memoir watch scan.'))];
  if (d.files.length) {
    parts.push(h('table', { id: 'watch-files' },
      h('thead', {}, h('tr', {}, ['File', 'State', 'Chunks', 'Namespace', 'Memories'].map((c) => h('th', { text: c })))),
      h('tbody', {}, d.files.map((f) => h('tr', { 'data-state': f.state },
        h('td', { class: 'mono', text: f.path }),
        h('td', {}, h('span', { class: `state state-${f.state}` }, f.state), f.error ? [' ', h('span', { class: 'muted' }, f.error)] : null),
        h('td', { class: 'num', text: num(f.chunks) }), h('td', { text: f.namespace }),
        h('td', {}, link('tree', { ns: f.namespace, keys: `raw.${f.slug}.*` }, `raw.${f.slug}.*`)))))));
  }
  put(main, parts);
}
