// memoir ui: the tree view. The taxonomy level by level with exact counts and previews of
// the memories; a whole row opens its folder; levels page past 1,000 children; the folders
// opened stay open on Back and at each step of the time slider (kept per namespace in the
// tab's session storage).

import { h, put, api, failure, go, link, readAt, num } from './app.js';

const PAGE = 1000;

function openKey(ns) {
  return `memoir.open.${ns}`;
}

/** The folders kept open in namespace `ns`, parents before children. */
function keptOpen(ns) {
  try { return JSON.parse(sessionStorage.getItem(openKey(ns)) || '[]'); } catch { return []; }
}

function keep(ns, path, open) {
  const set = new Set(keptOpen(ns));
  if (open) set.add(path);
  else for (const p of [...set]) if (p === path || p.startsWith(path + '.')) set.delete(p);
  const list = [...set].sort((a, b) => a.split('.').length - b.split('.').length);
  sessionStorage.setItem(openKey(ns), JSON.stringify(list));
}

export async function treeView(main, p) {
  const ns = p.get('ns') || '';
  const keys = p.get('keys') || '';
  const at = readAt();
  const res = await api('/api/tree', { ns, keys, at, previews: 1 });
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
  const ctx = { ns: t.namespace, keys, at };
  const tree = h('ul', { class: 'tree', role: 'tree', id: 'tree', 'aria-label': `Keys of ${t.namespace}` });
  fill(tree, ctx, t, '', 1);
  tree.addEventListener('keydown', treeKeys);
  // Folders opened before (Back, a slider step) open again, parents first.
  for (const path of keptOpen(t.namespace)) {
    const li = tree.querySelector(`[role="treeitem"][data-path="${CSS.escape(path)}"]`);
    if (li && li.getAttribute('aria-expanded') === 'false') await expand(li, ctx, true);
  }
  const first = tree.querySelector('[role="treeitem"]');
  if (first) first.tabIndex = 0;
  put(main, h('h2', { text: 'Tree' }), form, t.children.length ? tree : h('p', { class: 'muted' }, 'No memories here.'));
}

/** Appends a level's children to `list`, and a button for the next page when there is one. */
function fill(list, ctx, level, prefix, depth) {
  for (const c of level.children) list.append(treeItem(ctx, c, depth));
  if (level.omitted) {
    const offset = level.offset + level.children.length;
    // A tree item of its own (a button inside an item would nest controls): click or Enter.
    const more = h('li', { class: 'more', role: 'treeitem', tabindex: '-1', 'aria-level': depth, 'data-more': prefix,
      onclick: async () => {
        if (more.dataset.busy) return;
        more.dataset.busy = '1';
        const r = await api('/api/tree', { ns: ctx.ns, prefix, keys: ctx.keys, at: ctx.at, offset, limit: PAGE, previews: 1 });
        if (!r.ok) { more.replaceChildren(failure(r)); return; }
        more.remove();
        fill(list, ctx, r.data, prefix, depth);
      } }, h('span', { class: 'row page-more' }, `Show the next ${num(Math.min(PAGE, level.omitted))} (${num(level.omitted)} more)`));
    list.append(more);
  }
}

function treeItem(ctx, c, level) {
  const li = h('li', { role: 'treeitem', 'data-path': c.path, 'aria-level': level, tabindex: '-1',
    'aria-expanded': c.has_children ? 'false' : null });
  const toggle = c.has_children
    ? h('span', { class: 'toggle', 'aria-hidden': 'true' }, '▸')
    : h('span', { class: 'spacer' });
  const name = c.has_record
    ? link('memory', { ns: ctx.ns, key: c.path }, c.name, { tabindex: '-1', class: 'open' })
    : h('span', { class: 'name' }, c.name);
  const row = h('div', { class: 'row' + (c.has_children ? ' folder' : '') }, toggle, name,
    h('span', { class: 'badge count', title: 'memories at or below' }, num(c.count)),
    c.preview ? h('span', { class: 'preview' }, c.preview) : null);
  // The whole row opens (or closes) a folder; the name of a memory opens the memory.
  if (c.has_children) {
    row.addEventListener('click', (e) => {
      if (e.target.closest('a')) return;
      toggleItem(li, ctx);
    });
  }
  li.append(row);
  li.dataset.count = String(c.count);
  return li;
}

async function expand(li, ctx, quiet) {
  const level = Number(li.getAttribute('aria-level'));
  const path = li.dataset.path;
  let group = li.querySelector(':scope > ul');
  if (!group) {
    const res = await api('/api/tree', { ns: ctx.ns, prefix: path, keys: ctx.keys, at: ctx.at, previews: 1 });
    if (!res.ok) { li.append(failure(res)); return; }
    group = h('ul', { role: 'group' });
    fill(group, ctx, res.data, path, level + 1);
    li.append(group);
  }
  group.hidden = false;
  li.setAttribute('aria-expanded', 'true');
  li.querySelector(':scope > .row > .toggle').textContent = '▾';
  if (!quiet) keep(ctx.ns, path, true);
}

async function toggleItem(li, ctx) {
  if (li.getAttribute('aria-expanded') !== 'true') return expand(li, ctx, false);
  li.setAttribute('aria-expanded', 'false');
  li.querySelector(':scope > .row > .toggle').textContent = '▸';
  const group = li.querySelector(':scope > ul');
  if (group) group.hidden = true;
  keep(ctx.ns, li.dataset.path, false);
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
  const row = li.querySelector(':scope > .row');
  switch (e.key) {
    case 'ArrowDown': focus(items[i + 1]); break;
    case 'ArrowUp': focus(items[i - 1]); break;
    case 'Home': focus(items[0]); break;
    case 'End': focus(items[items.length - 1]); break;
    case 'ArrowRight':
      if (expanded === 'false') row.click();
      else if (expanded === 'true') focus(li.querySelector('[role="treeitem"]'));
      break;
    case 'ArrowLeft':
      if (expanded === 'true') row.click();
      else focus(li.parentElement.closest('[role="treeitem"]'));
      break;
    case 'Enter': {
      if (li.classList.contains('more')) { li.click(); break; }
      const open = li.querySelector(':scope > .row > a.open');
      if (open) open.click(); else if (expanded) row.click();
      break;
    }
    default: return;
  }
  e.preventDefault();
}
