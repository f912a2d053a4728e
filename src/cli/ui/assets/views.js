// memoir ui: the views besides the tree. Each takes the main element and the route's
// parameters, reads the JSON API at the page's revision, and draws with textContent only.

import { h, put, api, post, failure, go, link, commitLink, readAt, num, refreshHeader } from './app.js';

const keyParams = (p) => ({ ns: p.get('ns') || '', key: p.get('key') || '' });

function when(ts) {
  if (ts === null || ts === undefined) return '';
  return new Date(ts * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)]));
}

// ---- memory: record, entries, blame, per-line blame ----

export async function memoryView(main, p) {
  const { ns, key } = keyParams(p);
  const at = readAt();
  const [got, blame] = await Promise.all([
    api('/api/memory', { key, ns, at }),
    api('/api/blame', { key, ns, at, lines: 1 }),
  ]);
  const title = h('h2', {}, 'Memory ', h('code', { id: 'memory-key' }, `${ns || 'default'}:${key}`));
  const parts = [title];
  const item = got.data.items && got.data.items[0];
  if (!got.ok && !item) parts.push(failure(got));
  else if (!item.found) parts.push(h('p', { class: 'muted', id: 'memory-missing' }, at ? `No memory here at ${at}.` : 'No memory here.'));
  else {
    const v = item.value;
    parts.push(h('section', { class: 'card', 'aria-labelledby': 'content-h' },
      h('h3', { id: 'content-h' }, 'Content'),
      h('pre', { id: 'memory-content' }, v.content),
      kv([
        ['Confidence', String(v.confidence)],
        ['Written', when(v.timestamp)],
        ['Related', v.related_keys.length ? v.related_keys.map((k) => [link('memory', { ns: v.namespace, key: k }, k), ' ']) : '—'],
      ])));
    parts.push(h('h3', {}, 'Entries'), h('table', { id: 'memory-entries' },
      h('thead', {}, h('tr', {}, ['Content', 'Status', 'Confidence', 'Time', 'Source', 'Actor'].map((c) => h('th', { text: c })))),
      h('tbody', {}, v.entries.map((e) => h('tr', {},
        h('td', {}, h('pre', {}, e.content)), h('td', { text: e.status }), h('td', { class: 'num', text: e.confidence }),
        h('td', { text: when(e.timestamp) }), h('td', { text: e.source || '' }), h('td', { text: e.actor || '' }))))));
  }
  if (blame.ok) {
    const b = blame.data;
    parts.push(h('h3', {}, 'History of this memory'), h('table', { id: 'blame' },
      h('thead', {}, h('tr', {}, ['Commit', 'Change', 'Author', 'Date', 'Source', 'Actor', 'Message', ''].map((c) => h('th', { text: c })))),
      h('tbody', {}, b.entries.map((e) => h('tr', {},
        h('td', {}, commitLink(e.commit)), h('td', { class: 'op-' + e.operation, text: e.operation }),
        h('td', { class: 'author', text: e.author }), h('td', { text: e.date.slice(0, 19).replace('T', ' ') }),
        h('td', { text: e.source || '' }), h('td', { text: e.actor || '' }), h('td', { text: e.message.split('\n')[0] }),
        h('td', {}, h('button', { type: 'button', class: 'show-at', onclick: () => go('memory', { ns, key, at: e.commit }) }, 'Show at this commit')))))));
    if (b.lines && b.lines.length) {
      parts.push(h('h3', {}, 'Line by line'), h('table', { id: 'blame-lines', class: 'mono' },
        h('tbody', {}, b.lines.map((l) => h('tr', {},
          h('td', {}, commitLink(l.commit)), h('td', { class: 'muted', text: l.author }), h('td', {}, h('pre', {}, l.line)))))));
    }
  } else parts.push(failure(blame));
  put(main, ...parts);
}

// ---- history: log with its graph, commit pages ----

