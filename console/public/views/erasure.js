// Erasing a subject from the Events page: count the events naming it, confirm with the
// subject typed again, ask for the erasure, follow it until it is done.

import * as api from '../api.js';
import { busy, button, errorBox, h, loading, modal, replace } from '../dom.js';

const COUNT_PAGE = 100;
const COUNT_PAGES = 10; // counts up to 1,000 before saying "at least"
const POLL_EVERY_MS = 250;
const POLL_FOR_MS = 30000; // the server usually finishes within milliseconds

const plural = (n, one, many) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

// Who an erasure reaches: a tenant key's stays in its tenant whatever is sent (the
// server sees to it); an admin's or a publisher's is the tenant the list is filtered
// to, else every tenant.
function scopeOf(ctx, query) {
  if (ctx.role === 'tenant') return { tenantId: undefined, words: 'within your tenant' };
  if (query.tenant_id) {
    return { tenantId: query.tenant_id, words: `within tenant "${query.tenant_id}" only` };
  }
  return { tenantId: undefined, words: 'across every tenant' };
}

// The erasure takes every event naming the subject in its reach, whatever the list's
// other filters (type, times): so those are left out of the count.
async function countEvents(ctx, subject, tenantId, progress) {
  let cursor = null;
  let count = 0;
  for (let page = 0; page < COUNT_PAGES; page++) {
    const body = await api.get('/v1/events',
      { subject, tenant_id: tenantId, cursor, limit: COUNT_PAGE }, { signal: ctx.signal });
    const rows = Array.isArray(body.data) ? body.data : [];
    count += rows.length;
    progress(count);
    if (!body.next_cursor || !rows.length) return { count, complete: true };
    cursor = body.next_cursor;
  }
  return { count, complete: false };
}

// Resolves to true only when the user typed the subject again and pressed Erase.
function confirmErasure(subject, counted, scope, narrowed) {
  const events = counted.complete
    ? plural(counted.count, 'event', 'events')
    : `at least ${plural(counted.count, 'event', 'events')}`;
  const payloads = counted.complete && counted.count === 1 ? 'the payload' : 'the payloads';
  return modal(`Erase everything about "${subject}"?`, (close) => {
    const typed = h('input', {
      id: 'erase-confirm-subject', name: 'subject', autocomplete: 'off', spellcheck: 'false',
      'aria-describedby': 'erase-confirm-help',
    });
    const ok = h('button', { type: 'submit', class: 'btn-danger', disabled: true }, 'Erase');
    typed.addEventListener('input', () => {
      ok.disabled = typed.value !== subject;
    });
    const form = h('form', { id: 'erase-confirm' },
      h('p', { id: 'erase-confirm-message' },
        `This erases ${payloads} of ${events}, the receivers' answers stored with them, ` +
        'and cancels their unfinished deliveries. It cannot be undone.'),
      h('p', { id: 'erase-confirm-scope' },
        `The erasure applies ${scope.words}` +
        `${narrowed ? ', whatever the list\u2019s other filters' : ''}; ` +
        'events published after it are not touched.'),
      h('div', { class: 'field' },
        h('label', { for: 'erase-confirm-subject' }, 'Type the subject to confirm'),
        typed,
        h('p', { id: 'erase-confirm-help', class: 'hint' }, 'Exactly as searched, character for character.')),
      h('div', { class: 'actions' }, button('Cancel', () => close(false)), ok));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (typed.value === subject) close(true);
    });
    queueMicrotask(() => typed.focus());
    return form;
  }).then((v) => v === true);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls the erasure until it is done, for POLL_FOR_MS at most; null if it is not by then.
async function followErasure(ctx, id) {
  const end = Date.now() + POLL_FOR_MS;
  for (;;) {
    const erasure = await api.get(api.path`/v1/erasures/${id}`, undefined, { signal: ctx.signal });
    if (erasure && erasure.status === 'done') return erasure;
    if (Date.now() >= end || !ctx.alive()) return null;
    await sleep(POLL_EVERY_MS);
  }
}

function resultText(erasure) {
  const events = typeof erasure.events === 'number' ? erasure.events : 0;
  const cancelled = typeof erasure.cancelled_deliveries === 'number' ? erasure.cancelled_deliveries : 0;
  return `Erased ${plural(events, 'event', 'events')}; ` +
    `cancelled ${plural(cancelled, 'delivery', 'deliveries')}.`;
}

// The "Erase everything about this subject" button of a list searched by subject.
// `notices` shows the progress and the result; `done()` reloads the list.
export function eraseSubjectButton(ctx, query, notices, done) {
  const subject = query.subject;
  const scope = scopeOf(ctx, query);
  const narrowed = ['type', 'after', 'before'].some((name) => query[name]);
  const btn = button('Erase everything about this subject', () => busy(btn, async () => {
    replace(notices, loading('Counting the events naming this subject\u2026'));
    let counted;
    try {
      counted = await countEvents(ctx, subject, scope.tenantId, (n) => {
        replace(notices, loading(`Counting\u2026 ${n.toLocaleString('en-US')} so far`));
      });
    } catch (err) {
      if (err.name !== 'AbortError' && ctx.alive()) replace(notices, errorBox(err, 'Could not count them'));
      return;
    }
    if (!ctx.alive()) return;
    replace(notices);
    if (counted.count === 0) {
      replace(notices, h('div', { class: 'alert alert-info', id: 'erase-result' },
        'Nothing to erase: no event names this subject.'));
      return;
    }
    if (!await confirmErasure(subject, counted, scope, narrowed) || !ctx.alive()) return;
    try {
      const body = { subject };
      if (scope.tenantId) body.tenant_id = scope.tenantId;
      const started = await api.post('/v1/subjects/erase', body, { signal: ctx.signal });
      replace(notices, loading('Erasing\u2026'));
      const erasure = await followErasure(ctx, started.id);
      if (!ctx.alive()) return;
      if (!erasure) {
        replace(notices, h('div', { class: 'alert alert-info', id: 'erase-result' },
          `The erasure ${started.id} is still running; it finishes in the background.`));
        return;
      }
      replace(notices, h('div', { class: 'alert alert-ok', id: 'erase-result' }, resultText(erasure)));
      done();
    } catch (err) {
      if (err.name !== 'AbortError' && ctx.alive()) replace(notices, errorBox(err, 'The erasure failed'));
    }
  }), { class: 'btn-danger', id: 'erase-subject' });
  return btn;
}
