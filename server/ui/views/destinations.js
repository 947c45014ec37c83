// Destinations: the list with health at a glance, one destination with its actions,
// and the create/edit form.

import * as api from '../api.js';
import {
  badge, busy, button, confirmDialog, copyButton, errorBox, facts, h, loading, modal, replace,
  show, time, toast,
} from '../dom.js';
import {
  card, circuitBadge, enabledBadge, filterForm, idLink, pageHeader, pagedTable, queryOf,
  statusCode,
} from './common.js';

// The secret of a destination just created, shown once on its page (memory only).
let createdSecret = null;

function capText(d) {
  const effective = d.health && typeof d.health === 'object' ? d.health.effective_max_in_flight : null;
  if (effective === null || effective === undefined) return show(d.max_in_flight);
  if (d.max_in_flight === undefined || d.max_in_flight === null) return show(effective);
  return `${effective} / ${d.max_in_flight}`;
}

function failingSince(d) {
  return time(d.health && typeof d.health === 'object' ? d.health.failing_since : null);
}

function destinationLabel(d) {
  return d.description ? d.description : d.url;
}

export function renderList(ctx) {
  const filters = ctx.role === 'tenant' ? null : filterForm(ctx, '/destinations', [
    { name: 'tenant_id', label: 'Tenant', placeholder: 'any tenant' },
  ]);
  const query = queryOf(ctx, ['tenant_id']);
  const columns = [
    {
      label: 'Destination',
      class: 'col-main',
      cell: (d) => h('div', null,
        h('a', { href: `#/destinations/${encodeURIComponent(d.id)}`, class: 'strong' }, show(destinationLabel(d))),
        h('div', { class: 'muted mono small truncate', title: show(d.url) }, show(d.url))),
    },
    ctx.role === 'tenant' ? null : { label: 'Tenant', cell: (d) => show(d.tenant_id) },
    { label: 'Status', cell: (d) => enabledBadge(d) },
    { label: 'Circuit', cell: (d) => circuitBadge(d.health) },
    { label: 'Failing since', cell: (d) => failingSince(d) },
    { label: 'In flight cap', class: 'num', cell: (d) => capText(d) },
  ].filter(Boolean);
  return h('section', null,
    pageHeader('Destinations', {
      subtitle: 'The endpoints webhooks are delivered to.',
      actions: [h('a', { class: 'btn btn-primary', href: '#/destinations/new' }, 'New destination')],
    }),
    filters,
    pagedTable(ctx, {
      label: 'Destinations',
      columns,
      empty: ['No destinations yet', query.tenant_id
        ? 'No destination belongs to this tenant.'
        : 'Create one to start receiving webhooks.'],
      load: (cursor) => api.get('/v1/destinations', { ...query, cursor, limit: 50 }, { signal: ctx.signal }),
    }));
}

export function renderDetail(ctx) {
  const id = ctx.params.id;
  const root = h('section', null, loading());
  const notices = h('div', { class: 'notices', 'aria-live': 'polite' });

  const load = async () => {
    let d;
    try {
      d = await api.get(api.path`/v1/destinations/${id}`, undefined, { signal: ctx.signal });
    } catch (err) {
      if (!ctx.alive() || err.name === 'AbortError') return;
      replace(root, pageHeader('Destination', { back: ['#/destinations', 'Destinations'] }),
        errorBox(err, err.status === 404 ? 'Not found' : 'Could not load the destination'));
      return;
    }
    if (!ctx.alive()) return;
    replace(root, ...detailBody(ctx, d, notices, load));
  };
  load();
  return root;
}