/** Lanes of a commit graph, newest first: per row, the lane of its dot and the lines drawn. */
function lanes(commits) {
  const rows = [];
  let active = [];
  for (const c of commits) {
    let lane = active.indexOf(c.hash);
    if (lane < 0) { lane = active.indexOf(null); if (lane < 0) { lane = active.length; active.push(null); } }
    const before = active.slice();
    before[lane] = c.hash;
    const after = active.map((x) => (x === c.hash ? null : x));
    const targets = [];
    c.parents.forEach((parent, i) => {
      let at = after.indexOf(parent);
      if (at < 0) {
        if (i === 0) at = lane;
        else { at = after.indexOf(null); if (at < 0) { at = after.length; after.push(null); } }
        after[at] = parent;
      }
      targets.push(at);
    });
    while (after.length && after[after.length - 1] === null) after.pop();
    rows.push({ lane, before, after, targets });
    active = after;
  }
  return rows;
}

function graphCell(row, width) {
  const W = 14, H = 28, x = (i) => 7 + i * W;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', String(Math.max(1, width) * W));
  svg.setAttribute('height', String(H));
  svg.setAttribute('class', 'graph');
  svg.setAttribute('aria-hidden', 'true');
  const line = (x1, y1, x2, y2) => {
    const l = document.createElementNS(ns, 'line');
    Object.entries({ x1, y1, x2, y2, stroke: 'currentColor', 'stroke-width': 1.5 }).forEach(([k, v]) => l.setAttribute(k, v));
    svg.append(l);
  };
  row.before.forEach((id, i) => { if (id !== null && i !== row.lane) line(x(i), 0, x(i), H / 2); });
  if (row.before[row.lane] !== null && row.incoming) line(x(row.lane), 0, x(row.lane), H / 2);
  row.after.forEach((id, i) => {
    if (id === null) return;
    if (row.targets.includes(i)) line(x(row.lane), H / 2, x(i), H);
    else line(x(i), H / 2, x(i), H);
  });
  row.before.forEach((id, i) => { if (id !== null && i !== row.lane && row.after[i] === id) line(x(i), H / 2, x(i), H / 2); });
  const dot = document.createElementNS(ns, 'circle');
  dot.setAttribute('cx', String(x(row.lane))); dot.setAttribute('cy', String(H / 2)); dot.setAttribute('r', '4');
  dot.setAttribute('fill', 'currentColor');
  svg.append(dot);
  return svg;
}

export async function historyView(main, p) {
  const keys = p.get('keys') || '';
  const res = await api('/api/log', { rev: readAt() || 'HEAD', keys, limit: 200 });
  const glob = h('input', { id: 'history-glob', value: keys, placeholder: 'key glob', spellcheck: 'false' });
  const form = h('form', { class: 'toolbar', role: 'search', onsubmit: (e) => { e.preventDefault(); go('history', { keys: glob.value.trim() }); } },
    h('label', { for: 'history-glob' }, 'Only commits changing'), glob, h('button', { type: 'submit' }, 'Filter'));
  if (!res.ok) return put(main, h('h2', { text: 'History' }), form, failure(res));
  const commits = res.data.commits;
  const rows = keys ? null : lanes(commits);
  const seen = new Set();
  if (rows) rows.forEach((r, i) => { r.incoming = seen.has(commits[i].hash); commits[i].parents.forEach((x) => seen.add(x)); });
  const width = rows ? Math.max(1, ...rows.map((r) => Math.max(r.before.length, r.after.length))) : 0;
  const table = h('table', { class: 'log', id: 'log' },
    h('thead', {}, h('tr', {}, rows ? h('th', { class: 'g' }, h('span', { class: 'skip' }, 'Graph')) : null,
      ['Commit', 'Message', 'Author', 'Date'].map((c) => h('th', { text: c })))),
    h('tbody', {}, commits.map((c, i) => h('tr', { 'data-hash': c.hash },
      rows ? h('td', { class: 'g' }, graphCell(rows[i], width)) : null,
      h('td', {}, commitLink(c.hash)),
      h('td', {}, c.message.split('\n')[0], c.parents.length > 1 ? h('span', { class: 'badge' }, 'merge') : null),
      h('td', { text: c.author }), h('td', { text: c.date.slice(0, 19).replace('T', ' ') })))));
  put(main, h('h2', { text: 'History' }), form, table,
    commits.length === 200 ? h('p', { class: 'muted' }, 'The 200 newest commits; set the revision to see older ones.') : null);
}

