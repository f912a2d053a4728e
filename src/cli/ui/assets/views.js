// memoir ui: the views besides the tree. Each takes the main element and the route's
// parameters, reads the JSON API at the page's revision, and draws with textContent only.

import { h, put, api, post, failure, go, link, commitLink, readAt, num, refreshHeader, writeBranch, writesGo } from './app.js';
import { agent } from './history.js';

const keyParams = (p) => ({ ns: p.get('ns') || '', key: p.get('key') || '' });

function when(ts) {
  if (ts === null || ts === undefined) return '';
  return new Date(ts * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)]));
}

// ---- memory: record, entries, blame, per-line blame; edit and forget ----

/** A confirmation dialog: `body` nodes, a confirm button labelled `yes`; resolves to true when confirmed. */
function confirmDialog(id, title, body, yes) {
  return new Promise((resolve) => {
    const dialog = h('dialog', { id, 'aria-labelledby': `${id}-h` },
      h('form', { method: 'dialog' }, h('h3', { id: `${id}-h` }, title), body,
        h('div', { class: 'toolbar' }, h('button', { value: 'cancel', id: `${id}-cancel` }, 'Cancel'),
          h('button', { value: 'yes', class: 'danger', id: `${id}-confirm` }, yes))));
    dialog.addEventListener('close', () => { dialog.remove(); resolve(dialog.returnValue === 'yes'); });
    document.body.append(dialog);
    dialog.showModal();
  });
}

function memoryActions(ns, key, v, out) {
  const branch = writeBranch();
  const text = h('textarea', { id: 'edit-content' }, v.content);
  const edit = h('form', { id: 'edit-form', class: 'card', hidden: true, onsubmit: async (e) => {
    e.preventDefault();
    const r = await post('/api/remember', { content: text.value, paths: [key], namespace: ns, merge_policy: 'replace', branch: branch || undefined });
    out.replaceChildren(r.ok ? h('p', { class: 'ok' }, `Saved ${r.data.full_keys.join(', ')} on ${branch}: `, r.data.commit_hash ? commitLink(r.data.commit_hash) : 'nothing changed') : failure(r));
    refreshHeader();
    if (r.ok) go('memory', { ns, key, at: '' });
  } },
  h('h3', {}, 'Edit'), h('p', {}, 'The new content replaces the memory on branch ', h('strong', {}, branch), '; the old one stays in the history.'),
  h('label', { for: 'edit-content' }, 'Content'), text,
  h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'primary', id: 'edit-save' }, 'Save'),
    h('button', { type: 'button', onclick: () => { edit.hidden = true; } }, 'Cancel')));
  const forget = async () => {
    const yes = await confirmDialog('forget-dialog', `Forget ${ns}:${key} on branch ${branch}?`, [
      h('p', {}, 'It is removed in a new commit on ', h('strong', { id: 'forget-branch' }, branch), '; its history stays readable. Its content:'),
      h('pre', { class: 'card', id: 'forget-content' }, v.content)], 'Forget');
    if (!yes) return;
    const r = await post('/api/forget', { key, namespace: ns, branch: branch || undefined });
    out.replaceChildren(r.ok ? h('p', { class: 'ok' }, `${r.data.message} on ${branch}: `, r.data.commit_hash ? commitLink(r.data.commit_hash) : '') : failure(r));
    refreshHeader();
  };
  return [h('div', { class: 'toolbar' },
    h('button', { type: 'button', id: 'memory-edit', onclick: () => { edit.hidden = false; text.focus(); } }, 'Edit…'),
    h('button', { type: 'button', class: 'danger', id: 'memory-forget', onclick: forget }, 'Forget…'),
    writesGo()), edit];
}