function detailBody(ctx, d, notices, reload) {
  const id = d.id;
  const actions = [
    h('a', { class: 'btn', href: `#/destinations/${encodeURIComponent(id)}/edit` }, 'Edit'),
  ];
  const toggle = button(d.enabled === false ? 'Enable' : 'Disable', () => busy(toggle, async () => {
    try {
      await api.patch(api.path`/v1/destinations/${id}`, { enabled: d.enabled === false },
        { signal: ctx.signal });
      toast(d.enabled === false ? 'Destination enabled' : 'Destination disabled');
      await reload();
    } catch (err) {
      if (err.name !== 'AbortError') replace(notices, errorBox(err, 'Could not change it'));
    }
  }), { id: 'toggle-enabled' });
  actions.push(toggle);
  if (ctx.role !== 'tenant') {
    const test = button('Send test event', () => busy(test, () => sendTest(ctx, d, notices)),
      { id: 'send-test' });
    actions.push(test);
  }
  actions.push(button('Rotate secret', () => rotateSecret(ctx, d, notices), { id: 'rotate-secret' }));
  const remove = button('Delete', () => deleteDestination(ctx, d), { class: 'btn-danger', id: 'delete' });
  actions.push(remove);

  const health = d.health && typeof d.health === 'object' ? d.health : null;
  const eventTypes = Array.isArray(d.event_types) && d.event_types.length
    ? h('ul', { class: 'chips' }, d.event_types.map((t) => h('li', { class: 'chip mono' }, t)))
    : h('span', { class: 'muted' }, 'every type');
  const headerEntries = d.headers && typeof d.headers === 'object' ? Object.entries(d.headers) : [];
  const headers = headerEntries.length
    ? h('ul', { class: 'plain mono small' }, headerEntries.map(([k, v]) => h('li', null, `${k}: ${v}`)))
    : h('span', { class: 'muted' }, 'none');

  const settings = card('Settings', facts([
    ['URL', h('span', { class: 'mono break' }, show(d.url))],
    ['Description', show(d.description)],
    ['Tenant', show(d.tenant_id)],
    ['Event types', eventTypes],
    ['Custom headers', headers],
    ['Max in flight', show(d.max_in_flight)],
    ['Rate limit', d.rate_limit === null || d.rate_limit === undefined ? show(null) : `${d.rate_limit} per second`],
    ['Created', time(d.created_at)],
    ['Updated', time(d.updated_at)],
  ]));
  const healthCard = card('Health', facts([
    ['Status', enabledBadge(d)],
    ['Disabled because', show(d.disabled_reason)],
    ['Circuit', circuitBadge(health)],
    ['Consecutive failures', show(health ? health.consecutive_failures : null)],
    ['Failing since', time(health ? health.failing_since : null)],
    ['Next probe', time(health ? health.next_probe_at : null)],
    ['Effective in flight cap', show(health ? health.effective_max_in_flight : null)],
  ]));

  const secretCard = card('Signing secret', secretPanel(ctx, id));

  const deliveries = card('Deliveries', pagedTable(ctx, {
    label: 'Deliveries of this destination',
    columns: [
      { label: 'Delivery', cell: (x) => idLink('deliveries', x.id) },
      { label: 'Event', cell: (x) => idLink('events', x.event_id) },
      { label: 'Status', cell: (x) => badge(x.status) },
      { label: 'Attempts', class: 'num', cell: (x) => show(x.attempt_count) },
      { label: 'Last code', class: 'num', cell: (x) => statusCode(x.last_status_code) },
      { label: 'Updated', cell: (x) => time(x.updated_at) },
    ],
    empty: ['No deliveries yet', 'Deliveries appear here once events reach this destination.'],
    load: (cursor) => api.get('/v1/deliveries', { destination_id: id, cursor, limit: 20 },
      { signal: ctx.signal }),
  }));

  return [
    pageHeader(show(destinationLabel(d)), {
      subtitle: h('span', { class: 'mono' }, id),
      back: ['#/destinations', 'Destinations'],
      actions,
    }),
    notices,
    h('div', { class: 'grid-2' }, settings, healthCard),
    secretCard,
    deliveries,
  ];
}