/** A content patch drawn unified or side by side. */
function patchView(text, sideBySide) {
  const lines = text.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
  if (!sideBySide) {
    return h('div', { class: 'patch mono' }, lines.map((l) => h('span', {
      class: 'l ' + (l.startsWith('@@') ? 'hunk' : l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : ''),
    }, l || ' ')));
  }
  const left = [], right = [];
  for (const l of lines) {
    if (l.startsWith('---') || l.startsWith('+++')) continue;
    if (l.startsWith('@@')) { left.push(['hunk', l]); right.push(['hunk', '']); }
    else if (l.startsWith('-')) left.push(['del', l.slice(1)]);
    else if (l.startsWith('+')) right.push(['add', l.slice(1)]);
    else { while (left.length < right.length) left.push(['', '']); while (right.length < left.length) right.push(['', '']); left.push(['', l.slice(1)]); right.push(['', l.slice(1)]); }
  }
  while (left.length < right.length) left.push(['', '']);
  while (right.length < left.length) right.push(['', '']);
  const col = (xs) => h('div', {}, xs.map(([c, t]) => h('span', { class: 'l ' + c }, t || ' ')));
  return h('div', { class: 'patch sbs mono' }, col(left), col(right));
}

/** A diff outcome: summary and, per key, its change and patch. */
function diffView(d, sideBySide) {
  const s = d.stats || {};
  const summary = h('p', { id: 'diff-stat' },
    `${d.count} key(s) changed: `, h('span', { class: 'op-added' }, `${s.added ?? 0} added`), ', ',
    h('span', { class: 'op-modified' }, `${s.modified ?? 0} modified`), ', ',
    h('span', { class: 'op-removed' }, `${s.removed ?? 0} removed`),
    s.lines_added !== undefined ? `; ${s.lines_added} line(s) added, ${s.lines_removed} removed` : '');
  const list = d.changes.map((c) => h('section', { class: 'card change', 'data-key': `${c.namespace}:${c.key}` },
    h('h3', {}, h('span', { class: 'op-' + c.operation }, c.operation), ' ',
      link('memory', { ns: c.namespace, key: c.key, at: d.to }, `${c.namespace}:${c.key}`),
      c.lines_added !== undefined ? h('span', { class: 'muted' }, ` +${c.lines_added} −${c.lines_removed}`) : null),
    c.patch ? patchView(c.patch, sideBySide) : null));
  return h('div', { id: 'diff' }, summary, list);
}

function sbsToggle(p, view, extra) {
  const on = p.get('sbs') === '1';
  return h('button', { type: 'button', id: 'sbs-toggle', 'aria-pressed': String(on), onclick: () => go(view, { ...extra, sbs: on ? '' : '1' }) },
    on ? 'Unified' : 'Side by side');
}

export async function commitView(main, p) {
  const id = p.get('id') || '';
  const res = await api('/api/log', { rev: id, limit: 1 });
  if (!res.ok) return put(main, h('h2', { text: 'Commit' }), failure(res));
  const c = res.data.commits[0];
  const meta = kv([
    ['Commit', h('code', { id: 'commit-hash' }, c.hash)],
    ['Author', c.author], ['Date', c.date],
    ['Parents', c.parents.length ? c.parents.map((x) => [commitLink(x), ' ']) : 'none (first commit)'],
    ...Object.entries(c.metadata || {}).map(([k, v]) => [k, v]),
  ]);
  const parts = [h('h2', {}, 'Commit ', h('code', {}, c.short_hash)), h('p', { id: 'commit-message' }, c.message), meta,
    h('div', { class: 'toolbar' }, sbsToggle(p, 'commit', { id }),
      h('button', { type: 'button', onclick: () => go('tree', { at: c.hash }) }, 'Browse at this commit'))];
  if (c.parents.length) {
    const d = await api('/api/diff', { from: c.parents[0], to: c.hash, stat: 1, patch: 1 });
    parts.push(d.ok ? diffView(d.data, p.get('sbs') === '1') : failure(d));
  }
  put(main, ...parts);
}

