// Pieces shared by the pages.

import {
  addRows, badge, button, busy, emptyState, errorBox, h, link, loading, replace, show, table,
} from '../dom.js';

export function pageHeader(title, { subtitle, actions, back } = {}) {
  return h('header', { class: 'page-header' },
    back ? h('a', { class: 'back', href: back[0] }, `\u2190 ${back[1]}`) : null,
    h('div', { class: 'page-title' },
      h('div', null,
        h('h1', { tabindex: '-1' }, title),
        subtitle ? h('p', { class: 'subtitle' }, subtitle) : null),
      actions && actions.length ? h('div', { class: 'toolbar' }, actions) : null));
}

export function card(title, ...children) {
  return h('section', { class: 'card' },
    title ? h('h2', null, title) : null,
    children);
}

// A list with "Load more": `load(cursor)` resolves to {data, next_cursor}.
export function pagedTable(ctx, { load, columns, empty, label }) {
  const root = h('div', { class: 'paged' }, loading());
  let tbody = null;
  const more = h('div', { class: 'load-more' });

  const showPage = async (cursor) => {
    let page;
    try {
      page = await load(cursor);
    } catch (err) {
      if (!ctx.alive() || err.name === 'AbortError') return;
      const box = errorBox(err, cursor ? 'Could not load more' : 'Could not load the list');
      if (cursor) replace(more, box, button('Try again', () => showPage(cursor)));
      else replace(root, box, button('Try again', () => { replace(root, loading()); showPage(null); }));
      return;
    }
    if (!ctx.alive()) return;
    const rows = Array.isArray(page.data) ? page.data : [];
    if (!tbody) {
      if (!rows.length) {
        replace(root, emptyState(empty[0], empty[1]));
        return;
      }
      const t = table(columns, [], label ? { 'aria-label': label } : {});
      tbody = t.querySelector('tbody');
      replace(root, t, more);
    }
    addRows(tbody, columns, rows);
    if (page.next_cursor) {
      const btn = button('Load more', () => busy(btn, () => showPage(page.next_cursor)),
        { class: 'btn-secondary' });
      replace(more, btn);
    } else {
      replace(more);
    }
  };
  showPage(null);
  return root;
}

export function idLink(kind, id) {
  if (!id) return show(id);
  return link(`#/${kind}/${encodeURIComponent(id)}`, id, { class: 'mono' });
}

export function statusCode(code) {
  if (code === null || code === undefined) return h('span', { class: 'muted' }, '\u2014');
  const ok = code >= 200 && code < 300;
  return h('span', { class: ['http-code', ok ? 'http-code-ok' : 'http-code-bad'] }, String(code));
}

// The latest attempt's answer: its status code and its error (DNS, connection, TLS,
// timeout...), so a failure reads from the list without opening the delivery.
export function lastAnswer(x) {
  if (!x || ((x.last_status_code === null || x.last_status_code === undefined) && !x.last_error)) {
    return h('span', { class: 'muted' }, '\u2014');
  }
  return h('span', { class: 'last-answer' },
    x.last_status_code === null || x.last_status_code === undefined ? null : statusCode(x.last_status_code),
    x.last_error ? h('span', { class: 'last-error small' }, x.last_error) : null);
}

export function circuitBadge(health) {
  if (!health || typeof health !== 'object' || !health.circuit) {
    return h('span', { class: 'muted' }, '\u2014');
  }
  return badge(health.circuit);
}

export function enabledBadge(d) {
  if (d.enabled === false) {
    return h('span', null, badge('disabled'),
      d.disabled_reason ? h('span', { class: 'reason' }, ` ${d.disabled_reason}`) : null);
  }
  return badge('enabled');
}

// The filters of a list page, kept in the address so back/forward and links work.
export function filterForm(ctx, basePath, fields) {
  const inputs = {};
  const controls = fields.map((f) => {
    const id = `filter-${f.name}`;
    let input;
    if (f.options) {
      input = h('select', { id, name: f.name },
        f.options.map(([value, text]) => h('option', { value }, text)));
      input.value = f.value(ctx.query.get(f.name) || '');
    } else {
      input = h('input', {
        id, name: f.name, type: f.type || 'text', placeholder: f.placeholder || null,
        autocomplete: 'off', spellcheck: 'false',
      });
      input.value = f.value ? f.value(ctx.query.get(f.name) || '') : (ctx.query.get(f.name) || '');
    }
    inputs[f.name] = input;
    return h('div', { class: 'field' }, h('label', { for: id }, f.label), input);
  });
  const active = fields.some((f) => ctx.query.get(f.name));
  const form = h('form', { class: 'filters', role: 'search' },
    controls,
    h('div', { class: 'field field-actions' },
      h('button', { type: 'submit', class: 'btn-primary' }, 'Apply'),
      active ? h('a', { class: 'btn btn-ghost', href: `#${basePath}` }, 'Clear') : null));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const f of fields) {
      // `exact` fields (a subject, compared byte for byte) keep their spaces.
      const raw = f.exact ? inputs[f.name].value : inputs[f.name].value.trim();
      const value = f.toQuery ? f.toQuery(raw) : raw;
      if (value) params.set(f.name, value);
    }
    const qs = params.toString();
    ctx.navigate(`#${basePath}${qs ? `?${qs}` : ''}`);
  });
  return form;
}

// Query parameters for the API from the page's own filter parameters.
export function queryOf(ctx, names) {
  const out = {};
  for (const n of names) {
    const v = ctx.query.get(n);
    if (v) out[n] = v;
  }
  return out;
}
