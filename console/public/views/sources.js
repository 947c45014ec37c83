// Sources: the addresses third parties (Stripe, GitHub, …) send their webhooks to. The
// list, a form whose fields follow the provider picked, and one source with its ingest
// address, its secret's rotation and the events it made.

import * as api from '../api.js';
import {
  badge, button, confirmDialog, copyButton, emptyState, errorBox, facts, h, loading, modal, replace,
  show, table, time, toast,
} from '../dom.js';
import {
  card, filterForm, idLink, pageHeader, pagedTable, queryOf,
} from './common.js';

// What each provider needs beyond its secret, and where its secret comes from.
export const PROVIDERS = {
  stripe: { label: 'Stripe', secretHint: 'The endpoint\u2019s signing secret (whsec_\u2026) from the Stripe dashboard.', tolerance: true },
  github: { label: 'GitHub', secretHint: 'The webhook\u2019s secret, as typed in the repository\u2019s or app\u2019s settings.' },
  shopify: { label: 'Shopify', secretHint: 'The app\u2019s client secret (or the store\u2019s webhook signing key).' },
  slack: { label: 'Slack', secretHint: 'The app\u2019s signing secret.', tolerance: true },
  twilio: { label: 'Twilio', secretHint: 'The account\u2019s auth token.', url: true },
  'standard-webhooks': { label: 'Standard Webhooks / Svix', secretHint: 'The endpoint\u2019s secret (whsec_\u2026).', tolerance: true },
  hmac: { label: 'Any HMAC signer', secretHint: 'The shared secret the sender signs with.', hmac: true },
};

function providerLabel(p) {
  return PROVIDERS[p] ? PROVIDERS[p].label : show(p);
}

export function renderList(ctx) {
  const filters = ctx.role === 'tenant' ? null : filterForm(ctx, '/sources', [
    { name: 'tenant_id', label: 'Tenant', placeholder: 'any tenant' },
  ]);
  const query = queryOf(ctx, ['tenant_id']);
  const columns = [
    {
      label: 'Source',
      class: 'col-main',
      cell: (s) => h('div', null,
        h('a', { href: `#/sources/${encodeURIComponent(s.id)}`, class: 'strong' }, s.description || s.id),
        h('div', { class: 'muted mono small truncate', title: show(s.ingest_url) }, show(s.ingest_url))),
    },
    { label: 'Provider', cell: (s) => providerLabel(s.provider) },
    ctx.role === 'tenant' ? null : { label: 'Tenant', cell: (s) => show(s.tenant_id) },
    { label: 'Event types', cell: (s) => h('span', { class: 'mono' }, `${show(s.type_prefix)}.\u2026`) },
    { label: 'Created', cell: (s) => time(s.created_at) },
  ].filter(Boolean);
  return h('section', null,
    pageHeader('Sources', {
      subtitle: 'Addresses that Stripe, GitHub, Shopify, Slack, Twilio and other senders deliver their webhooks to. Each request is verified, its duplicates dropped, and it becomes an event.',
      actions: [h('a', { class: 'btn btn-primary', href: '#/sources/new' }, 'New source')],
    }),
    filters,
    pagedTable(ctx, {
      label: 'Sources',
      columns,
      empty: ['No sources yet', 'Create one, then give its ingest address to the sender.'],
      load: (cursor) => api.get('/v1/sources', { ...query, cursor, limit: 50 }, { signal: ctx.signal }),
    }));
}

function field(id, label, control, help) {
  return h('div', { class: 'field', 'data-field': id },
    h('label', { for: id }, label),
    control,
    help ? h('p', { class: 'hint', id: `${id}-help` }, help) : null);
}

function input(id, attrs = {}) {
  return h('input', { id, name: id, autocomplete: 'off', spellcheck: 'false', ...attrs });
}