function secretPanel(ctx, id) {
  const panel = h('div', { class: 'secret' });
  const hidden = () => {
    const reveal = button('Reveal secret', () => busy(reveal, async () => {
      try {
        const body = await api.get(api.path`/v1/destinations/${id}/secret`, undefined,
          { signal: ctx.signal });
        if (ctx.alive()) shown(body && body.secret);
      } catch (err) {
        if (err.name !== 'AbortError') replace(panel, errorBox(err, 'Could not read the secret'), reveal);
      }
    }), { id: 'reveal-secret' });
    replace(panel,
      h('p', { class: 'muted' },
        'Receivers verify the webhook-signature header with this secret. It stays hidden until you ask, and is hidden again when you leave the page.'),
      h('div', { class: 'secret-row' }, h('code', { class: 'secret-value' }, '\u2022'.repeat(24)), reveal));
  };
  const shown = (secret, note) => {
    replace(panel,
      note ? h('div', { class: 'alert alert-info' }, note) : null,
      h('div', { class: 'secret-row' },
        h('code', { class: 'secret-value', id: 'secret-value' }, show(secret)),
        copyButton(() => secret || ''),
        button('Hide', hidden, { class: 'btn-small' })));
  };
  if (createdSecret && createdSecret.id === id) {
    shown(createdSecret.secret, 'This is the new destination\u2019s secret. Give it to the receiver; you can reveal it again later.');
    createdSecret = null;
  } else {
    hidden();
  }
  return panel;
}

async function deleteDestination(ctx, d) {
  const ok = await confirmDialog({
    title: 'Delete this destination?',
    message: `${destinationLabel(d)} will receive nothing more, and its unfinished deliveries are cancelled. This cannot be undone.`,
    confirmLabel: 'Delete destination',
    danger: true,
  });
  if (!ok) return;
  try {
    await api.del(api.path`/v1/destinations/${d.id}`, { signal: ctx.signal });
    toast('Destination deleted');
    ctx.navigate('#/destinations');
  } catch (err) {
    if (err.name !== 'AbortError') toast(`Could not delete it: ${err.message}`, 'error');
  }
}

async function rotateSecret(ctx, d, notices) {
  const result = await modal('Rotate the signing secret', (close) => {
    const grace = h('input', {
      id: 'grace-period', name: 'grace_period', value: '24h', autocomplete: 'off',
      'aria-describedby': 'grace-help', spellcheck: 'false',
    });
    const status = h('div', { 'aria-live': 'polite' });
    const submit = h('button', { type: 'submit', class: 'btn-primary' }, 'Rotate');
    const form = h('form', null,
      h('p', null, 'A new secret signs from now on. The current one keeps signing too during the grace period, so the receiver can switch without missing a delivery.'),
      h('div', { class: 'field' },
        h('label', { for: 'grace-period' }, 'Grace period for the current secret'),
        grace,
        h('p', { id: 'grace-help', class: 'hint' }, 'A duration like 30m, 24h or 7d (at most 7d); 0 ends the current secret now.')),
      status,
      h('div', { class: 'actions' },
        button('Cancel', () => close(null)),
        submit));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      replace(status, loading('Rotating\u2026'));
      try {
        const body = {};
        if (grace.value.trim()) body.grace_period = grace.value.trim();
        close(await api.post(api.path`/v1/destinations/${d.id}/secret/rotate`, body));
      } catch (err) {
        replace(status, errorBox(err, 'Could not rotate'));
        submit.disabled = false;
      }
    });
    queueMicrotask(() => grace.focus());
    return form;
  });
  if (!result || !ctx.alive()) return;
  replace(notices, h('div', { class: 'alert alert-ok', id: 'rotated' },
    h('p', null, h('strong', null, 'Secret rotated. '),
      result.previous_valid_until
        ? ['The previous secret stays valid until ', time(result.previous_valid_until), '.']
        : 'The previous secret no longer signs.'),
    h('div', { class: 'secret-row' },
      h('code', { class: 'secret-value' }, show(result.secret)),
      copyButton(() => result.secret || ''))));
  toast('Secret rotated');
}