export async function compareView(main, p) {
  const from = p.get('from') || 'HEAD~1';
  const to = p.get('to') || readAt() || 'HEAD';
  const a = h('input', { id: 'cmp-from', value: from, spellcheck: 'false' });
  const b = h('input', { id: 'cmp-to', value: to, spellcheck: 'false' });
  const form = h('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); go('compare', { from: a.value.trim(), to: b.value.trim(), sbs: p.get('sbs') }); } },
    h('label', { for: 'cmp-from' }, 'From'), a, h('label', { for: 'cmp-to' }, 'To'), b, h('button', { type: 'submit', class: 'primary' }, 'Compare'),
    sbsToggle(p, 'compare', { from, to }));
  const d = await api('/api/diff', { from, to, stat: 1, patch: 1 });
  put(main, h('h2', { text: 'Compare' }), form, d.ok ? diffView(d.data, p.get('sbs') === '1') : failure(d));
}

// ---- branches and merging ----

export async function branchesView(main, p) {
  const res = await api('/api/branches');
  if (!res.ok) return put(main, h('h2', { text: 'Branches' }), failure(res));
  const out = h('div', { id: 'branch-result', role: 'status' });
  const done = (r) => { out.replaceChildren(r.ok ? h('p', { class: 'ok' }, r.data.message || 'done') : failure(r)); refreshHeader(); };
  const { branches, current } = res.data;
  const list = h('table', { id: 'branches' }, h('tbody', {}, branches.map((b) => h('tr', {},
    h('td', {}, b === current ? h('strong', {}, b, ' (current)') : b),
    h('td', {}, link('history', { rev: b }, 'history')),
    h('td', {}, b === current ? null : h('button', { type: 'button', onclick: async () => { done(await post('/api/checkout', { target: b })); branchesView(main, p); } }, 'Check out')),
    h('td', {}, b === current ? null : h('button', { type: 'button', class: 'danger', onclick: async () => {
      if (!window.confirm(`Delete branch ${b}?`)) return;
      done(await post('/api/branch/delete', { name: b, force: true })); branchesView(main, p);
    } }, 'Delete'))))));
  const name = h('input', { id: 'new-branch', required: true, spellcheck: 'false' });
  const from = h('input', { id: 'new-branch-from', placeholder: 'HEAD', spellcheck: 'false' });
  const create = h('form', { class: 'toolbar', onsubmit: async (e) => { e.preventDefault(); done(await post('/api/branch', { name: name.value.trim(), from: from.value.trim() })); branchesView(main, p); } },
    h('label', { for: 'new-branch' }, 'New branch'), name, h('label', { for: 'new-branch-from' }, 'from'), from, h('button', { type: 'submit' }, 'Create'));
  const rem = await api('/api/remotes');
  const tracking = rem.ok ? rem.data.remotes.flatMap((r) => r.branches.map((b) => ({ name: `${r.name}/${b.branch}`, commit: b.commit, url: r.url }))) : [];
  const remoteList = tracking.length ? h('table', { id: 'remote-branches' }, h('tbody', {}, tracking.map((t) => h('tr', {},
    h('td', {}, h('code', {}, t.name)),
    h('td', {}, h('code', { title: t.commit }, t.commit.slice(0, 12))),
    h('td', {}, link('history', { rev: t.name }, 'history')),
    h('td', { class: 'muted' }, t.url))))) : h('p', { class: 'muted' }, 'No remote-tracking branches (memoir remote add, fetch).');
  const opts = (sel, extra = []) => [...branches, ...extra].map((b) => h('option', { value: b, selected: b === sel }, b));
  const source = h('select', { id: 'merge-source' }, opts(p.get('source') || branches.find((b) => b !== current), tracking.map((t) => t.name)));
  const into = h('select', { id: 'merge-into' }, opts(p.get('into') || current));
  const strategy = h('select', { id: 'merge-strategy' }, ['', 'ours', 'theirs', 'union'].map((s) => h('option', { value: s }, s || 'none (stop on conflicts)')));
  const preview = h('div', { id: 'merge-preview' });
  const mergeForm = h('form', { class: 'toolbar', onsubmit: async (e) => {
    e.preventDefault();
    const r = await api('/api/merge-preview', { source: source.value, into: into.value });
    preview.replaceChildren(r.ok ? previewView(r.data) : failure(r));
  } },
  h('label', { for: 'merge-source' }, 'Merge'), source, h('label', { for: 'merge-into' }, 'into'), into,
  h('button', { type: 'submit' }, 'Preview'),
  h('label', { for: 'merge-strategy' }, 'Strategy'), strategy,
  h('button', { type: 'button', class: 'primary', id: 'merge-run', onclick: async () => {
    done(await post('/api/merge', { source: source.value, into: into.value, strategy: strategy.value }));
  } }, 'Merge'));
  put(main, h('h2', { text: 'Branches' }), list, out, h('h3', { text: 'Remote-tracking' }), remoteList, h('h3', { text: 'Create' }), create, h('h3', { text: 'Merge' }), mergeForm, preview);
}

