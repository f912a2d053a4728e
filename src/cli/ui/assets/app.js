// memoir ui: the page's core. Helpers (DOM building, API calls), the revision picker and
// time slider that set the revision every view reads at, the router, and the tree view.
// No framework and no build step: plain modules served by the binary.

// Every error the page meets is kept here (the browser tests read it) and logged.
const pageErrors = [];
window.__memoirErrors = pageErrors;
window.addEventListener('error', (e) => {
  const what = e.message || (e.target && (e.target.src || e.target.href)) || 'error';
  pageErrors.push(String(what));
}, true);
window.addEventListener('unhandledrejection', (e) => {
  pageErrors.push('unhandled rejection: ' + String((e.reason && e.reason.message) || e.reason));
});
document.addEventListener('securitypolicyviolation', (e) => {
  pageErrors.push('content security policy: ' + e.violatedDirective);
});
const consoleError = console.error.bind(console);
console.error = (...args) => { pageErrors.push(args.map(String).join(' ')); consoleError(...args); };

import * as views from './views.js';

/** The launch token, sent with every write. */
export const token = document.querySelector('meta[name="memoir-token"]').content;

/** Builds an element: attributes (`class`, `text`, `on<event>`, others as attributes) and children. */
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

/** Replaces the children of `el` with `kids` (nulls and false left out). */
export function put(el, ...kids) {
  el.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false));
}

/** A query string from an object; arrays repeat the name, empty values are left out. */
function queryOf(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (x !== undefined && x !== null && x !== '') q.append(k, String(x));
    }
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

/** A GET of the JSON API: `{ok, status, data}`. */
export async function api(path, params) {
  const r = await fetch(path + queryOf(params), { headers: { Accept: 'application/json' } });
  const data = await r.json();
  return { ok: r.ok, status: r.status, data };
}

/** A POST of the JSON API, with the launch token: `{ok, status, data}`. */
export async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Memoir-Token': token },
    body: JSON.stringify(body || {}),
  });
  const data = await r.json();
  return { ok: r.ok, status: r.status, data };
}

/** An error box for a failed answer. */
export function failure(res) {
  const d = res.data || {};
  return h('p', { class: 'error', role: 'alert' }, `${d.error || 'request failed'} (code ${d.code ?? res.status})`);
}

// ---- the route and the revision every view reads at ----

/** The current route: view name and its parameters. */
export function route() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [view, query] = hash.split('?');
  return { view: view || 'tree', params: new URLSearchParams(query || '') };
}

/** Goes to `view` with `params`, keeping the page's revision unless `params` sets it. */
export function go(view, params) {
  const cur = route().params;
  const q = new URLSearchParams();
  for (const k of ['rev', 'at']) if (cur.get(k)) q.set(k, cur.get(k));
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  location.hash = '#/' + view + (s ? '?' + s : '');
}

/** The revision views read at: the slider's or typed one, else the picked branch (none: HEAD). */
export function readAt() {
  const p = route().params;
  return p.get('at') || p.get('rev') || '';
}

/** A link to a view with the page's revision kept. */
export function link(view, params, text, attrs) {
  const cur = route().params;
  const q = new URLSearchParams();
  for (const k of ['rev', 'at']) if (cur.get(k)) q.set(k, cur.get(k));
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  const s = q.toString();
  return h('a', { href: '#/' + view + (s ? '?' + s : ''), ...(attrs || {}) }, text);
}

/** A short commit id linking to the commit's page. */
export function commitLink(hash) {
  return link('commit', { id: hash }, hash.slice(0, 8), { class: 'mono' });
}

/** A count with digit grouping. */
export function num(n) {
  return Number(n).toLocaleString('en-US');
}

// ---- header: branch picker and time slider ----

const header = { rev: null, branches: null, log: null };

/** Forgets the header's branches and log (after a write). */
export function refreshHeader() {
  header.rev = null;
}

async function loadHeader() {
  const p = route().params;
  const rev = p.get('rev') || '';
  if (header.rev === rev && header.branches && header.log) return;
  const [b, l] = await Promise.all([
    api('/api/branches'),
    api('/api/log', { rev: rev || 'HEAD', limit: 300 }),
  ]);
  header.rev = rev;
  header.branches = b.ok ? b.data : { branches: [], current: null };
  header.log = l.ok ? l.data.commits.slice().reverse() : [];
}

