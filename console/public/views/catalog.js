// The event catalog: the list of event types, one type with its schema as a field table
// and its examples, and the form that creates or edits a type (admin and publisher
// keys; a tenant key reads the catalog only, and webhookd's own types are read-only).

import * as api from '../api.js';
import {
  button, confirmDialog, copyButton, emptyState, errorBox, facts, h, loading, replace,
  show, table, time, toast,
} from '../dom.js';
import { indent, rawItems, rawMember } from '../json_text.js';
import { schemaFields } from '../schema_fields.js';
import { card, pageHeader, pagedTable } from './common.js';

// Whether this key may change the catalog (the server decides; this only hides buttons).
export function canEditCatalog(ctx) {
  return ctx.role === 'admin' || ctx.role === 'publisher';
}

export function typeHref(name, edit = false) {
  return `#/catalog/types/${encodeURIComponent(name)}${edit ? '/edit' : ''}`;
}

// The badges of a type: deprecated, and webhookd's own.
export function typeBadges(t) {
  const out = [];
  if (t.deprecated === true) out.push(h('span', { class: 'badge badge-warn', title: 'Still accepted; producers should move off it' }, 'deprecated'));
  if (t.builtin === true) out.push(h('span', { class: 'badge badge-info badge-plain', title: 'One of webhookd\u2019s own event types: read-only' }, 'webhookd'));
  return out.length ? h('span', { class: 'badges' }, out) : null;
}

// The text of every element of `member` (an array) of the JSON object `text`, each
// exactly as the server sent it; [] when there is none.
function rawList(text, member) {
  try {
    const raw = rawMember(text, member);
    return raw === null ? [] : rawItems(raw) || [];
  } catch {
    return [];
  }
}

function indented(raw) {
  try {
    return indent(raw);
  } catch {
    return raw;
  }
}

// Every type in the catalog, with each example's text as sent (for the destination
// form). Stops after `max` types.
export async function loadCatalog(signal, max = 1000) {
  const types = [];
  let cursor = null;
  do {
    const { text } = await api.request('GET', '/v1/event-types', {
      query: { limit: 200, cursor }, signal,
    });
    for (const item of rawList(text, 'data')) {
      let t;
      try {
        t = JSON.parse(item);
      } catch {
        continue;
      }
      if (!t || typeof t.name !== 'string') continue;
      types.push({
        name: t.name,
        description: typeof t.description === 'string' ? t.description : '',
        deprecated: t.deprecated === true,
        builtin: t.builtin === true,
        examples: rawList(item, 'examples'),
      });
    }
    let next;
    try {
      next = JSON.parse(rawMember(text, 'next_cursor') ?? 'null');
    } catch {
      next = null;
    }
    cursor = typeof next === 'string' && next ? next : null;
  } while (cursor && types.length < max);
  return types;
}

// ---- the list ----

export function renderList(ctx) {
  const editable = canEditCatalog(ctx);
  return h('section', null,
    pageHeader('Catalog', {
      subtitle: editable
        ? 'The event types producers publish: what each means, its schema and examples. Payloads are checked against a type\u2019s schema when they are published.'
        : 'The event types you can subscribe to: what each means, the fields of its payload and examples.',
      actions: editable ? [h('a', { class: 'btn btn-primary', href: '#/catalog/new', id: 'new-event-type' }, 'New event type')] : [],
    }),
    pagedTable(ctx, {
      label: 'Event types',
      columns: [
        {
          label: 'Event type',
          class: 'col-main',
          cell: (t) => h('div', null,
            h('a', { href: typeHref(t.name), class: 'strong mono' }, show(t.name)),
            typeBadges(t)),
        },
        { label: 'Description', cell: (t) => h('span', { class: 'prose' }, show(t.description)) },
        {
          label: 'Schema',
          cell: (t) => (t.schema && typeof t.schema === 'object'
            ? 'yes' : h('span', { class: 'muted' }, 'none')),
        },
        {
          label: 'Examples',
          class: 'num',
          cell: (t) => String(Array.isArray(t.examples) ? t.examples.length : 0),
        },
      ],
      empty: ['No event types yet', editable
        ? 'Describe the events producers publish, so subscribers know what they get.'
        : 'Nothing has been described yet.'],
      load: (cursor) => api.get('/v1/event-types', { cursor, limit: 100 }, { signal: ctx.signal }),
    }));
}

// ---- one type ----

