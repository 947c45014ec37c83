// Small DOM helpers. Text always goes in as text nodes: nothing here parses HTML, so
// whatever the API returns is shown, never run.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(parent, c);
  } else if (child instanceof Node) {
    parent.appendChild(child);
  } else {
    parent.appendChild(document.createTextNode(String(child)));
  }
}

function build(el, attrs, children) {
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith('on') && typeof value === 'function') {
        el.addEventListener(name.slice(2), value);
      } else if (name === 'class') {
        el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
      } else if (name === 'dataset') {
        Object.assign(el.dataset, value);
      } else if (name === 'value' || name === 'checked') {
        el[name] = value;
      } else {
        el.setAttribute(name, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

// h('a', {href: '#/x', class: 'link'}, 'text', child, ...)
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function replace(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

export const DASH = '\u2014';

// A value for display: null, undefined and '' become a dash.
export function show(value) {
  if (value === null || value === undefined || value === '') return DASH;
  return String(value);
}

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric',
  hour: '2-digit', minute: '2-digit', second: '2-digit',
});
const clockTime = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

export function formatLocal(date) {
  return dateTime.format(date);
}

export function formatClock(date) {
  return clockTime.format(date);
}

// A time from the API, shown in the browser's zone with the UTC value on hover.
export function time(iso) {
  if (typeof iso !== 'string' || !iso) return h('span', { class: 'muted' }, DASH);
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h('span', null, iso);
  return h('time', { datetime: iso, title: `${date.toISOString()} (UTC)` }, formatLocal(date));
}

// "YYYY-MM-DDTHH:MM" from a datetime-local input, read as local time, to RFC 3339 UTC.
export function localInputToRfc3339(value) {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// The inverse, for putting a filter back into its input.
export function rfc3339ToLocalInput(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

const BADGE_KINDS = {
  succeeded: 'ok', success: 'ok', closed: 'ok', enabled: 'ok',
  pending: 'info', in_flight: 'info', half_open: 'warn', retryable: 'warn',
  skipped: 'muted', cancelled: 'muted', replayed: 'muted',
  dead_lettered: 'bad', permanent: 'bad', open: 'bad', disabled: 'bad',
  exhausted: 'bad', permanent_failure: 'bad',
};

export function badge(text, kind) {
  const label = show(text);
  return h('span', { class: ['badge', `badge-${kind || BADGE_KINDS[text] || 'muted'}`] },
    label.replaceAll('_', ' '));
}

export function link(href, text, attrs = {}) {
  return h('a', { href, ...attrs }, text);
}

export function button(label, onclick, attrs = {}) {
  return h('button', { type: 'button', onclick, ...attrs }, label);
}

// Runs `action` with the button disabled and marked busy, so a double click sends once.
export async function busy(btn, action) {
  if (btn.disabled) return undefined;
  btn.disabled = true;
  btn.setAttribute('aria-busy', 'true');
  try {
    return await action();
  } finally {
    btn.disabled = false;
    btn.removeAttribute('aria-busy');
  }
}

// A definition list from [label, value] pairs.
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([label, value]) => [
    h('dt', null, label),
    h('dd', null, value instanceof Node ? value : show(value)),
  ]));
}

export function errorBox(err, prefix) {
  const message = err && err.message ? err.message : String(err);
  return h('div', { class: 'alert alert-error', role: 'alert' },
    prefix ? h('strong', null, `${prefix}: `) : null, message);
}

export function emptyState(title, text) {
  return h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title),
    text ? h('p', null, text) : null);
}

export function loading(text = 'Loading\u2026') {
  return h('p', { class: 'loading', role: 'status' }, text);
}

// A table: columns are {label, cell(row) -> node|string, class?}.
export function table(columns, rows, attrs = {}) {
  const head = h('thead', null, h('tr', null,
    columns.map((c) => h('th', { scope: 'col', class: c.class }, c.label))));
  const body = h('tbody');
  addRows(body, columns, rows);
  return h('div', { class: 'table-wrap' }, h('table', { class: 'table', ...attrs }, head, body));
}

export function addRows(tbody, columns, rows) {
  for (const row of rows) {
    tbody.appendChild(h('tr', null, columns.map((c) => {
      const value = c.cell(row);
      return h('td', { class: c.class, 'data-label': c.label },
        value instanceof Node ? value : show(value));
    })));
  }
}

// Announcements for screen readers and a visible toast for a few seconds.
let toastTimer = 0;
let toastAt = 0;
export function toast(message, kind = 'ok') {
  const region = document.getElementById('toast');
  if (!region) return;
  replace(region, h('div', { class: ['toast', `toast-${kind}`] }, message));
  toastAt = Date.now();
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => clear(region), 5000);
}

// On navigation: a toast about the page being left goes; one that led here stays.
export function dropStaleToast() {
  const region = document.getElementById('toast');
  if (region && Date.now() - toastAt > 1500) clear(region);
}

// A modal <dialog>; resolves to the value given to close(), or null when dismissed.
export function modal(title, buildBody) {
  return new Promise((resolve) => {
    let result = null;
    const dialog = h('dialog', { class: 'modal', 'aria-labelledby': 'modal-title' });
    const close = (value) => {
      result = value;
      dialog.close();
    };
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(result);
    });
    dialog.append(h('h2', { id: 'modal-title' }, title), buildBody(close));
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}

export function confirmDialog({ title, message, confirmLabel = 'Confirm', danger = false }) {
  return modal(title, (close) => {
    const ok = button(confirmLabel, () => close(true), { class: danger ? 'btn-danger' : 'btn-primary' });
    const body = h('div', null,
      h('p', null, message),
      h('div', { class: 'actions' }, button('Cancel', () => close(false)), ok));
    queueMicrotask(() => ok.focus());
    return body;
  }).then((v) => v === true);
}

export function copyButton(getText, label = 'Copy') {
  const btn = button(label, async () => {
    try {
      await navigator.clipboard.writeText(getText());
      toast('Copied to the clipboard');
    } catch {
      toast('The browser did not allow copying; select the text instead', 'warn');
    }
  }, { class: 'btn-small' });
  return btn;
}
