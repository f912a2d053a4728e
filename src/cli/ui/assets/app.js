// memoir ui: the page's core. Helpers (DOM building, API calls), the revision picker and
// time slider that set the revision every view reads at, the banner that says when the page
// shows the past, and the router. No framework and no build step: plain modules served by
// the binary.

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
import * as history from './history.js';
import { treeView } from './tree.js';
import * as graph from './graph.js';

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

// ---- header: branch picker, time slider, and where writes go ----

const header = { rev: null, branches: null, log: null, at: null, atCommit: null };

/** Forgets the header's branches and log (after a write): the next render reads them anew. */
export function refreshHeader() {
  header.rev = null;
}

/** The branch picked in the header (none: HEAD's). */
export function pickedBranch() {
  const rev = route().params.get('rev') || '';
  return header.branches && header.branches.branches.includes(rev) ? rev : '';
}

/** The branch writes from the page go to: the one picked in the header, else HEAD's. */
export function writeBranch() {
  return pickedBranch() || (header.branches && header.branches.current) || '';
}

/** The branch names (after the header loaded). */
export function branchNames() {
  return header.branches ? header.branches.branches : [];
}

/** Where writes go, as a sentence for forms that write. */
export function writesGo() {
  const b = writeBranch();
  return h('p', { class: 'writes-to' }, 'Writes go to branch ', h('strong', { class: 'write-branch' }, b || '(HEAD is detached)'),
    pickedBranch() ? ' (picked in the header)' : ' (HEAD\'s branch)', '.');
}

async function loadHeader() {
  const p = route().params;
  const rev = p.get('rev') || '';
  const at = p.get('at') || '';
  // Read anew at every navigation: agents write from the command line meanwhile.
  const calls = [api('/api/branches'), api('/api/log', { rev: rev || 'HEAD', limit: 300 })];
  if (at) calls.push(api('/api/log', { rev: at, limit: 1 }));
  const [b, l, a] = await Promise.all(calls);
  header.rev = rev;
  header.branches = b.ok ? b.data : { branches: [], current: null };
  header.log = l.ok ? l.data.commits.slice().reverse() : [];
  header.at = at;
  header.atCommit = a && a.ok ? a.data.commits[0] : null;
  header.atError = a && !a.ok ? a : null;
  // A past commit older than the newest 300, or the oldest of a full window: the slider's
  // window then ends there, so stepping on reaches the whole history.
  const i = header.atCommit ? header.log.findIndex((c) => c.hash === header.atCommit.hash) : -1;
  if (header.atCommit && (i < 0 || (i === 0 && header.log.length === 300))) {
    const w = await api('/api/log', { rev: header.atCommit.hash, limit: 300 });
    if (w.ok) { header.log = w.data.commits.slice().reverse(); header.windowed = true; }
  } else header.windowed = false;
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
  let pos = log.length - 1;
  if (header.atCommit) {
    const i = log.findIndex((c) => c.hash === header.atCommit.hash);
    if (i >= 0) pos = i;
  }
  slider.value = String(pos);
  slider.disabled = log.length < 2;
  labelSlider(pos);
  drawBanner();
}

/** The tip of what the header shows: the newest commit of the picked branch (or HEAD). */
function tip() {
  return header.windowed ? null : header.log[header.log.length - 1];
}

function drawBanner() {
  const banner = document.getElementById('past-banner');
  const at = header.at;
  const c = header.atCommit;
  const latest = tip();
  if (!at || (c && latest && c.hash === latest.hash)) {
    banner.hidden = true;
    banner.replaceChildren();
    document.body.classList.remove('in-past');
    return;
  }
  const on = pickedBranch() || header.branches.current || 'HEAD';
  const what = c
    ? [`Showing the past: ${at} is commit `, commitLink(c.hash), ` of ${c.date.slice(0, 16).replace('T', ' ')} (${c.message.split('\n')[0]}), not the latest of ${on}.`]
    : [`Revision ${at} is unknown: ${(header.atError && header.atError.data.error) || 'not found'}.`];
  banner.replaceChildren(h('strong', {}, 'Past. '), ...what, ' ',
    h('button', { type: 'button', id: 'past-latest', onclick: () => document.getElementById('rev-latest').click() }, 'Back to the latest'));
  banner.hidden = false;
  document.body.classList.add('in-past');
}

function labelSlider(pos) {
  const c = header.log[pos];
  const label = document.getElementById('time-label');
  const slider = document.getElementById('time-slider');
  if (!c) { label.textContent = ''; return; }
  const text = `${c.short_hash} ${c.date.slice(0, 16).replace('T', ' ')} ${c.message.split('\n')[0]}`;
  const latest = tip();
  label.textContent = (latest && c.hash === latest.hash ? 'latest: ' : '') + text;
  slider.setAttribute('aria-valuetext', text);
}

/** Re-reads the header when the shown branch moved (a write from the command line). */
async function watchTip() {
  if (document.visibilityState !== 'visible' || !header.log) return;
  const rev = route().params.get('rev') || 'HEAD';
  const r = await api('/api/log', { rev, limit: 1 });
  const newest = r.ok && r.data.commits[0];
  const known = header.log[header.log.length - 1];
  if (!newest || header.windowed || (known && newest.hash === known.hash)) return;
  await loadHeader();
  drawHeader();
  announce(`New commit on ${rev}: ${newest.message.split('\n')[0]}`);
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
    const latest = tip();
    if (latest && pos >= header.log.length - 1) r.params.delete('at');
    else r.params.set('at', header.log[pos].hash);
    location.hash = '#/' + r.view + '?' + r.params.toString();
  });
  setInterval(() => { watchTip().catch(() => {}); }, 3000);
}

/** Says `text` in the page's one live region (screen readers read it once). */
export function announce(text) {
  const el = document.getElementById('announce');
  el.textContent = '';
  setTimeout(() => { el.textContent = text; }, 30);
}

// ---- router ----

const routes = {
  tree: treeView,
  memory: views.memoryView,
  history: history.historyView,
  commit: history.commitView,
  compare: history.compareView,
  branches: views.branchesView,
  agents: views.agentsView,
  timeline: graph.timelineView,
  graph: graph.graphView,
  watch: graph.watchView,
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
    // The header first: views need its branches (where writes go, the branch pickers).
    await loadHeader();
    if (turn === rendering) drawHeader();
    await fn(section, params);
    if (turn === rendering) {
      main.replaceChildren(section);
      const title = section.querySelector('h2');
      const name = title ? title.textContent : view;
      document.title = `${name} · ${document.body.dataset.storeName} · memoir`;
      // Focus follows the navigation, unless it came from the header's controls.
      if (!document.activeElement || !document.activeElement.closest('.top, #past-banner')) {
        if (title) { title.tabIndex = -1; title.focus({ preventScroll: true }); } else main.focus();
      }
      announce(`${name} loaded`);
    }
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