function drawHeader() {
  const p = route().params;
  const select = document.getElementById('rev-branch');
  const rev = p.get('rev') || '';
  select.replaceChildren(
    h('option', { value: '', text: `HEAD (${header.branches.current || 'detached'})` }),
    ...header.branches.branches.map((b) => h('option', { value: b, text: b, selected: b === rev })),
  );
  document.getElementById('rev-at').value = p.get('at') || '';
  const slider = document.getElementById('time-slider');
  const log = header.log;
  slider.max = String(Math.max(0, log.length - 1));
  const at = p.get('at');
  let pos = log.length - 1;
  if (at) {
    const i = log.findIndex((c) => c.hash === at || c.hash.startsWith(at) || c.short_hash === at);
    if (i >= 0) pos = i;
  }
  slider.value = String(pos);
  slider.disabled = log.length < 2;
  labelSlider(pos);
}

function labelSlider(pos) {
  const c = header.log[pos];
  const label = document.getElementById('time-label');
  const slider = document.getElementById('time-slider');
  if (!c) { label.textContent = ''; return; }
  const text = `${c.short_hash} ${c.date.slice(0, 16).replace('T', ' ')} ${c.message.split('\n')[0]}`;
  label.textContent = (pos === header.log.length - 1 ? 'latest: ' : '') + text;
  slider.setAttribute('aria-valuetext', text);
}

function wireHeader() {
  document.getElementById('rev-branch').addEventListener('change', (e) => {
    const r = route();
    r.params.delete('at');
    if (e.target.value) r.params.set('rev', e.target.value); else r.params.delete('rev');
    location.hash = '#/' + r.view + '?' + r.params.toString();
  });
  document.getElementById('revision-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const r = route();
    const v = document.getElementById('rev-at').value.trim();
    if (v) r.params.set('at', v); else r.params.delete('at');
    location.hash = '#/' + r.view + '?' + r.params.toString();
  });
  document.getElementById('rev-latest').addEventListener('click', () => {
    const r = route();
    r.params.delete('at');
    location.hash = '#/' + r.view + '?' + r.params.toString();
  });
  const slider = document.getElementById('time-slider');
  slider.addEventListener('input', () => labelSlider(Number(slider.value)));
  slider.addEventListener('change', () => {
    const pos = Number(slider.value);
    const r = route();
    if (pos >= header.log.length - 1) r.params.delete('at');
    else r.params.set('at', header.log[pos].hash);
    location.hash = '#/' + r.view + '?' + r.params.toString();
  });
}

// ---- the tree view ----

async function treeView(main, p) {
  const ns = p.get('ns') || '';
  const keys = p.get('keys') || '';
  const res = await api('/api/tree', { ns, keys, at: readAt() });
  if (!res.ok) return put(main, h('h2', { text: 'Tree' }), failure(res));
  const t = res.data;
  const nsSelect = h('select', { id: 'tree-ns', onchange: (e) => go('tree', { ns: e.target.value, keys }) },
    Object.entries(t.namespaces).map(([n, c]) => h('option', { value: n, selected: n === t.namespace }, `${n} (${num(c)})`)));
  if (!Object.keys(t.namespaces).length) nsSelect.append(h('option', { text: t.namespace }));
  const glob = h('input', { id: 'tree-glob', name: 'keys', value: keys, placeholder: 'glob, e.g. preferences.*', spellcheck: 'false' });
  const form = h('form', { class: 'toolbar', role: 'search', onsubmit: (e) => { e.preventDefault(); go('tree', { ns: t.namespace, keys: glob.value.trim() }); } },
    h('label', { for: 'tree-ns' }, 'Namespace'), nsSelect,
    h('label', { for: 'tree-glob' }, 'Filter'), glob, h('button', { type: 'submit' }, 'Apply'),
    h('span', { class: 'muted', id: 'tree-total' }, `${num(t.total)} memories`));
  const tree = h('ul', { class: 'tree', role: 'tree', id: 'tree', 'aria-label': `Keys of ${t.namespace}` });
  for (const c of t.children) tree.append(treeItem(t.namespace, keys, c, 1));
  if (t.omitted) tree.append(h('li', { class: 'muted' }, `${num(t.omitted)} more not shown`));
  tree.addEventListener('keydown', treeKeys);
  const first = tree.querySelector('[role="treeitem"]');
  if (first) first.tabIndex = 0;
  put(main, h('h2', { text: 'Tree' }), form, t.children.length ? tree : h('p', { class: 'muted' }, 'No memories here.'));
}