function previewView(m) {
  const record = (r) => (r ? h('pre', {}, r.content) : h('em', { class: 'muted' }, 'absent'));
  return h('div', {},
    h('p', { id: 'merge-kind' }, `Merging ${m.source_branch} into ${m.target_branch}: ${m.kind.replace(/_/g, ' ')}`,
      `; ${m.changes.length} key(s) would change, ${m.conflicts.length} conflict(s).`),
    m.conflicts.length ? h('table', { id: 'merge-conflicts' },
      h('thead', {}, h('tr', {}, ['Key', 'Base', 'Ours', 'Theirs'].map((c) => h('th', { text: c })))),
      h('tbody', {}, m.conflicts.map((c) => h('tr', { 'data-key': c.full_key },
        h('td', {}, h('code', {}, c.full_key)), h('td', {}, record(c.base)), h('td', {}, record(c.ours)), h('td', {}, record(c.theirs)))))) : null,
    m.changes.length ? h('ul', { id: 'merge-changes' }, m.changes.map((c) => h('li', {},
      h('span', { class: 'op-' + c.operation }, c.operation), ' ', h('code', {}, `${c.namespace}:${c.key}`)))) : null);
}

// ---- search and recall ----

function highlight(text, terms) {
  if (!terms.length) return [text];
  const re = new RegExp('(' + terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|') + ')', 'gi');
  return text.split(re).map((part, i) => (i % 2 ? h('mark', {}, part) : part));
}

export async function searchView(main, p) {
  const q = p.get('q') || '';
  const mode = p.get('mode') || 'search';
  const input = h('input', { id: 'search-q', type: 'search', value: q, placeholder: 'words to look for', size: 40 });
  const modeSel = h('select', { id: 'search-mode' }, [['search', 'Search (lexical, ranked)'], ['lexical', 'Recall: lexical'], ['single', 'Recall: single model call'], ['tiered', 'Recall: tiered model calls']]
    .map(([v, t]) => h('option', { value: v, selected: v === mode }, t)));
  const form = h('form', { class: 'toolbar', role: 'search', onsubmit: (e) => { e.preventDefault(); go('search', { q: input.value.trim(), mode: modeSel.value }); } },
    h('label', { for: 'search-q' }, 'Query'), input, h('label', { for: 'search-mode' }, 'Mode'), modeSel, h('button', { type: 'submit', class: 'primary' }, 'Go'));
  const parts = [h('h2', { text: 'Search and recall' }), form];
  if (q) {
    const terms = q.split(/\s+/).filter((t) => t.length > 1);
    if (mode === 'search') {
      const r = await api('/api/search', { q, at: readAt(), limit: 50 });
      if (!r.ok) parts.push(failure(r));
      else {
        parts.push(h('p', { class: 'muted' }, `${r.data.count} hit(s) in ${r.data.timing_ms} ms`));
        parts.push(h('ol', { id: 'search-results' }, r.data.hits.map((x) => h('li', { class: 'hit' },
          link('memory', { ns: x.namespace, key: x.key }, highlight(`${x.namespace}:${x.key}`, terms)),
          h('span', { class: 'badge' }, x.score.toFixed(2)), h('pre', {}, highlight(x.content, terms))))));
      }
    } else {
      const r = await post('/api/recall', { query: q, mode, at: readAt(), limit: 20 });
      if (!r.ok) parts.push(failure(r));
      else parts.push(recallView(r.data, terms));
    }
  }
  put(main, ...parts);
}