export async function memoryView(main, p) {
  const { ns, key } = keyParams(p);
  const at = readAt();
  const [got, blame] = await Promise.all([
    api('/api/memory', { key, ns, at }),
    api('/api/blame', { key, ns, at, lines: 1 }),
  ]);
  const title = h('h2', {}, 'Memory ', h('code', { id: 'memory-key' }, `${ns || 'default'}:${key}`));
  const out = h('div', { id: 'memory-result', role: 'status' });
  const parts = [title, out];
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
        ['Graph', link('graph', { key: `${v.namespace}:${v.key}`, depth: '2' }, 'its neighbourhood', { id: 'memory-graph-link' })],
      ])));
    parts.push(...memoryActions(v.namespace, key, v, out));
    parts.push(h('h3', {}, 'Entries'), h('table', { id: 'memory-entries' },
      h('thead', {}, h('tr', {}, ['Content', 'Status', 'Confidence', 'Time', 'Agent', 'Source'].map((c) => h('th', { text: c })))),
      h('tbody', {}, v.entries.map((e) => h('tr', {},
        h('td', {}, h('pre', {}, e.content)), h('td', { text: e.status }), h('td', { class: 'num', text: e.confidence }),
        h('td', { text: when(e.timestamp) }), h('td', {}, agent(e)), h('td', { text: e.source || '' }))))));
  }
  if (blame.ok) {
    const b = blame.data;
    parts.push(h('h3', {}, 'History of this memory'), h('table', { id: 'blame' },
      h('thead', {}, h('tr', {}, ['Commit', 'Change', 'Agent', 'Source', 'Date', 'Author', 'Message', 'Show'].map((c) => h('th', { text: c })))),
      h('tbody', {}, b.entries.map((e) => h('tr', {},
        h('td', {}, commitLink(e.commit)), h('td', { class: 'op-' + e.operation, text: e.operation }),
        h('td', { class: 'actor' }, agent(e)), h('td', { class: 'source', text: e.source || '' }),
        h('td', { text: e.date.slice(0, 19).replace('T', ' ') }), h('td', { class: 'author', text: e.author }),
        h('td', { text: e.message.split('\n')[0] }),
        h('td', {}, h('button', { type: 'button', class: 'show-at', onclick: () => go('memory', { ns, key, at: e.commit }) }, 'Show at this commit')))))));
    if (b.lines && b.lines.length) {
      parts.push(h('h3', {}, 'Line by line'), h('table', { id: 'blame-lines', class: 'mono' },
        h('thead', {}, h('tr', {}, ['Commit', 'Agent', 'Source', 'Date', 'Line'].map((c) => h('th', { text: c })))),
        h('tbody', {}, b.lines.map((l) => h('tr', {},
          h('td', {}, commitLink(l.commit)), h('td', { class: 'actor' }, agent(l)), h('td', { class: 'source muted', text: l.source || '' }),
          h('td', { class: 'muted', text: l.date.slice(0, 10) }), h('td', {}, h('pre', {}, l.line)))))));
    }
  } else parts.push(failure(blame));
  put(main, ...parts);
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
  const showPreview = async () => {
    const r = await api('/api/merge-preview', { source: source.value, into: into.value });
    preview.replaceChildren(r.ok ? previewView(r.data) : failure(r));
  };
  const mergeForm = h('form', { class: 'toolbar', onsubmit: async (e) => { e.preventDefault(); await showPreview(); } },
  h('label', { for: 'merge-source' }, 'Merge'), source, h('label', { for: 'merge-into' }, 'into'), into,
  h('button', { type: 'submit' }, 'Preview'),
  h('label', { for: 'merge-strategy' }, 'Strategy'), strategy,
  h('button', { type: 'button', class: 'primary', id: 'merge-run', onclick: async () => {
    const r = await post('/api/merge', { source: source.value, into: into.value, strategy: strategy.value });
    out.replaceChildren(r.ok ? h('p', { class: 'ok', id: 'merge-result' }, r.data.message || 'merged', ' ',
      r.data.commit_hash ? ['(', h('a', { href: `#/commit?id=${r.data.commit_hash}`, id: 'merge-commit' }, `commit ${r.data.commit_hash.slice(0, 8)}`), ')'] : null) : failure(r));
    refreshHeader();
    // The preview is redone: after the merge it says what merging again would do.
    await showPreview();
  } }, 'Merge'));
  put(main, h('h2', { text: 'Branches' }), list, out, h('h3', { text: 'Remote-tracking' }), remoteList, h('h3', { text: 'Create' }), create, h('h3', { text: 'Merge' }), mergeForm, preview);
}