function treeItem(ns, keys, c, level) {
  const li = h('li', { role: 'treeitem', 'data-path': c.path, 'aria-level': level, tabindex: '-1',
    'aria-expanded': c.has_children ? 'false' : null });
  const toggle = c.has_children
    ? h('button', { class: 'toggle', type: 'button', tabindex: '-1', 'aria-label': `Expand ${c.path}`, onclick: () => toggleItem(li, ns, keys, c, level) }, '▸')
    : h('span', { class: 'spacer' });
  const name = c.has_record
    ? link('memory', { ns, key: c.path }, c.name, { tabindex: '-1', class: 'open' })
    : h('span', { class: 'name' }, c.name);
  li.append(h('div', { class: 'row' }, toggle, name, h('span', { class: 'badge count', title: 'memories at or below' }, num(c.count))));
  li.dataset.count = String(c.count);
  return li;
}

async function toggleItem(li, ns, keys, c, level) {
  const open = li.getAttribute('aria-expanded') === 'true';
  const btn = li.querySelector(':scope > .row > .toggle');
  if (open) {
    li.setAttribute('aria-expanded', 'false');
    btn.textContent = '▸';
    const group = li.querySelector(':scope > ul');
    if (group) group.hidden = true;
    return;
  }
  let group = li.querySelector(':scope > ul');
  if (!group) {
    const res = await api('/api/tree', { ns, prefix: c.path, keys, at: readAt() });
    if (!res.ok) { li.append(failure(res)); return; }
    group = h('ul', { role: 'group' });
    for (const k of res.data.children) group.append(treeItem(ns, keys, k, level + 1));
    if (res.data.omitted) group.append(h('li', { class: 'muted' }, `${num(res.data.omitted)} more not shown`));
    li.append(group);
  }
  group.hidden = false;
  li.setAttribute('aria-expanded', 'true');
  btn.textContent = '▾';
}

function visibleItems(tree) {
  return [...tree.querySelectorAll('[role="treeitem"]')].filter((el) => !el.closest('ul[hidden]'));
}

function treeKeys(e) {
  const li = e.target.closest('[role="treeitem"]');
  if (!li) return;
  const items = visibleItems(e.currentTarget);
  const i = items.indexOf(li);
  const focus = (el) => { if (!el) return; items.forEach((x) => { x.tabIndex = -1; }); el.tabIndex = 0; el.focus(); };
  const expanded = li.getAttribute('aria-expanded');
  switch (e.key) {
    case 'ArrowDown': focus(items[i + 1]); break;
    case 'ArrowUp': focus(items[i - 1]); break;
    case 'Home': focus(items[0]); break;
    case 'End': focus(items[items.length - 1]); break;
    case 'ArrowRight':
      if (expanded === 'false') li.querySelector('.toggle').click();
      else if (expanded === 'true') focus(li.querySelector('[role="treeitem"]'));
      break;
    case 'ArrowLeft':
      if (expanded === 'true') li.querySelector('.toggle').click();
      else focus(li.parentElement.closest('[role="treeitem"]'));
      break;
    case 'Enter': {
      const open = li.querySelector(':scope > .row > a.open');
      if (open) open.click(); else if (expanded) li.querySelector('.toggle').click();
      break;
    }
    default: return;
  }
  e.preventDefault();
}

// ---- router ----

const routes = {
  tree: treeView,
  memory: views.memoryView,
  history: views.historyView,
  commit: views.commitView,
  compare: views.compareView,
  branches: views.branchesView,
  search: views.searchView,
  stats: views.statsView,
  actions: views.actionsView,
};

let rendering = 0;

async function render() {
  const turn = ++rendering;
  const { view, params } = route();
  const main = document.getElementById('main');
  for (const a of document.querySelectorAll('.views a')) {
    const here = a.dataset.view === view || (view === 'memory' && a.dataset.view === 'tree')
      || (view === 'commit' && a.dataset.view === 'history');
    if (here) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const fn = routes[view] || treeView;
  main.setAttribute('aria-busy', 'true');
  // The view draws into a section of its own, shown only if no later route replaced it.
  const section = h('section', { class: 'view', 'data-view': view });
  try {
    await Promise.all([loadHeader().then(() => { if (turn === rendering) drawHeader(); }), fn(section, params)]);
    if (turn === rendering) main.replaceChildren(section);
  } catch (err) {
    if (turn === rendering) put(main, h('p', { class: 'error', role: 'alert' }, String(err)));
    throw err;
  } finally {
    if (turn === rendering) {
      main.removeAttribute('aria-busy');
      document.body.dataset.ready = String(turn);
    }
  }
}

window.addEventListener('hashchange', () => { render(); });
wireHeader();
render();