function recallView(d, terms) {
  const m = d.metadata || {};
  const timings = Object.entries(m.step_timings || {});
  return h('div', {},
    h('p', { class: 'muted', id: 'recall-mode' }, `mode: ${m.mode}`, m.fellback_from ? ` (fell back from ${m.fellback_from}: ${m.fallback_reason || ''})` : '',
      `; ${d.count} memories in ${d.timing_ms} ms`),
    (d.notes || []).map((n) => h('p', { class: 'muted' }, n)),
    h('ol', { id: 'search-results' }, d.memories.map((x) => h('li', { class: 'hit' },
      link('memory', { ns: x.namespace, key: x.path }, `${x.namespace}:${x.path}`), h('span', { class: 'badge' }, Number(x.relevance_score).toFixed(2)),
      h('pre', {}, highlight(x.content, terms))))),
    timings.length ? h('details', { id: 'recall-timings' }, h('summary', {}, 'Step timings'),
      h('table', {}, h('tbody', {}, timings.map(([k, v]) => h('tr', {}, h('td', { text: k }), h('td', { class: 'num', text: `${v} ms` })))))) : null,
    (m.llm_prompts || []).length ? h('details', { id: 'recall-prompts' }, h('summary', {}, `Prompts (${m.llm_prompts.length})`),
      m.llm_prompts.map((x) => h('div', { class: 'card' }, h('h3', { text: x.step }), h('pre', {}, x.prompt), h('h3', { text: 'Reply' }), h('pre', {}, x.reply)))) : null);
}

// ---- statistics ----

function chart(points) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  const W = 800, H = 220, pad = 40;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  const max = Math.max(1, ...points.map((x) => x.memories));
  const t0 = points.length ? points[0].commits : 0, t1 = points.length ? points[points.length - 1].commits : 1;
  const px = (x) => pad + ((x.commits - t0) / Math.max(1, t1 - t0)) * (W - 2 * pad);
  const py = (x) => H - pad + 10 - (x.memories / max) * (H - 2 * pad);
  svg.setAttribute('aria-label', `Memories over ${t1} commits, up to ${max}`);
  const add = (tag, attrs, text) => { const el = document.createElementNS(ns, tag); Object.entries(attrs).forEach(([k, v]) => el.setAttribute(k, v)); if (text) el.textContent = text; svg.append(el); };
  add('line', { x1: pad, y1: H - pad + 10, x2: W - pad, y2: H - pad + 10, class: 'axis' });
  add('line', { x1: pad, y1: 10, x2: pad, y2: H - pad + 10, class: 'axis' });
  add('polyline', { class: 'line', points: points.map((x) => `${px(x)},${py(x)}`).join(' ') });
  add('text', { x: 4, y: 20 }, num(max));
  add('text', { x: 4, y: H - pad + 10 }, '0');
  if (points.length) {
    add('text', { x: pad, y: H - 8 }, points[0].date.slice(0, 10));
    add('text', { x: W - pad - 70, y: H - 8 }, points[points.length - 1].date.slice(0, 10));
  }
  return svg;
}

function lastGc(g) {
  if (!g) return 'never';
  return `${when(g.time)}: ${num(g.objects_removed)} objects removed (${(g.bytes_removed / 1048576).toFixed(2)} MiB)`;
}

function lastFsck(f) {
  if (!f) return 'never';
  const found = f.clean ? 'clean' : `${num(f.findings)} problem(s) found`;
  return `${when(f.time)}: ${found}, ${num(f.objects_checked)} objects checked${f.repaired ? ', after a repair' : ''}`;
}