export function renderDetail(ctx) {
  const name = ctx.params.name;
  const root = h('section', null, loading());
  api.request('GET', api.path`/v1/event-types/${name}`, { signal: ctx.signal }).then(({ text, json }) => {
    if (ctx.alive()) replace(root, ...detailBody(ctx, json, text));
  }, (err) => {
    if (!ctx.alive() || err.name === 'AbortError') return;
    replace(root, pageHeader(name, { back: ['#/catalog', 'Catalog'] }),
      errorBox(err, err.status === 404 ? 'Not in the catalog' : 'Could not load the event type'));
  });
  return root;
}

function constraintList(items) {
  if (!items.length) return h('span', { class: 'muted' }, '\u2014');
  return h('ul', { class: 'chips' }, items.map((c) => h('li', { class: 'chip mono' }, c)));
}

function fieldTable(t, text) {
  if (!t.schema || typeof t.schema !== 'object') {
    return emptyState('No schema', 'Payloads of this type are not checked, and their fields are not described.');
  }
  const { rows, truncated } = schemaFields(t.schema);
  let schemaText;
  try {
    schemaText = rawMember(text, 'schema');
  } catch {
    schemaText = null;
  }
  const raw = schemaText === null ? null : indented(schemaText);
  return h('div', null,
    rows.length
      ? table([
        { label: 'Field', class: 'col-main', cell: (r) => h('code', { class: 'field-path' }, r.path) },
        { label: 'Type', cell: (r) => h('span', { class: 'mono' }, r.type) },
        { label: 'Required', cell: (r) => (r.required ? h('strong', null, 'yes') : h('span', { class: 'muted' }, 'no')) },
        { label: 'Constraints', cell: (r) => constraintList(r.constraints) },
        { label: 'Description', cell: (r) => h('span', { class: 'prose' }, show(r.description)) },
      ], rows, { 'aria-label': `Fields of ${t.name}`, id: 'schema-fields' })
      : emptyState('No fields', 'The schema names no properties; it is shown below.'),
    truncated ? h('p', { class: 'hint' }, `The first ${rows.length} fields are shown; the schema below has them all.`) : null,
    raw === null ? null : h('details', { class: 'raw-schema' },
      h('summary', null, 'The schema as JSON'),
      h('div', { class: 'card-tools' },
        h('span', { class: 'muted small' }, 'JSON Schema, draft 7'),
        copyButton(() => raw)),
      h('pre', { class: 'code', id: 'schema-json', tabindex: '0' }, raw)));
}

function examplesView(text) {
  const examples = rawList(text, 'examples');
  if (!examples.length) return emptyState('No examples', 'No example payload was given for this type.');
  return h('ol', { class: 'examples', id: 'examples' }, examples.map((raw, i) => {
    const pretty = indented(raw);
    return h('li', { class: 'example' },
      h('div', { class: 'card-tools' },
        h('h3', null, `Example ${i + 1}`),
        copyButton(() => pretty)),
      h('pre', { class: 'code code-small', tabindex: '0' }, pretty));
  }));
}

function detailBody(ctx, t, text) {
  const actions = [];
  if (canEditCatalog(ctx) && t.builtin !== true) {
    actions.push(h('a', { class: 'btn', href: typeHref(t.name, true), id: 'edit-type' }, 'Edit'));
    actions.push(button('Delete', () => deleteType(ctx, t), { class: 'btn-danger', id: 'delete-type' }));
  }
  return [
    pageHeader(show(t.name), {
      subtitle: typeBadges(t),
      back: ['#/catalog', 'Catalog'],
      actions,
    }),
    t.builtin === true ? h('div', { class: 'alert alert-info', id: 'builtin-note' },
      'One of webhookd\u2019s own event types, which it publishes about itself: read-only. It reaches only destinations whose event types name it, or a "webhookd." pattern, explicitly.') : null,
    t.deprecated === true ? h('div', { class: 'alert alert-warn', id: 'deprecated-note' },
      'Deprecated: events of this type are still accepted, but producers should move off it and subscribers should not start depending on it.') : null,
    card('About', facts([
      ['Name', h('span', { class: 'mono' }, show(t.name))],
      ['Description', h('span', { class: 'prose', id: 'type-description-text' }, show(t.description))],
      ['Created', time(t.created_at)],
      ['Updated', time(t.updated_at)],
    ])),
    card('Fields', fieldTable(t, text)),
    card('Examples', examplesView(text)),
  ];
}

