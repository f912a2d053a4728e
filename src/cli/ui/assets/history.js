// memoir ui: the history views. The log with its branch graph, branch labels and filters
// (key glob, agent, dates, every branch); a commit's page and Compare, both showing their
// changes a page at a time with each patch fetched when it is opened, so a commit of
// 100,000 changes paints as quickly as one of ten.

import { h, put, api, failure, go, link, commitLink, readAt, num, branchNames, writeBranch } from './app.js';

const PAGE = 100;

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
  const dot = document.createElementNS(ns, 'circle');
  dot.setAttribute('cx', String(x(row.lane))); dot.setAttribute('cy', String(H / 2)); dot.setAttribute('r', '4');
  dot.setAttribute('fill', 'currentColor');
  svg.append(dot);
  return svg;
}

/** The agent of a commit or blame entry, or a dash. */
export function agent(m) {
  const a = (m && (m.actor ?? (m.metadata && m.metadata.actor))) || '';
  return a ? link('history', { actor: a, all: '1' }, a, { class: 'agent' }) : h('span', { class: 'muted' }, '—');
}

export function source(m) {
  return (m && (m.source ?? (m.metadata && m.metadata.source))) || '';
}

export async function historyView(main, p) {
  const f = { keys: p.get('keys') || '', actor: p.get('actor') || '', since: p.get('since') || '', until: p.get('until') || '', all: p.get('all') || '' };
  const at = readAt();
  const res = await api('/api/history', { rev: f.all ? '' : at || 'HEAD', all: f.all, keys: f.keys, actor: f.actor, since: f.since, until: f.until, limit: 200 });
  const input = (id, value, placeholder, size) => h('input', { id, value, placeholder, size, spellcheck: 'false' });
  const glob = input('history-glob', f.keys, 'key glob', 14);
  const who = input('history-actor', f.actor, 'any agent', 12);
  const since = input('history-since', f.since, 'e.g. 2026-01-01', 11);
  const until = input('history-until', f.until, 'e.g. yesterday', 11);
  const all = h('input', { type: 'checkbox', id: 'history-all', checked: Boolean(f.all) });
  const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter the history', onsubmit: (e) => {
    e.preventDefault();
    go('history', { keys: glob.value.trim(), actor: who.value.trim(), since: since.value.trim(), until: until.value.trim(), all: all.checked ? '1' : '' });
  } },
  h('label', { for: 'history-glob' }, 'Keys'), glob, h('label', { for: 'history-actor' }, 'Agent'), who,
  h('label', { for: 'history-since' }, 'Since'), since, h('label', { for: 'history-until' }, 'Until'), until,
  h('label', { class: 'check' }, all, ' Every branch'), h('button', { type: 'submit' }, 'Filter'));
  if (!res.ok) return put(main, h('h2', { text: 'History' }), form, failure(res));
  const commits = res.data.commits;
  const labels = new Map();
  for (const b of res.data.branches) labels.set(b.commit, [...(labels.get(b.commit) || []), b.name]);
  const filtered = f.keys || f.actor || f.since || f.until;
  const rows = filtered ? null : lanes(commits);
  const seen = new Set();
  if (rows) rows.forEach((r, i) => { r.incoming = seen.has(commits[i].hash); commits[i].parents.forEach((x) => seen.add(x)); });
  const width = rows ? Math.max(1, ...rows.map((r) => Math.max(r.before.length, r.after.length))) : 0;
  const table = h('table', { class: 'log', id: 'log' },
    h('thead', {}, h('tr', {}, rows ? h('th', { class: 'g' }, h('span', { class: 'sr-only' }, 'Graph')) : null,
      ['Commit', 'Message', 'Agent', 'Source', 'Author', 'Date'].map((c) => h('th', { text: c })))),
    h('tbody', {}, commits.map((c, i) => h('tr', { 'data-hash': c.hash },
      rows ? h('td', { class: 'g' }, graphCell(rows[i], width)) : null,
      h('td', {}, commitLink(c.hash)),
      h('td', {}, (labels.get(c.hash) || []).map((b) => h('span', { class: 'branch-label' }, b)), c.message.split('\n')[0],
        c.parents.length > 1 ? h('span', { class: 'badge' }, 'merge') : null),
      h('td', {}, agent(c)), h('td', { class: 'source', text: source(c) }),
      h('td', { text: c.author }), h('td', { text: c.date.slice(0, 19).replace('T', ' ') })))));
  put(main, h('h2', { text: 'History' }), form,
    h('p', { class: 'muted', id: 'history-count' }, `${num(commits.length)} commit(s)${f.all ? ' on every branch' : ''}${filtered ? ' matching' : ''}.`),
    commits.length ? table : null,
    commits.length === 200 ? h('p', { class: 'muted' }, 'The 200 newest; set the revision or a date to see older ones.') : null);
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

/**
 * The changes between two sides, a page at a time: the counts (fetched beside the first
 * page), the changed keys, each with its patch fetched when opened, and a button for more.
 */