export function renderForm(ctx) {
  const provider = h('select', { id: 'provider', name: 'provider' },
    Object.entries(PROVIDERS).map(([value, p]) => h('option', { value }, p.label)));
  const secret = input('secret', { type: 'password', required: true });
  const secretHelp = h('span');
  const description = input('description', { placeholder: 'live account' });
  const tenant = ctx.role === 'tenant' ? null : input('tenant_id', { placeholder: 'none' });
  const typePrefix = input('type_prefix', { placeholder: 'the provider\u2019s name' });
  const tolerance = input('tolerance', { placeholder: '5m' });
  const url = input('url', { placeholder: 'https://webhooks.example.com/in/src_\u2026', type: 'url' });
  const hmacHeader = input('hmac_header', { placeholder: 'X-Signature' });
  const hmacAlgorithm = h('select', { id: 'hmac_algorithm', name: 'hmac_algorithm' },
    ['sha256', 'sha1', 'sha512'].map((a) => h('option', { value: a }, a)));
  const hmacEncoding = h('select', { id: 'hmac_encoding', name: 'hmac_encoding' },
    ['hex', 'base64'].map((e) => h('option', { value: e }, e)));
  const hmacPrefix = input('hmac_prefix', { placeholder: 'sha256=' });
  const eventType = input('event_type', { placeholder: 'partner.update' });
  const dedupeHeader = input('dedupe_header', { placeholder: 'X-Delivery' });

  const toleranceField = field('tolerance', 'Timestamp tolerance', tolerance,
    'How old or early a signed timestamp may be: 0 to 1h, 5m when empty.');
  const urlField = field('url', 'The URL Twilio calls', url,
    'Twilio signs the exact URL it is configured with: paste it as Twilio has it.');
  const hmacFields = h('div', null,
    field('hmac_header', 'Signature header', hmacHeader),
    field('hmac_algorithm', 'Algorithm', hmacAlgorithm),
    field('hmac_encoding', 'Encoding', hmacEncoding),
    field('hmac_prefix', 'Prefix before the signature', hmacPrefix, 'Optional, e.g. sha256='),
    field('event_type', 'Event type', eventType, 'The type of every event this source makes.'),
    field('dedupe_header', 'Header that names a request once', dedupeHeader,
      'Optional: requests repeating its value are dropped as duplicates.'));

  // Only the fields the picked provider reads are shown (and sent).
  const follow = () => {
    const p = PROVIDERS[provider.value];
    toleranceField.hidden = !p.tolerance;
    urlField.hidden = !p.url;
    hmacFields.hidden = !p.hmac;
    url.required = Boolean(p.url);
    hmacHeader.required = Boolean(p.hmac);
    eventType.required = Boolean(p.hmac);
    replace(secretHelp, p.secretHint);
  };
  provider.addEventListener('change', follow);
  follow();

  const status = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'btn-primary' }, 'Create source');
  const form = h('form', { class: 'form', id: 'source-form' },
    field('provider', 'Provider', provider),
    field('secret', 'Secret', secret, secretHelp),
    field('description', 'Description', description),
    tenant ? field('tenant_id', 'Tenant', tenant, 'Its events belong to this tenant.') : null,
    field('type_prefix', 'Event type prefix', typePrefix,
      'Every event type it makes starts with this and a dot.'),
    toleranceField,
    urlField,
    hmacFields,
    status,
    h('div', { class: 'actions' },
      h('a', { class: 'btn', href: '#/sources' }, 'Cancel'),
      submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const p = PROVIDERS[provider.value];
    const body = { provider: provider.value, secret: secret.value };
    const put = (name, el) => {
      if (el && el.value.trim()) body[name] = el.value.trim();
    };
    put('description', description);
    put('tenant_id', tenant);
    put('type_prefix', typePrefix);
    if (p.tolerance) put('tolerance', tolerance);
    if (p.url) put('url', url);
    if (p.hmac) {
      body.hmac = { header: hmacHeader.value.trim(), algorithm: hmacAlgorithm.value, encoding: hmacEncoding.value };
      if (hmacPrefix.value) body.hmac.prefix = hmacPrefix.value;
      put('event_type', eventType);
      put('dedupe_header', dedupeHeader);
    }
    submit.disabled = true;
    replace(status, loading('Creating\u2026'));
    try {
      const created = await api.post('/v1/sources', body, { signal: ctx.signal });
      toast('Source created');
      ctx.navigate(`#/sources/${encodeURIComponent(created.id)}`);
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(status, errorBox(err, 'Could not create the source'));
      submit.disabled = false;
    }
  });
  return h('section', null,
    pageHeader('New source', { back: ['#/sources', 'Sources'] }),
    card(null, form));
}

export function renderDetail(ctx) {
  const id = ctx.params.id;
  const root = h('section', null, loading());
  api.get(api.path`/v1/sources/${id}`, null, { signal: ctx.signal }).then((s) => {
    if (!ctx.alive()) return;
    const notices = h('div', { 'aria-live': 'polite' });
    replace(root,
      pageHeader(s.description || s.id, {
        subtitle: `${providerLabel(s.provider)} source`,
        back: ['#/sources', 'Sources'],
        actions: [
          button('Rotate secret', () => rotateSecret(ctx, s, notices), { id: 'rotate-source-secret' }),
          button('Delete', () => deleteSource(ctx, s), { class: 'btn-danger', id: 'delete-source' }),
        ],
      }),
      notices,
      card('Ingest address',
        h('p', null, 'Give this address to the sender. It needs no API key: the sender\u2019s signature is the credential.'),
        h('div', { class: 'secret-row' },
          h('code', { class: 'secret-value', id: 'ingest-url' }, show(s.ingest_url)),
          copyButton(() => s.ingest_url || '', 'Copy address'))),
      card('Settings', facts([
        ['ID', h('span', { class: 'mono' }, s.id)],
        ['Provider', providerLabel(s.provider)],
        ['Tenant', show(s.tenant_id)],
        ['Event types', h('span', { class: 'mono' }, `${show(s.type_prefix)}.\u2026`)],
        PROVIDERS[s.provider] && PROVIDERS[s.provider].tolerance ? ['Timestamp tolerance', show(s.tolerance)] : null,
        s.url ? ['Signed URL', h('span', { class: 'mono break' }, s.url)] : null,
        s.hmac ? ['Signature', h('span', { class: 'mono' }, `${s.hmac.header}: ${s.hmac.prefix || ''}${s.hmac.algorithm} ${s.hmac.encoding}`)] : null,
        ['Secret', 'set (write-only)'],
        ['Created', time(s.created_at)],
      ].filter(Boolean))),
      card('Latest requests', requestsView(ctx, s)),
      card('Latest events from this source', pagedTable(ctx, {
        label: 'Events from this source',
        columns: [
          { label: 'Event', cell: (e) => idLink('events', e.id) },
          { label: 'Type', cell: (e) => h('span', { class: 'mono' }, show(e.type)) },
          { label: 'Duplicate key', cell: (e) => h('span', { class: 'mono small' }, show(e.source && e.source.dedupe_key)) },
          { label: 'Received', cell: (e) => time(e.created_at) },
        ],
        empty: ['Nothing received yet', 'Requests that verify become events here; duplicates answer the first one\u2019s id.'],
        load: (cursor) => api.get('/v1/events', { source_id: s.id, cursor, limit: 20 }, { signal: ctx.signal }),
      })));
  }).catch((err) => {
    if (!ctx.alive() || err.name === 'AbortError') return;
    replace(root, pageHeader('Source', { back: ['#/sources', 'Sources'] }), errorBox(err, 'Could not load the source'));
  });
  return root;
}