async function deleteType(ctx, t) {
  const ok = await confirmDialog({
    title: 'Delete this event type?',
    message: `${t.name} leaves the catalog with its schema and examples: payloads of this type are no longer checked, and a server with WEBHOOKD_EVENT_TYPES=strict refuses the type. Destinations that name it keep it.`,
    confirmLabel: 'Delete event type',
    danger: true,
  });
  if (!ok) return;
  try {
    await api.del(api.path`/v1/event-types/${t.name}`, { signal: ctx.signal });
    toast('Event type deleted');
    ctx.navigate('#/catalog');
  } catch (err) {
    if (err.name !== 'AbortError') toast(`Could not delete it: ${err.message}`, 'error');
  }
}

// ---- the form ----

export function renderForm(ctx) {
  const name = ctx.params.name;
  const root = h('section', null, loading());
  if (name === undefined) {
    replace(root, ...formBody(ctx, null, ''));
    return root;
  }
  api.request('GET', api.path`/v1/event-types/${name}`, { signal: ctx.signal }).then(({ text, json }) => {
    if (!ctx.alive()) return;
    if (json && json.builtin === true) {
      replace(root, pageHeader('Edit event type', { back: [typeHref(name), name] }),
        h('div', { class: 'alert alert-info' }, 'webhookd\u2019s own event types are read-only.'));
      return;
    }
    replace(root, ...formBody(ctx, json, text));
  }, (err) => {
    if (ctx.alive() && err.name !== 'AbortError') {
      replace(root, pageHeader('Edit event type', { back: ['#/catalog', 'Catalog'] }),
        errorBox(err, 'Could not load the event type'));
    }
  });
  return root;
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

const SCHEMA_PLACEHOLDER = '{\n  "type": "object",\n  "required": ["order_id"],\n  "properties": {\n    "order_id": {"type": "string"},\n    "amount": {"type": "number", "minimum": 0}\n  }\n}';
const EXAMPLES_PLACEHOLDER = '[\n  {"order_id": "ord_1", "amount": 19.9}\n]';

// The JSON text of a textarea: trimmed, and checked to parse. Numbers stay as typed,
// because the text (not JSON.parse's value) is what is sent.
function jsonField(text) {
  const trimmed = text.trim();
  if (!trimmed) return { empty: true };
  try {
    return { text: trimmed, value: JSON.parse(trimmed) };
  } catch (err) {
    return { problem: `is not valid JSON (${err.message})` };
  }
}

function formBody(ctx, t, text) {
  const editing = t !== null;
  let schemaText = '';
  if (editing && t.schema && typeof t.schema === 'object') {
    try {
      schemaText = indented(rawMember(text, 'schema') ?? JSON.stringify(t.schema));
    } catch {
      schemaText = JSON.stringify(t.schema, null, 2);
    }
  }
  const examplesText = editing && rawList(text, 'examples').length
    ? indented(rawMember(text, 'examples')) : '';
  const fields = {
    description: field('type-description', 'Description', h('textarea', {
      id: 'type-description', name: 'description', rows: 2, maxlength: 1024, class: 'prose-input',
      value: editing ? t.description || '' : '',
    }), 'What happened when an event of this type is published, for the people who subscribe to it.'),
    schema: field('type-schema', 'Schema', h('textarea', {
      id: 'type-schema', name: 'schema', rows: 12, spellcheck: 'false', placeholder: SCHEMA_PLACEHOLDER,
      value: schemaText,
    }), 'A JSON Schema (draft 7) object. Each payload of this type must pass it when it is published. Empty means no schema.'),
    examples: field('type-examples', 'Examples', h('textarea', {
      id: 'type-examples', name: 'examples', rows: 8, spellcheck: 'false', placeholder: EXAMPLES_PLACEHOLDER,
      value: examplesText,
    }), 'A JSON array of up to 20 example payloads (objects), each of which must pass the schema. They are shown here and offered by the destination form\u2019s filter test.'),
  };
  if (!editing) {
    fields.name = field('type-name', 'Name', h('input', {
      id: 'type-name', name: 'name', required: true, autocomplete: 'off', spellcheck: 'false',
      placeholder: 'order.created', maxlength: 255, pattern: '[A-Za-z0-9._:\\-]{1,255}', class: 'mono',
    }), 'What producers put in an event\u2019s "type": letters, digits and . _ : - (no wildcards). Names starting with "webhookd." are webhookd\u2019s own. It cannot be changed later.');
  }
  const deprecated = h('input', {
    id: 'type-deprecated', name: 'deprecated', type: 'checkbox', checked: editing && t.deprecated === true,
  });
  const status = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'btn-primary' }, editing ? 'Save changes' : 'Create event type');
  const cancelHref = editing ? typeHref(t.name) : '#/catalog';

  const form = h('form', { class: 'card form', novalidate: true, id: 'event-type-form' },
    editing ? h('div', { class: 'field' }, h('span', { class: 'label' }, 'Name'),
      h('p', { class: 'static mono' }, t.name)) : fields.name.node,
    fields.description.node,
    fields.schema.node,
    fields.examples.node,
    h('div', { class: 'field check' }, deprecated,
      h('label', { for: 'type-deprecated' }, 'Deprecated: still accepted, but producers should move off it')),
    status,
    h('div', { class: 'actions' },
      h('a', { class: 'btn', href: cancelHref }, 'Cancel'),
      submit));

  const clearErrors = () => {
    for (const f of Object.values(fields)) {
      f.error.hidden = true;
      replace(f.error);
      f.input.removeAttribute('aria-invalid');
    }
    replace(status);
  };
  // A field error of the API names a field ("name") or a JSON Pointer into the body
  // ("/schema/properties/amount/type", "/examples/0/amount"): each goes under its field,
  // a pointer with the place it names.
  const fieldError = (where, message) => {
    const pointer = where.startsWith('/');
    const f = fields[(pointer ? where.slice(1) : where).split(/[/.[]/)[0]];
    if (!f) return false;
    const line = h('span', { class: 'field-error-line' },
      pointer && where.includes('/', 1) ? [h('code', null, where), ' '] : null, message);
    if (!f.error.hidden) f.error.append(h('br'));
    f.error.append(line);
    f.error.hidden = false;
    f.input.setAttribute('aria-invalid', 'true');
    return true;
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    let bad = false;
    const name = editing ? t.name : fields.name.input.value.trim();
    if (!editing && !name) bad = fieldError('name', 'A name is required.') || bad;
    const schema = jsonField(fields.schema.input.value);
    if (schema.problem) bad = fieldError('schema', `The schema ${schema.problem}.`) || bad;
    else if (!schema.empty && (schema.value === null || typeof schema.value !== 'object' || Array.isArray(schema.value))) {
      bad = fieldError('schema', 'The schema must be a JSON object, such as {"type": "object"}.') || bad;
    }
    const examples = jsonField(fields.examples.input.value);
    if (examples.problem) bad = fieldError('examples', `The examples ${examples.problem}.`) || bad;
    else if (!examples.empty && !Array.isArray(examples.value)) {
      bad = fieldError('examples', 'The examples must be a JSON array of objects: [{\u2026}, {\u2026}].') || bad;
    }
    if (bad) {
      replace(status, h('div', { class: 'alert alert-error', role: 'alert' }, 'Some fields need attention.'));
      return;
    }
    const description = fields.description.input.value.trim();
    // The body as JSON text: the schema and examples go in as typed.
    const members = [];
    const add = (key, json) => members.push(`${JSON.stringify(key)}:${json}`);
    if (editing) {
      // Only what changed, so a save that touches the description leaves the rest alone.
      if (description !== (t.description || '')) add('description', JSON.stringify(description));
      if (fields.schema.input.value.trim() !== schemaText.trim()) add('schema', schema.empty ? 'null' : schema.text);
      if (fields.examples.input.value.trim() !== examplesText.trim()) add('examples', examples.empty ? '[]' : examples.text);
      if (deprecated.checked !== (t.deprecated === true)) add('deprecated', String(deprecated.checked));
      if (!members.length) {
        ctx.navigate(cancelHref);
        return;
      }
    } else {
      add('name', JSON.stringify(name));
      if (description) add('description', JSON.stringify(description));
      if (!schema.empty) add('schema', schema.text);
      if (!examples.empty) add('examples', examples.text);
      if (deprecated.checked) add('deprecated', 'true');
    }
    submit.disabled = true;
    replace(status, loading(editing ? 'Saving\u2026' : 'Creating\u2026'));
    try {
      const { json } = await api.request(editing ? 'PATCH' : 'POST',
        editing ? api.path`/v1/event-types/${t.name}` : '/v1/event-types',
        { jsonText: `{${members.join(',')}}`, signal: ctx.signal });
      toast(editing ? 'Changes saved' : 'Event type created');
      ctx.navigate(typeHref(json && json.name ? json.name : name));
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.alive()) return;
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
    pageHeader(editing ? 'Edit event type' : 'New event type', {
      subtitle: editing ? h('span', { class: 'mono' }, t.name) : 'Describe an event producers publish: its meaning, its payload\u2019s schema, examples.',
      back: editing ? [cancelHref, t.name] : ['#/catalog', 'Catalog'],
    }),
    form,
  ];
}