function previewView(m) {
  const record = (r) => (r ? h('pre', {}, r.content) : h('em', { class: 'muted' }, 'absent'));
  const shown = m.changes.slice(0, 100);
  return h('div', {},
    h('p', { id: 'merge-kind' }, `Merging ${m.source_branch} into ${m.target_branch}: ${m.kind.replace(/_/g, ' ')}`,
      `; ${m.changes.length} key(s) would change, ${m.conflicts.length} conflict(s).`),
    m.conflicts.length ? h('table', { id: 'merge-conflicts' },
      h('thead', {}, h('tr', {}, ['Key', 'Base', 'Ours', 'Theirs'].map((c) => h('th', { text: c })))),
      h('tbody', {}, m.conflicts.map((c) => h('tr', { 'data-key': c.full_key },
        h('td', {}, h('code', {}, c.full_key)), h('td', {}, record(c.base)), h('td', {}, record(c.ours)), h('td', {}, record(c.theirs)))))) : null,
    shown.length ? h('table', { id: 'merge-changes' },
      h('thead', {}, h('tr', {}, ['Change', 'Key', `Now on ${m.target_branch}`, 'After the merge'].map((c) => h('th', { text: c })))),
      h('tbody', {}, shown.map((c) => h('tr', { 'data-key': `${c.namespace}:${c.key}` },
        h('td', { class: 'op-' + c.operation, text: c.operation }), h('td', {}, h('code', {}, `${c.namespace}:${c.key}`)),
        h('td', {}, record(c.old)), h('td', {}, record(c.new)))))) : null,
    m.changes.length > shown.length ? h('p', { class: 'muted' }, `and ${num(m.changes.length - shown.length)} more; Compare shows them all.`) : null);
}

// ---- agents: who wrote, where and when ----

