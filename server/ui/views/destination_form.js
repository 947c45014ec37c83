// The destination form: create, and edit.

import * as api from '../api.js';
import { errorBox, h, loading, replace, show, toast } from '../dom.js';
import { pageHeader } from './common.js';
import { destinationLabel, rememberCreatedSecret } from './destination_shared.js';

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

function select(id, name, options, value) {
  const input = h('select', { id, name }, options.map(([v, text]) => h('option', { value: v }, text)));
  input.value = value;
  return input;
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
    }), editing
      ? 'One "Name: value" per line, sent with every delivery. Values are write-only: leave "set" to keep a value as it is.'
      : 'One "Name: value" per line, sent with every delivery. Values are write-only: once saved they show as "set".'),
    max_in_flight: field('dest-max-in-flight', 'Max in flight', h('input', {
      id: 'dest-max-in-flight', name: 'max_in_flight', type: 'number', min: 1, max: 10000, step: 1,
      placeholder: 'server default', value: editing && d.max_in_flight != null ? String(d.max_in_flight) : '',
    }), 'Concurrent deliveries to this destination, all workers together.'),
    rate_limit: field('dest-rate-limit', 'Rate limit (attempts per second)', h('input', {
      id: 'dest-rate-limit', name: 'rate_limit', type: 'number', min: 1, max: 100000, step: 1,
      placeholder: 'no limit', value: editing && d.rate_limit != null ? String(d.rate_limit) : '',
    })),
    ordering: field('dest-ordering', 'Ordering', select('dest-ordering', 'ordering', [
      ['none', 'None: deliveries go in parallel'],
      ['fifo', 'fifo: one at a time per ordering key, in order'],
    ], editing ? d.ordering || 'none' : 'none'), 'With fifo, events that share an ordering_key arrive one after another, in the order they were accepted.'),
    on_dead_letter: field('dest-on-dead-letter', 'When a fifo delivery is dead-lettered', select('dest-on-dead-letter', 'on_dead_letter', [
      ['continue', 'Continue with the next of its key'],
      ['block', 'Hold its key until it is replayed or dismissed'],
    ], editing ? d.on_dead_letter || 'continue' : 'continue')),
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
    h('div', { class: 'grid-2 tight' }, fields.ordering.node, fields.on_dead_letter.node),
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
      ordering: fields.ordering.input.value,
      on_dead_letter: fields.on_dead_letter.input.value,
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
      if (!same(wanted.ordering, d.ordering || 'none')) body.ordering = wanted.ordering;
      if (!same(wanted.on_dead_letter, d.on_dead_letter || 'continue')) body.on_dead_letter = wanted.on_dead_letter;
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
      if (wanted.ordering !== 'none') body.ordering = wanted.ordering;
      if (wanted.on_dead_letter !== 'continue') body.on_dead_letter = wanted.on_dead_letter;
      if (showTenant && v('tenant_id')) body.tenant_id = v('tenant_id');
      if (!enabled.checked) body.enabled = false;
    }
    submit.disabled = true;
    replace(status, loading(editing ? 'Saving\u2026' : 'Creating\u2026'));
    try {
      const saved = editing
        ? await api.patch(api.path`/v1/destinations/${d.id}`, body, { signal: ctx.signal })
        : await api.post('/v1/destinations', body, { signal: ctx.signal });
      if (!editing && saved && saved.secret) rememberCreatedSecret(saved.id, saved.secret);
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