export async function statsView(main) {
  const r = await api('/api/stats', { at: readAt() });
  if (!r.ok) return put(main, h('h2', { text: 'Statistics' }), failure(r));
  const s = r.data;
  const prefixes = Object.entries(s.prefixes).flatMap(([n, m]) => Object.entries(m).map(([k, c]) => [n, k, c]))
    .sort((a, b) => b[2] - a[2]);
  const top = Math.max(1, ...prefixes.map((x) => x[2]));
  put(main, h('h2', { text: 'Statistics' }),
    h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h3', { text: 'Store' }), kv([
        ['Memories', h('span', { id: 'stat-memories' }, num(s.memory_count))], ['Commits', num(s.commit_count)],
        ['Namespaces', num(Object.keys(s.namespaces).length)], ['Size on disk', `${(s.store_bytes / 1048576).toFixed(2)} MiB`],
        ['Commit', commitLink(s.commit)],
        ['Last gc', h('span', { id: 'stat-gc' }, lastGc(s.last_gc))],
        ['Last fsck', h('span', { id: 'stat-fsck' }, lastFsck(s.last_fsck))]])),
      h('section', { class: 'card' }, h('h3', { text: 'Namespaces' }), h('table', {}, h('tbody', {},
        Object.entries(s.namespaces).map(([n, c]) => h('tr', {}, h('td', {}, link('tree', { ns: n }, n)), h('td', { class: 'num', text: num(c) }))))))),
    h('h3', { text: 'Growth' }), chart(s.growth),
    h('h3', { text: 'Top-level prefixes' }),
    h('table', { class: 'bars', id: 'stat-prefixes' }, h('tbody', {}, prefixes.map(([n, k, c]) => h('tr', {},
      h('td', {}, link('tree', { ns: n, keys: `${k}*` }, `${n}:${k}`)), h('td', { class: 'num', text: num(c) }),
      h('td', { style: null }, h('div', { class: 'bar', 'data-share': String(c / top) })))))));
  for (const bar of main.querySelectorAll('.bar')) bar.style.width = `${Math.round(Number(bar.dataset.share) * 100)}%`;
}

// ---- actions: remember, forget, fsck, proofs ----

async function completions(list, ns, text) {
  const cut = text.lastIndexOf('.');
  const prefix = cut < 0 ? '' : text.slice(0, cut);
  const r = await api('/api/tree', { ns, prefix, limit: 200 });
  if (!r.ok) return;
  const start = cut < 0 ? text : text.slice(cut + 1);
  list.replaceChildren(...r.data.children.filter((c) => c.name.startsWith(start)).map((c) => h('option', { value: c.path })));
}