export async function agentsView(main) {
  const r = await api('/api/agents');
  if (!r.ok) return put(main, h('h2', { text: 'Agents' }), failure(r));
  const d = r.data;
  put(main, h('h2', { text: 'Agents' }),
    h('p', { class: 'muted' }, `${num(d.agents.length)} agent(s) over ${num(d.commits)} commit(s) reachable from a branch.`),
    h('table', { id: 'agents' },
      h('thead', {}, h('tr', {}, ['Agent', 'Commits', 'Branches', 'Sources', 'Authors', 'Last activity', 'History'].map((c) => h('th', { text: c })))),
      h('tbody', {}, d.agents.map((a) => h('tr', { 'data-actor': a.actor || '' },
        h('td', {}, a.actor ? h('strong', {}, a.actor) : h('em', { class: 'muted' }, 'none recorded')),
        h('td', { class: 'num', text: num(a.commits) }),
        h('td', {}, a.branches.map((b) => [h('span', { class: 'branch-label' }, b), ' '])),
        h('td', { text: a.sources.join(', ') }), h('td', { text: a.authors.join(', ') }),
        h('td', {}, a.last.slice(0, 16).replace('T', ' '), ' ', commitLink(a.last_commit), ' ', h('span', { class: 'muted' }, a.last_message)),
        h('td', {}, a.actor ? [link('history', { actor: a.actor, all: '1' }, 'writes'), ' '] : null))))));
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
  const f = { actor: p.get('actor') || '', since: p.get('since') || '', until: p.get('until') || '' };
  const input = h('input', { id: 'search-q', type: 'search', value: q, placeholder: 'words to look for', size: 32 });
  const modeSel = h('select', { id: 'search-mode' }, [['search', 'Search (ranked)'], ['search-lexical', 'Search: by words'], ['search-semantic', 'Search: by meaning'], ['search-hybrid', 'Search: words and meaning'], ['lexical', 'Recall: lexical'], ['single', 'Recall: single model call'], ['tiered', 'Recall: tiered model calls']]
    .map(([v, t]) => h('option', { value: v, selected: v === mode }, t)));
  const field = (id, value, placeholder) => h('input', { id, value, placeholder, size: 11, spellcheck: 'false' });
  const who = field('search-actor', f.actor, 'any agent');
  const since = field('search-since', f.since, 'e.g. 2026-01-01');
  const until = field('search-until', f.until, 'e.g. yesterday');
  const form = h('form', { class: 'toolbar', role: 'search', onsubmit: (e) => {
    e.preventDefault();
    go('search', { q: input.value.trim(), mode: modeSel.value, actor: who.value.trim(), since: since.value.trim(), until: until.value.trim() });
  } },
  h('label', { for: 'search-q' }, 'Query'), input, h('label', { for: 'search-mode' }, 'Mode'), modeSel,
  h('label', { for: 'search-actor' }, 'Agent'), who, h('label', { for: 'search-since' }, 'Since'), since,
  h('label', { for: 'search-until' }, 'Until'), until,
  h('button', { type: 'submit', class: 'primary' }, 'Go'));
  const parts = [h('h2', { text: 'Search and recall' }), form];
  if (q) {
    const terms = q.split(/\s+/).filter((t) => t.length > 1);
    if (mode.startsWith('search')) {
      const r = await api('/api/search', { q, at: readAt(), limit: 50, ...f, mode: mode.slice(7) });
      if (!r.ok) parts.push(failure(r));
      else {
        parts.push(h('p', { class: 'muted' }, `${r.data.count} hit(s) in ${r.data.timing_ms} ms, ranked ${r.data.mode}`));
        parts.push(h('ol', { id: 'search-results' }, r.data.hits.map((x) => h('li', { class: 'hit' },
          link('memory', { ns: x.namespace, key: x.key }, highlight(`${x.namespace}:${x.key}`, terms)),
          h('span', { class: 'badge' }, x.score.toFixed(2)), h('pre', {}, highlight(x.content, terms))))));
      }
    } else {
      if (f.actor || f.since || f.until) parts.push(h('p', { class: 'muted' }, 'Recall does not filter by agent or date; Search does.'));
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
  // Spaced by time, as the axis is labelled with dates: a burst of commits in an hour takes
  // the width of an hour, not of its number of commits.
  const t0 = points.length ? points[0].timestamp : 0, t1 = points.length ? points[points.length - 1].timestamp : 1;
  const px = (x) => pad + ((x.timestamp - t0) / Math.max(1, t1 - t0)) * (W - 2 * pad);
  const py = (x) => H - pad + 10 - (x.memories / max) * (H - 2 * pad);
  const last = points[points.length - 1];
  svg.setAttribute('aria-label', points.length
    ? `Memories from ${points[0].date.slice(0, 10)} to ${last.date.slice(0, 10)}: ${num(points[0].memories)} to ${num(last.memories)}, at most ${num(max)}`
    : 'No history');
  const add = (tag, attrs, text) => { const el = document.createElementNS(ns, tag); Object.entries(attrs).forEach(([k, v]) => el.setAttribute(k, v)); if (text) el.textContent = text; svg.append(el); };
  add('line', { x1: pad, y1: H - pad + 10, x2: W - pad, y2: H - pad + 10, class: 'axis' });
  add('line', { x1: pad, y1: 10, x2: pad, y2: H - pad + 10, class: 'axis' });
  // A step line: the count holds until the next commit changes it.
  const steps = points.flatMap((x, i) => (i ? [`${px(x)},${py(points[i - 1])}`, `${px(x)},${py(x)}`] : [`${px(x)},${py(x)}`]));
  add('polyline', { class: 'line', points: steps.join(' ') });
  add('text', { x: 4, y: 20 }, num(max));
  add('text', { x: 4, y: H - pad + 10 }, '0');
  if (points.length) {
    const mid = t0 + (t1 - t0) / 2;
    add('text', { x: pad, y: H - 8 }, points[0].date.slice(0, 10));
    if (t1 - t0 > 86400 * 2) add('text', { x: W / 2 - 35, y: H - 8 }, new Date(mid * 1000).toISOString().slice(0, 10));
    add('text', { x: W - pad - 70, y: H - 8 }, last.date.slice(0, 10));
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
  const out = h('div', { id: 'action-result', role: 'status' });
  const branch = writeBranch();
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
    const r = await post('/api/remember', { content: content.value, paths: path.value.split(',').map((x) => x.trim()).filter(Boolean), namespace: ns.value.trim(), merge_policy: policy.value, branch: branch || undefined });
    show(r, (d) => [`Stored ${d.full_keys.join(', ')} on branch ${branch} in `, d.commit_hash ? commitLink(d.commit_hash) : 'no commit (nothing changed)']);
    refreshHeader();
  } },
  h('h3', { text: 'Remember' }), writesGo(),
  h('p', {}, h('label', { for: 'rem-path' }, 'Key path(s), comma separated'), h('br'), path, paths, ' ', h('label', { for: 'rem-ns' }, 'Namespace'), ' ', ns),
  h('p', {}, h('label', { for: 'rem-content' }, 'Content'), content),
  h('p', {}, h('label', { for: 'rem-policy' }, 'Merge policy'), ' ', policy, ' ', h('button', { type: 'submit', class: 'primary', id: 'rem-submit' }, 'Remember')));
  if (p.get('key')) path.value = p.get('key');

  const fkey = h('input', { id: 'forget-key', required: true, size: 36, spellcheck: 'false', value: p.get('forget') || '' });
  const fns = h('input', { id: 'forget-ns', placeholder: 'default', size: 12, spellcheck: 'false' });
  const dialog = h('dialog', { id: 'forget-dialog', 'aria-labelledby': 'forget-dialog-h' });
  const ask = async (purge) => {
    const key = fkey.value.trim();
    if (!key) return;
    // The confirmation shows what is forgotten, as the branch written to has it.
    const now = await api('/api/memory', { key, ns: fns.value.trim(), branch: branch || undefined });
    const item = now.ok && now.data.items[0];
    dialog.replaceChildren(h('form', { method: 'dialog' },
      h('h3', { id: 'forget-dialog-h' }, purge ? `Purge ${key}?` : `Forget ${key} on branch ${branch}?`),
      h('p', {}, purge ? 'Purging rewrites history: the memory is removed from every commit and its bytes are erased. This cannot be undone.'
        : ['The memory is removed in a new commit on ', h('strong', { id: 'forget-branch' }, branch), '; its history stays readable.']),
      item && item.found ? h('pre', { class: 'card', id: 'forget-content' }, item.value.content)
        : h('p', { class: 'muted' }, `No memory ${key} on ${branch}.`),
      h('div', { class: 'toolbar' },
        h('button', { value: 'cancel', id: 'forget-cancel' }, 'Cancel'),
        h('button', { value: 'yes', class: 'danger', id: 'forget-confirm' }, purge ? 'Purge' : 'Forget'))));
    dialog.onclose = async () => {
      if (dialog.returnValue !== 'yes') return;
      const r = await post('/api/forget', { key, namespace: fns.value.trim(), purge, branch: branch || undefined });
      show(r, (d) => [d.message, ` on branch ${branch} `, d.commit_hash ? commitLink(d.commit_hash) : '']);
      refreshHeader();
    };
    dialog.showModal();
  };
  const forget = h('form', { id: 'forget-form', class: 'card', onsubmit: (e) => { e.preventDefault(); ask(false); } },
    h('h3', { text: 'Forget' }), writesGo(),
    h('p', {}, h('label', { for: 'forget-key' }, 'Key'), ' ', fkey, ' ', h('label', { for: 'forget-ns' }, 'Namespace'), ' ', fns),
    h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'danger', id: 'forget-submit' }, 'Forget…'),
      h('button', { type: 'button', class: 'danger', id: 'purge-submit', onclick: () => ask(true) }, 'Purge from history…')));

  const pkey = h('input', { id: 'proof-key', size: 36, spellcheck: 'false' });
  const proofText = h('textarea', { id: 'proof-text', class: 'mono' });
  const proof = h('form', { class: 'card', id: 'proof-form', onsubmit: async (e) => {
    e.preventDefault();
    const r = await api('/api/proof', { key: pkey.value.trim(), at: readAt() });
    if (r.ok) proofText.value = r.data.proof;
    show(r, (d) => `Proof of ${d.namespace}:${d.key} (${d.found ? 'present' : 'absent'}) at ${d.commit.slice(0, 8)}: ${d.proof_bytes} bytes, root ${d.root.slice(0, 12)}`);
  } },
  h('h3', { text: 'Proofs' }),
  h('p', {}, h('label', { for: 'proof-key' }, 'Key'), ' ', pkey, ' ', h('button', { type: 'submit' }, 'Make proof'), ' ',
    h('button', { type: 'button', id: 'verify-submit', onclick: async () => {
      const r = await post('/api/verify', { key: pkey.value.trim(), proof: proofText.value, at: readAt() });
      show(r, (d) => (d.valid ? `Valid: ${d.namespace}:${d.key} is ${d.found ? 'present' : 'absent'} under root ${d.root.slice(0, 12)}` : 'Not valid'));
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