const TERMINAL = new Set(['succeeded', 'dead_lettered', 'cancelled']);

async function sendTest(ctx, d, notices) {
  const body = {
    type: 'test.ping',
    destination_id: d.id,
    payload: { test: true, sent_at: new Date().toISOString() },
  };
  if (d.tenant_id) body.tenant_id = d.tenant_id;
  let receipt;
  try {
    receipt = await api.post('/v1/events', body, { signal: ctx.signal });
  } catch (err) {
    if (err.name !== 'AbortError') replace(notices, errorBox(err, 'The test event was refused'));
    return;
  }
  if (!ctx.alive()) return;
  const deliveries = Array.isArray(receipt.deliveries) ? receipt.deliveries : [];
  if (!deliveries.length) {
    replace(notices, h('div', { class: 'alert alert-info', id: 'test-result' },
      'The test event ', idLink('events', receipt.id),
      ' was stored, but no delivery was made: the destination is disabled.'));
    return;
  }
  const delivery = deliveries[0];
  const state = h('span', { class: 'test-status' }, badge(delivery.status));
  const detail = h('span', { class: 'muted' });
  replace(notices, h('div', { class: 'alert alert-info', id: 'test-result' },
    h('p', null, h('strong', null, 'Test event sent. '), 'Event ', idLink('events', receipt.id),
      ', delivery ', idLink('deliveries', delivery.id), ': ', state, ' ', detail)));

  // Follow the delivery until it ends (at most a minute; the page may be left sooner).
  let polls = 0;
  let timer = 0;
  ctx.onLeave(() => clearTimeout(timer));
  const poll = async () => {
    polls++;
    try {
      const now = await api.get(api.path`/v1/deliveries/${delivery.id}`, undefined, { signal: ctx.signal });
      if (!ctx.alive()) return;
      replace(state, badge(now.status));
      const parts = [];
      if (now.attempt_count) parts.push(`${now.attempt_count} attempt${now.attempt_count === 1 ? '' : 's'}`);
      if (now.last_status_code) parts.push(`last answer ${now.last_status_code}`);
      if (now.last_error) parts.push(now.last_error);
      replace(detail, parts.length ? `(${parts.join(', ')})` : '');
      if (TERMINAL.has(now.status) || polls >= 60) return;
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.alive()) return;
      replace(detail, `(could not follow it: ${err.message})`);
      return;
    }
    timer = setTimeout(poll, 1000);
  };
  timer = setTimeout(poll, 300);
}

// ---- the form ----

function parseHeaders(text) {
  const headers = {};
  const problems = [];
  text.split('\n').forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed) return;
    const colon = trimmed.indexOf(':');
    if (colon <= 0) {
      problems.push(`line ${i + 1} is not "Name: value"`);
      return;
    }
    headers[trimmed.slice(0, colon).trim()] = trimmed.slice(colon + 1).trim();
  });
  return { headers, problems };
}

function headersText(headers) {
  if (!headers || typeof headers !== 'object') return '';
  return Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\n');
}

function field(id, label, input, help) {
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  input.setAttribute('aria-describedby', help ? `${id}-help ${id}-error` : `${id}-error`);
  return {
    node: h('div', { class: 'field' },
      h('label', { for: id }, label), input,
      help ? h('p', { class: 'hint', id: `${id}-help` }, help) : null,
      error),
    error,
    input,
  };
}

export function renderForm(ctx) {
  const editing = Boolean(ctx.params.id);
  const root = h('section', null, loading());
  if (!editing) {
    replace(root, ...formBody(ctx, null));
    return root;
  }
  api.get(api.path`/v1/destinations/${ctx.params.id}`, undefined, { signal: ctx.signal }).then((d) => {
    if (ctx.alive()) replace(root, ...formBody(ctx, d));
  }, (err) => {
    if (ctx.alive() && err.name !== 'AbortError') {
      replace(root, pageHeader('Edit destination', { back: ['#/destinations', 'Destinations'] }),
        errorBox(err, 'Could not load the destination'));
    }
  });
  return root;
}