function pagedDiff(sides, sideBySide) {
  const stat = h('p', { id: 'diff-stat', class: 'muted' }, 'Counting the changes…');
  const list = h('div', { id: 'diff-list' });
  const more = h('div', {});
  const box = h('div', { id: 'diff' }, stat, list, more);
  const counts = api('/api/change-counts', sides).then((r) => {
    if (!r.ok) { stat.replaceChildren(failure(r)); return; }
    const d = r.data;
    stat.className = '';
    stat.replaceChildren(`${num(d.count)} key(s) changed: `, h('span', { class: 'op-added' }, `${num(d.added)} added`), ', ',
      h('span', { class: 'op-modified' }, `${num(d.modified)} modified`), ', ', h('span', { class: 'op-removed' }, `${num(d.removed)} removed`));
  });
  const page = async (after) => {
    const r = await api('/api/changes', { ...sides, after, limit: PAGE });
    if (!r.ok) { more.replaceChildren(failure(r)); return; }
    for (const c of r.data.changes) list.append(changeCard(sides, c, r.data.to, sideBySide));
    if (!r.data.changes.length && !after) list.append(h('p', { class: 'muted' }, 'No changes.'));
    put(more, r.data.next ? h('button', { type: 'button', id: 'diff-more', onclick: () => page(r.data.next) },
      `Show the next ${PAGE} changes`) : null);
  };
  return { box, ready: Promise.all([page(''), counts]) };
}

function changeCard(sides, c, to, sideBySide) {
  const full = `${c.namespace}:${c.key}`;
  const body = h('div', { class: 'change-body' });
  const card = h('details', { class: 'card change', 'data-key': full },
    h('summary', {}, h('span', { class: 'op-' + c.operation }, c.operation), ' ', h('code', {}, full)),
    body);
  card.addEventListener('toggle', async () => {
    if (!card.open || body.dataset.loaded) return;
    body.dataset.loaded = '1';
    body.replaceChildren(h('p', { class: 'muted' }, 'Loading the patch…'));
    const r = await api('/api/change', { ...sides, key: c.key, ns: c.namespace });
    if (!r.ok) { body.replaceChildren(failure(r)); return; }
    const e = r.data.change;
    const who = (rec) => (rec && rec.entries ? rec.entries.map((x) => x.actor).filter(Boolean) : []);
    const agents = [...new Set([...who(e.old), ...who(e.new)])];
    body.replaceChildren(
      h('p', { class: 'muted' }, `+${e.lines_added} −${e.lines_removed} line(s)`, agents.length ? `; agent(s): ${agents.join(', ')}` : '', ' · ',
        link('memory', { ns: c.namespace, key: c.key, at: to }, 'open the memory')),
      patchView(e.patch || '', sideBySide));
  });
  return card;
}

function sbsToggle(p, view, extra) {
  const on = p.get('sbs') === '1';
  return h('button', { type: 'button', id: 'sbs-toggle', 'aria-pressed': String(on), onclick: () => go(view, { ...extra, sbs: on ? '' : '1' }) },
    'Side by side');
}

export async function commitView(main, p) {
  const id = p.get('id') || '';
  const res = await api('/api/log', { rev: id, limit: 1 });
  if (!res.ok) return put(main, h('h2', { text: 'Commit' }), failure(res));
  const c = res.data.commits[0];
  const meta = h('dl', { class: 'kv' }, [
    ['Commit', h('code', { id: 'commit-hash' }, c.hash)],
    ['Agent', agent(c)], ['Source', source(c) || '—'],
    ['Author', c.author], ['Date', c.date],
    ['Parents', c.parents.length ? c.parents.map((x) => [commitLink(x), ' ']) : 'none (first commit)'],
    ...Object.entries(c.metadata || {}).filter(([k]) => k !== 'actor' && k !== 'source'),
  ].flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)]));
  const parts = [h('h2', {}, 'Commit ', h('code', {}, c.short_hash)), h('p', { id: 'commit-message' }, c.message), meta,
    h('div', { class: 'toolbar' }, sbsToggle(p, 'commit', { id }),
      h('button', { type: 'button', onclick: () => go('tree', { at: c.hash }) }, 'Browse at this commit'))];
  if (c.parents.length) {
    if (c.parents.length > 1) parts.push(h('p', { class: 'muted' }, 'A merge: the changes against its first parent.'));
    const d = pagedDiff({ from: c.parents[0], to: c.hash }, p.get('sbs') === '1');
    await d.ready;
    parts.push(d.box);
  }
  put(main, ...parts);
}

export async function compareView(main, p) {
  const names = branchNames();
  const here = writeBranch() || 'HEAD';
  const from = p.get('from') || here;
  const to = p.get('to') || names.find((b) => b !== here) || 'HEAD';
  const base = p.get('base') !== '0';
  const list = h('datalist', { id: 'cmp-branches' }, names.map((b) => h('option', { value: b })));
  const a = h('input', { id: 'cmp-from', value: from, list: 'cmp-branches', spellcheck: 'false', autocomplete: 'off' });
  const b = h('input', { id: 'cmp-to', value: to, list: 'cmp-branches', spellcheck: 'false', autocomplete: 'off' });
  const since = h('input', { type: 'checkbox', id: 'cmp-base', checked: base });
  const form = h('form', { class: 'toolbar', onsubmit: (e) => {
    e.preventDefault();
    go('compare', { from: a.value.trim(), to: b.value.trim(), base: since.checked ? '' : '0', sbs: p.get('sbs') });
  } },
  h('label', { for: 'cmp-from' }, 'From'), a, h('label', { for: 'cmp-to' }, 'To'), b, list,
  h('label', { class: 'check' }, since, ' only what "To" adds since they split (from...to)'),
  h('button', { type: 'submit', class: 'primary' }, 'Compare'), sbsToggle(p, 'compare', { from, to, base: base ? '' : '0' }));
  const d = pagedDiff({ from, to, base: base ? 1 : '' }, p.get('sbs') === '1');
  await d.ready;
  put(main, h('h2', { text: 'Compare' }), form,
    h('p', { class: 'muted', id: 'cmp-what' }, base ? `What ${to} adds since it split from ${from} (their merge base against ${to}).`
      : `Every difference from ${from} to ${to}, tip against tip.`), d.box);
}
