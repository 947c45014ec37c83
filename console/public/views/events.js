// Events: the filtered list, and one event with its payload and deliveries.

import * as api from '../api.js';
import {
  badge, button, copyButton, emptyState, errorBox, facts, h, loading, localInputToRfc3339,
  replace, rfc3339ToLocalInput, show, table, time,
} from '../dom.js';
import { indent, rawMember } from '../json_text.js';
import {
  card, filterForm, idLink, lastAnswer, pageHeader, pagedTable, queryOf,
} from './common.js';
import { eraseSubjectButton } from './erasure.js';

const timeFilter = {
  type: 'datetime-local',
  value: rfc3339ToLocalInput,
  toQuery: localInputToRfc3339,
};

export function renderList(ctx) {
  const fields = [
    { name: 'subject', label: 'Subject', placeholder: 'user:42', exact: true },
    { name: 'type', label: 'Type', placeholder: 'order.created' },
    ctx.role === 'tenant' ? null : { name: 'tenant_id', label: 'Tenant', placeholder: 'any tenant' },
    { name: 'after', label: 'After', ...timeFilter },
    { name: 'before', label: 'Before', ...timeFilter },
  ].filter(Boolean);
  const query = queryOf(ctx, fields.map((f) => f.name));
  const filtered = Object.keys(query).length > 0;
  const listHolder = h('div');
  const notices = h('div', { 'aria-live': 'polite' });
  let empty = ['No events yet', 'Events appear here once a producer publishes one.'];
  if (query.subject) empty = ['No events name this subject', 'None was published with it, or it was erased.'];
  else if (filtered) empty = ['No events match', 'Try a wider time range or another type.'];

  const showList = () => replace(listHolder, pagedTable(ctx, {
    label: 'Events',
    columns: [
      { label: 'Event', cell: (e) => idLink('events', e.id) },
      { label: 'Type', cell: (e) => h('span', { class: 'mono' }, show(e.type)) },
      ctx.role === 'tenant' ? null : { label: 'Tenant', cell: (e) => show(e.tenant_id) },
      { label: 'Created', cell: (e) => time(e.created_at) },
    ].filter(Boolean),
    empty,
    load: (cursor) => api.get('/v1/events', { ...query, cursor, limit: 50 }, { signal: ctx.signal }),
  }));

  showList();
  return h('section', null,
    pageHeader('Events', {
      subtitle: 'What producers published, newest first. Times are in your time zone.',
      actions: query.subject ? [eraseSubjectButton(ctx, query, notices, showList)] : [],
    }),
    filterForm(ctx, '/events', fields),
    notices,
    listHolder);
}

export function renderDetail(ctx) {
  const id = ctx.params.id;
  const root = h('section', null, loading());
  api.request('GET', api.path`/v1/events/${id}`, { signal: ctx.signal }).then(({ text, json }) => {
    if (ctx.alive()) replace(root, ...detailBody(json, text));
  }, (err) => {
    if (!ctx.alive() || err.name === 'AbortError') return;
    replace(root, pageHeader('Event', { back: ['#/events', 'Events'] }),
      errorBox(err, err.status === 404 ? 'Not found' : 'Could not load the event'));
  });
  return root;
}

function payloadView(text) {
  // The payload exactly as the server sent it: numbers keep every digit.
  let raw = null;
  try {
    raw = rawMember(text, 'payload');
  } catch {
    raw = null;
  }
  if (raw === null) return emptyState('No payload', 'The server sent no payload with this event.');
  let indented = null;
  try {
    indented = indent(raw);
  } catch {
    indented = null;
  }
  const pre = h('pre', { class: 'code', id: 'payload', tabindex: '0' }, raw);
  let asSent = true;
  const toggle = indented === null || indented === raw ? null : button('Indent', () => {
    asSent = !asSent;
    replace(pre, asSent ? raw : indented);
    replace(toggle, asSent ? 'Indent' : 'Show as received');
    toggle.setAttribute('aria-pressed', String(!asSent));
  }, { class: 'btn-small', 'aria-pressed': 'false' });
  return h('div', null,
    h('div', { class: 'card-tools' },
      h('span', { class: 'muted small' }, 'As received; indenting changes only the spaces.'),
      h('div', { class: 'toolbar' }, toggle, copyButton(() => (asSent ? raw : indented)))),
    pre);
}

// Who the event is about, each subject as text (a subject is any string a producer sent).
function subjectsView(subjects) {
  const list = Array.isArray(subjects) ? subjects.filter((s) => typeof s === 'string') : [];
  if (!list.length) return show(null);
  return h('ul', { class: 'subjects', id: 'event-subjects' },
    list.map((s) => h('li', { class: 'mono' }, s)));
}

function detailBody(e, text) {
  const deliveries = Array.isArray(e.deliveries) ? e.deliveries : [];
  const deliveryColumns = [
    { label: 'Delivery', cell: (d) => idLink('deliveries', d.id) },
    { label: 'Destination', cell: (d) => idLink('destinations', d.destination_id) },
    { label: 'Status', cell: (d) => badge(d.status) },
    { label: 'Attempts', class: 'num', cell: (d) => show(d.attempt_count) },
    { label: 'Last answer', cell: (d) => lastAnswer(d) },
    { label: 'Next attempt', cell: (d) => time(d.next_attempt_at) },
  ];
  return [
    pageHeader(show(e.type), { subtitle: h('span', { class: 'mono' }, show(e.id)), back: ['#/events', 'Events'] }),
    card('Event', facts([
      ['ID', h('span', { class: 'mono' }, show(e.id))],
      ['Type', h('span', { class: 'mono' }, show(e.type))],
      ['Tenant', show(e.tenant_id)],
      ['Created', time(e.created_at)],
      ['Subjects', subjectsView(e.subjects)],
      e.source ? ['Source', h('span', null,
        h('a', { href: `#/sources/${encodeURIComponent(e.source.id)}`, class: 'mono', id: 'event-source' }, e.source.id),
        ` (${show(e.source.provider)}, duplicate key `,
        h('span', { class: 'mono' }, show(e.source.dedupe_key)), ')')] : null,
      e.erased_at ? ['Erased', time(e.erased_at)] : null,
    ].filter(Boolean))),
    card('Payload', e.erased_at
      ? h('p', { class: 'erased', id: 'payload-erased' }, 'Payload erased at ', time(e.erased_at))
      : payloadView(text)),
    card('Deliveries', deliveries.length
      ? table(deliveryColumns, deliveries, { 'aria-label': 'Deliveries of this event' })
      : emptyState('No deliveries', 'No enabled destination subscribed to this event when it arrived.')),
  ];
}