function formBody(ctx, d) {
  const editing = d !== null;
  const fields = {
    url: field('dest-url', 'URL', h('input', {
      id: 'dest-url', name: 'url', type: 'url', required: true, autocomplete: 'off',
      placeholder: 'https://example.com/webhooks', value: editing ? d.url || '' : '',
    }), 'Absolute http or https URL the webhooks are POSTed to.'),
    description: field('dest-description', 'Description', h('input', {
      id: 'dest-description', name: 'description', autocomplete: 'off', maxlength: 1024,
      value: editing ? d.description || '' : '',
    })),
    event_types: field('dest-event-types', 'Event types', h('input', {
      id: 'dest-event-types', name: 'event_types', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'order.created, invoice.*',
      value: editing && Array.isArray(d.event_types) ? d.event_types.join(', ') : '',
    }), 'Separated by commas. Empty means every type; "order.*" matches every type starting with "order.".'),
    headers: field('dest-headers', 'Custom headers', h('textarea', {
      id: 'dest-headers', name: 'headers', rows: 3, spellcheck: 'false', placeholder: 'X-Team: payments',
      value: editing ? headersText(d.headers) : '',
    }), 'One "Name: value" per line, sent with every delivery.'),
    max_in_flight: field('dest-max-in-flight', 'Max in flight', h('input', {
      id: 'dest-max-in-flight', name: 'max_in_flight', type: 'number', min: 1, max: 10000, step: 1,
      placeholder: 'server default', value: editing && d.max_in_flight != null ? String(d.max_in_flight) : '',
    }), 'Concurrent deliveries to this destination, all workers together.'),
    rate_limit: field('dest-rate-limit', 'Rate limit (attempts per second)', h('input', {
      id: 'dest-rate-limit', name: 'rate_limit', type: 'number', min: 1, max: 100000, step: 1,
      placeholder: 'no limit', value: editing && d.rate_limit != null ? String(d.rate_limit) : '',
    })),
  };
  const showTenant = !editing && ctx.role !== 'tenant';
  if (showTenant) {
    fields.tenant_id = field('dest-tenant', 'Tenant', h('input', {
      id: 'dest-tenant', name: 'tenant_id', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'none', pattern: '[A-Za-z0-9._:\\-]{1,128}',
    }), 'Set at creation and never changed: only this tenant\u2019s events reach the destination.');
  }
  const enabled = h('input', { id: 'dest-enabled', name: 'enabled', type: 'checkbox', checked: true });
  const status = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'btn-primary' }, editing ? 'Save changes' : 'Create destination');
  const cancelHref = editing ? `#/destinations/${encodeURIComponent(d.id)}` : '#/destinations';

  const form = h('form', { class: 'card form', novalidate: true },
    fields.url.node,
    fields.description.node,
    h('div', { class: 'grid-2 tight' }, fields.event_types.node, showTenant ? fields.tenant_id.node
      : editing ? h('div', { class: 'field' }, h('span', { class: 'label' }, 'Tenant'),
        h('p', { class: 'static' }, show(d.tenant_id))) : null),
    fields.headers.node,
    h('div', { class: 'grid-2 tight' }, fields.max_in_flight.node, fields.rate_limit.node),
    editing ? null : h('div', { class: 'field check' }, enabled,
      h('label', { for: 'dest-enabled' }, 'Enabled: deliver events as soon as it exists')),
    status,
    h('div', { class: 'actions' },
      h('a', { class: 'btn', href: cancelHref }, 'Cancel'),
      submit));

  const clearErrors = () => {
    for (const f of Object.values(fields)) {
      f.error.hidden = true;
      f.input.removeAttribute('aria-invalid');
    }
    replace(status);
  };
  const fieldError = (name, message) => {
    const f = fields[name.split(/[.[]/)[0]];
    if (!f) return false;
    replace(f.error, message);
    f.error.hidden = false;
    f.input.setAttribute('aria-invalid', 'true');
    return true;
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    const v = (name) => fields[name].input.value.trim();
    const body = {};
    let bad = false;
    if (!v('url')) bad = fieldError('url', 'A URL is required.') || bad;
    const { headers, problems } = parseHeaders(fields.headers.input.value);
    if (problems.length) bad = fieldError('headers', `Check the headers: ${problems.join('; ')}.`) || bad;
    const intField = (name) => {
      const text = v(name);
      if (!text) return null;
      if (!/^\d+$/.test(text)) {
        bad = fieldError(name, 'Enter a whole number.') || bad;
        return null;
      }
      return Number(text);
    };
    const maxInFlight = intField('max_in_flight');
    const rateLimit = intField('rate_limit');
    if (bad) {
      replace(status, h('div', { class: 'alert alert-error', role: 'alert' }, 'Some fields need attention.'));
      return;
    }
    const eventTypes = v('event_types').split(/[\s,]+/).filter(Boolean);
    const wanted = {
      url: v('url'),
      description: v('description'),
      event_types: eventTypes,
      headers,
      max_in_flight: maxInFlight,
      rate_limit: rateLimit,
    };
    if (editing) {
      // Only what changed, so fields this form does not show are left alone.
      const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
      if (!same(wanted.url, d.url)) body.url = wanted.url;
      if (!same(wanted.description, d.description || '')) body.description = wanted.description;
      if (!same(wanted.event_types, d.event_types || [])) body.event_types = wanted.event_types;
      if (!same(wanted.headers, d.headers || {})) body.headers = wanted.headers;
      if (!same(wanted.max_in_flight, d.max_in_flight)) body.max_in_flight = wanted.max_in_flight;
      if (!same(wanted.rate_limit, d.rate_limit)) body.rate_limit = wanted.rate_limit;
      if (!Object.keys(body).length) {
        ctx.navigate(cancelHref);
        return;
      }
    } else {
      body.url = wanted.url;
      if (wanted.description) body.description = wanted.description;
      if (eventTypes.length) body.event_types = eventTypes;
      if (Object.keys(headers).length) body.headers = headers;
      if (maxInFlight !== null) body.max_in_flight = maxInFlight;
      if (rateLimit !== null) body.rate_limit = rateLimit;
      if (showTenant && v('tenant_id')) body.tenant_id = v('tenant_id');
      if (!enabled.checked) body.enabled = false;
    }
    submit.disabled = true;
    replace(status, loading(editing ? 'Saving\u2026' : 'Creating\u2026'));
    try {
      const saved = editing
        ? await api.patch(api.path`/v1/destinations/${d.id}`, body, { signal: ctx.signal })
        : await api.post('/v1/destinations', body, { signal: ctx.signal });
      if (!editing && saved && saved.secret) createdSecret = { id: saved.id, secret: saved.secret };
      toast(editing ? 'Changes saved' : 'Destination created');
      ctx.navigate(`#/destinations/${encodeURIComponent(saved.id)}`);
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.alive()) return;
      // Field errors go next to their fields too; the summary keeps all of them.
      if (err.problem && Array.isArray(err.problem.errors)) {
        for (const e of err.problem.errors) {
          if (e && typeof e.field === 'string') fieldError(e.field, String(e.message));
        }
      }
      replace(status, errorBox(err, editing ? 'Not saved' : 'Not created'));
      submit.disabled = false;
    }
  });

  return [
    pageHeader(editing ? 'Edit destination' : 'New destination', {
      subtitle: editing ? h('span', { class: 'mono' }, d.id) : 'Where webhooks are sent, and which ones.',
      back: editing ? [cancelHref, show(destinationLabel(d))] : ['#/destinations', 'Destinations'],
    }),
    form,
  ];
}