const OUTCOME_KIND = {
  accepted: 'ok', duplicate: 'info', unverified: 'bad', malformed: 'bad', limited: 'warn',
};

// What the server answered to the latest requests to the address (kept in its memory).
function requestsView(ctx, s) {
  const root = h('div', { id: 'source-requests' }, loading());
  api.get(api.path`/v1/sources/${s.id}/requests`, null, { signal: ctx.signal }).then((page) => {
    if (!ctx.alive()) return;
    const rows = Array.isArray(page.data) ? page.data : [];
    if (!rows.length) {
      replace(root, emptyState('No requests yet', 'Requests to the ingest address show here, verified or not.'));
      return;
    }
    replace(root, table([
      { label: 'Received', cell: (r) => time(r.received_at) },
      { label: 'Outcome', cell: (r) => badge(r.outcome, OUTCOME_KIND[r.outcome] || 'info') },
      { label: 'Answer', class: 'num', cell: (r) => String(r.status) },
      { label: 'Event', cell: (r) => (r.event_id ? idLink('events', r.event_id) : show(null)) },
    ], rows, { 'aria-label': 'Latest requests' }),
    h('p', { class: 'hint' }, 'As answered by this server process, newest first; a restart empties the list.'));
  }).catch((err) => {
    if (!ctx.alive() || err.name === 'AbortError') return;
    replace(root, errorBox(err, 'Could not load the latest requests'));
  });
  return root;
}

async function deleteSource(ctx, s) {
  const ok = await confirmDialog({
    title: 'Delete this source?',
    message: `Requests to ${s.ingest_url} will be refused from now on (404). The events it made stay. This cannot be undone.`,
    confirmLabel: 'Delete source',
    danger: true,
  });
  if (!ok) return;
  try {
    await api.del(api.path`/v1/sources/${s.id}`, { signal: ctx.signal });
    toast('Source deleted');
    ctx.navigate('#/sources');
  } catch (err) {
    if (err.name !== 'AbortError') toast(`Could not delete it: ${err.message}`, 'error');
  }
}

async function rotateSecret(ctx, s, notices) {
  const result = await modal('Rotate the source\u2019s secret', (close) => {
    const secret = input('new-secret', { type: 'password', required: true });
    const grace = input('source-grace-period', { value: '24h' });
    const status = h('div', { 'aria-live': 'polite' });
    const submit = h('button', { type: 'submit', class: 'btn-primary' }, 'Rotate');
    const form = h('form', null,
      h('p', null, 'Paste the new secret the sender gave you. Requests signed with the current one are still accepted during the grace period, so the sender\u2019s own rotation drops nothing.'),
      field('new-secret', 'New secret', secret),
      field('source-grace-period', 'Grace period for the current secret', grace,
        'A duration like 30m, 24h or 7d; 0 ends the current secret now.'),
      status,
      h('div', { class: 'actions' }, button('Cancel', () => close(null)), submit));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      replace(status, loading('Rotating\u2026'));
      try {
        const body = { secret: secret.value };
        if (grace.value.trim()) body.grace_period = grace.value.trim();
        close(await api.post(api.path`/v1/sources/${s.id}/secret/rotate`, body));
      } catch (err) {
        replace(status, errorBox(err, 'Could not rotate'));
        submit.disabled = false;
      }
    });
    queueMicrotask(() => secret.focus());
    return form;
  });
  if (!result || !ctx.alive()) return;
  replace(notices, h('div', { class: 'alert alert-ok', id: 'source-rotated' },
    h('p', null, h('strong', null, 'Secret rotated. '),
      result.previous_valid_until
        ? ['The previous secret is accepted until ', time(result.previous_valid_until), '.']
        : 'The previous secret is no longer accepted.')));
  toast('Secret rotated');
}