export async function actionsView(main, p) {
  const out = h('div', { id: 'action-result', role: 'status', 'aria-live': 'polite' });
  const show = (r, what) => out.replaceChildren(r.ok ? h('div', { class: 'ok' }, what(r.data)) : failure(r));
  const ns = h('input', { id: 'rem-ns', placeholder: 'default', size: 12, spellcheck: 'false' });
  const path = h('input', { id: 'rem-path', required: true, list: 'rem-paths', placeholder: 'preferences.coding.testing', size: 36, spellcheck: 'false', autocomplete: 'off' });
  const paths = h('datalist', { id: 'rem-paths' });
  let pending = 0;
  path.addEventListener('input', () => { const turn = ++pending; setTimeout(() => { if (turn === pending) completions(paths, ns.value.trim(), path.value.trim()); }, 120); });
  const content = h('textarea', { id: 'rem-content', required: true });
  const policy = h('select', { id: 'rem-policy' }, ['', 'append', 'replace', 'confidence_gated', 'llm_merge', 'merge_on_read', 'reject']
    .map((x) => h('option', { value: x }, x || 'default for the key')));
  const remember = h('form', { id: 'remember-form', class: 'card', onsubmit: async (e) => {
    e.preventDefault();
    const r = await post('/api/remember', { content: content.value, paths: path.value.split(',').map((x) => x.trim()).filter(Boolean), namespace: ns.value.trim(), merge_policy: policy.value });
    show(r, (d) => [`Stored ${d.full_keys.join(', ')} in `, d.commit_hash ? commitLink(d.commit_hash) : 'no commit (nothing changed)']);
    refreshHeader();
  } },
  h('h3', { text: 'Remember' }),
  h('p', {}, h('label', { for: 'rem-path' }, 'Key path(s), comma separated'), h('br'), path, paths, ' ', h('label', { for: 'rem-ns' }, 'Namespace'), ' ', ns),
  h('p', {}, h('label', { for: 'rem-content' }, 'Content'), content),
  h('p', {}, h('label', { for: 'rem-policy' }, 'Merge policy'), ' ', policy, ' ', h('button', { type: 'submit', class: 'primary', id: 'rem-submit' }, 'Remember')));
  if (p.get('key')) path.value = p.get('key');

  const fkey = h('input', { id: 'forget-key', required: true, size: 36, spellcheck: 'false', value: p.get('forget') || '' });
  const fns = h('input', { id: 'forget-ns', placeholder: 'default', size: 12, spellcheck: 'false' });
  const dialog = h('dialog', { id: 'forget-dialog', 'aria-labelledby': 'forget-dialog-h' });
  const ask = (purge) => {
    const key = fkey.value.trim();
    if (!key) return;
    dialog.replaceChildren(h('form', { method: 'dialog' },
      h('h3', { id: 'forget-dialog-h' }, purge ? `Purge ${key}?` : `Forget ${key}?`),
      h('p', {}, purge ? 'Purging rewrites history: the memory is removed from every commit and its bytes are erased. This cannot be undone.'
        : 'The memory is removed in a new commit; its history stays readable.'),
      h('div', { class: 'toolbar' },
        h('button', { value: 'cancel', id: 'forget-cancel' }, 'Cancel'),
        h('button', { value: 'yes', class: 'danger', id: 'forget-confirm' }, purge ? 'Purge' : 'Forget'))));
    dialog.onclose = async () => {
      if (dialog.returnValue !== 'yes') return;
      const r = await post('/api/forget', { key, namespace: fns.value.trim(), purge });
      show(r, (d) => [d.message, ' ', d.commit_hash ? commitLink(d.commit_hash) : '']);
      refreshHeader();
    };
    dialog.showModal();
  };
  const forget = h('form', { id: 'forget-form', class: 'card', onsubmit: (e) => { e.preventDefault(); ask(false); } },
    h('h3', { text: 'Forget' }),
    h('p', {}, h('label', { for: 'forget-key' }, 'Key'), ' ', fkey, ' ', h('label', { for: 'forget-ns' }, 'Namespace'), ' ', fns),
    h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'danger', id: 'forget-submit' }, 'Forget…'),
      h('button', { type: 'button', class: 'danger', id: 'purge-submit', onclick: () => ask(true) }, 'Purge from history…')));

  const pkey = h('input', { id: 'proof-key', size: 36, spellcheck: 'false' });
  const proofText = h('textarea', { id: 'proof-text', class: 'mono' });
  const proof = h('form', { class: 'card', id: 'proof-form', onsubmit: async (e) => {
    e.preventDefault();
    const r = await api('/api/proof', { key: pkey.value.trim(), at: readAt() });
    if (r.ok) proofText.value = r.data.proof;
    show(r, (d) => `Proof of ${d.full_key} (${d.found ? 'present' : 'absent'}) at ${d.commit.slice(0, 8)}: ${d.proof_bytes} bytes, root ${d.root.slice(0, 12)}`);
  } },
  h('h3', { text: 'Proofs' }),
  h('p', {}, h('label', { for: 'proof-key' }, 'Key'), ' ', pkey, ' ', h('button', { type: 'submit' }, 'Make proof'), ' ',
    h('button', { type: 'button', id: 'verify-submit', onclick: async () => {
      const r = await post('/api/verify', { key: pkey.value.trim(), proof: proofText.value, at: readAt() });
      show(r, (d) => (d.valid ? `Valid: ${d.full_key} is ${d.found ? 'present' : 'absent'} under root ${d.root.slice(0, 12)}` : 'Not valid'));
    } }, 'Verify')),
  h('p', {}, h('label', { for: 'proof-text' }, 'Proof (hex)'), proofText));

  const fsck = h('section', { class: 'card' }, h('h3', { text: 'Check the store' }),
    h('button', { type: 'button', id: 'fsck-run', onclick: async (e) => {
      e.target.disabled = true;
      const r = await post('/api/fsck', {});
      e.target.disabled = false;
      show(r, (d) => `${d.clean ? 'Clean' : 'Problems found'}: ${num(d.objects_checked)} objects, ${num(d.commits_checked)} commits checked; ${d.findings.length} finding(s), ${num(d.unreachable_objects)} unreachable object(s).`);
    } }, 'Run fsck'));
  put(main, h('h2', { text: 'Actions' }), out, h('div', { class: 'grid2' }, remember, forget, proof, fsck), dialog);
}
