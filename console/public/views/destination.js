// One destination: its facts and health, its secret, and its actions (enable, disable,
// rotate, send a test event, delete).

import * as api from '../api.js';
import {
  badge, busy, button, confirmDialog, copyButton, errorBox, facts, h, loading, modal, replace,
  show, time, toast,
} from '../dom.js';
import {
  card, circuitBadge, enabledBadge, idLink, lastAnswer, pageHeader, pagedTable,
} from './common.js';
import {
  BROKER_SETTINGS, TRANSPORT_LABELS, certificateBadge, destinationLabel, healthBadge, healthOf,
  takeCreatedSecret, transportOf,
} from './destination_shared.js';
import { recoverCard, statsCard } from './destination_insight.js';

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
    // Values are write-only: the API shows each as "set", and so does this page.
    ? h('ul', { class: 'plain mono small' }, headerEntries.map(([k]) => h('li', null, `${k}: `, h('span', { class: 'muted' }, 'set'))))
    : h('span', { class: 'muted' }, 'none');

  const settings = card('Settings', facts([
    ['URL', h('span', { class: 'mono break' }, show(d.url))],
    ['Transport', brokerFacts(d)],
    ['Description', show(d.description)],
    ['Tenant', show(d.tenant_id)],
    ['Event types', eventTypes],
    ['Filter', typeof d.filter === 'string' && d.filter
      ? h('code', { class: 'mono break', id: 'dest-filter-value' }, d.filter)
      : h('span', { class: 'muted' }, 'none: every event of its types')],
    ['Custom headers', headers],
    ['Mutual TLS', tlsFacts(d)],
    ['OAuth 2.0', oauthFacts(d)],
    ['Max in flight', show(d.max_in_flight)],
    ['Rate limit', d.rate_limit === null || d.rate_limit === undefined ? show(null) : `${d.rate_limit} per second`],
    ['Ordering', d.ordering === 'fifo'
      ? h('span', null, h('span', { class: 'badge badge-info', id: 'fifo-badge' }, 'fifo'),
        d.on_dead_letter === 'block' ? ' \u2014 a dead letter holds its key' : ' \u2014 a dead letter lets its key go on')
      : 'none'],
    ['Created', time(d.created_at)],
    ['Updated', time(d.updated_at)],
  ]));
  const state = healthOf(d);
  const failingButNotCounted = health && health.failing_since && health.consecutive_failures === 0 &&
    health.circuit === 'closed';
  const healthCard = card('Health', facts([
    ['Health', h('span', { id: 'health-state' }, healthBadge(d),
      state.why ? h('span', { class: 'muted small health-why' }, state.why) : null)],
    ['Latest attempt', latestAttempt(ctx, id)],
    ['Status', enabledBadge(d)],
    ['Disabled because', show(d.disabled_reason)],
    ['Circuit', circuitBadge(health)],
    // Only retryable failures count here, so a receiver answering 404 to everything
    // stays at 0 while failing: the label says what is counted.
    ['Retryable failures in a row', h('span', { id: 'retryable-failures' },
      h('span', { class: 'count' }, show(health ? health.consecutive_failures : null)),
      h('span', { class: 'muted small health-why' },
        '408, 5xx, connection, TLS, DNS or timeout; WEBHOOKD_CIRCUIT_THRESHOLD of them (10 unless set) open the circuit.'))],
    ['Failing since', h('span', { id: 'failing-since' }, time(health ? health.failing_since : null),
      failingButNotCounted
        ? h('span', { class: 'muted small health-why' },
          'The failures since then were not retryable ones (a 4xx such as 404 dead-letters its delivery at once; a 429 is retried but not counted), so the circuit stays closed.')
        : null)],
    ['Next probe', time(health ? health.next_probe_at : null)],
    ['Effective in flight cap', show(health ? health.effective_max_in_flight : null)],
  ]));
  healthCard.id = 'health-card';

  const secretCard = card('Signing secret', secretPanel(ctx, id));
  const feed = d.url === 'feed:' || d.fallback === 'feed' ? feedCard(ctx, id, d.url === 'feed:') : null;

  const deliveries = card('Deliveries', pagedTable(ctx, {
    label: 'Deliveries of this destination',
    columns: [
      { label: 'Delivery', cell: (x) => idLink('deliveries', x.id) },
      { label: 'Event', cell: (x) => idLink('events', x.event_id) },
      { label: 'Status', cell: (x) => badge(x.status) },
      { label: 'Attempts', class: 'num', cell: (x) => show(x.attempt_count) },
      { label: 'Last answer', cell: (x) => lastAnswer(x) },
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
    feed,
    statsCard(ctx, id),
    ctx.role === 'publisher' ? null : recoverCard(ctx, id),
    secretCard,
    deliveries,
  ];
}

// A feed's messages that wait for a read and those leased to one now
// (GET /v1/destinations/{id}/messages/counts); for a destination that falls back to its
// feed, those that fell back.
function feedCard(ctx, id, isFeed) {
  const body = h('div', { id: 'feed-counts' }, loading());
  api.get(api.path`/v1/destinations/${id}/messages/counts`, undefined, { signal: ctx.signal }).then((c) => {
    if (!ctx.alive()) return;
    replace(body, facts([
      ['Waiting', h('span', { id: 'feed-waiting' }, show(c.waiting))],
      ['Leased', h('span', { id: 'feed-leased' }, show(c.leased))],
    ]), h('p', { class: 'muted small' }, isFeed
      ? 'Messages wait here until a consumer reads them (GET …/messages) and acks them.'
      : 'Deliveries that could not be pushed wait here for a consumer to read them.'));
  }, (err) => {
    if (ctx.alive() && err.name !== 'AbortError') replace(body, errorBox(err, 'Could not count the feed'));
  });
  const root = card(isFeed ? 'Feed' : 'Fallback feed', body);
  root.id = 'feed-card';
  return root;
}

// The destination's latest attempt, from its newest deliveries (newest first): one call
// of a route the page has anyway. An older delivery still retrying may hold a later
// attempt than the newest one, so the latest of a page of them is taken.
function latestAttempt(ctx, id) {
  const root = h('span', { id: 'latest-attempt' }, loading());
  api.get('/v1/deliveries', { destination_id: id, limit: 20 }, { signal: ctx.signal }).then((body) => {
    if (!ctx.alive()) return;
    let latest = null;
    for (const x of Array.isArray(body && body.data) ? body.data : []) {
      if (x.last_attempt_at && (!latest || Date.parse(x.last_attempt_at) > Date.parse(latest.last_attempt_at))) {
        latest = x;
      }
    }
    if (!latest) {
      replace(root, h('span', { class: 'muted' }, 'none yet'));
      return;
    }
    replace(root, lastAnswer(latest), ' ', time(latest.last_attempt_at), ' ',
      h('span', { class: 'small' }, '(', idLink('deliveries', latest.id), ')'));
  }, (err) => {
    if (ctx.alive() && err.name !== 'AbortError') replace(root, h('span', { class: 'muted' }, `could not load it: ${err.message}`));
  });
  return root;
}

// The TLS settings as the API shows them: the client certificate's end, whether a key is
// set (the key itself is write-only and never sent to the page), and which CAs are trusted.
function tlsFacts(d) {
  const tls = d.tls && typeof d.tls === 'object' ? d.tls : null;
  if (!tls) return h('span', { class: 'muted', id: 'tls-none' }, 'none');
  const items = [];
  if (tls.client_certificate) {
    items.push(h('li', null, 'Client certificate, expires ',
      h('span', { id: 'tls-expires' }, time(tls.expires_at)), ' ', certificateBadge(d, { id: 'tls-expiry-badge' })));
  } else {
    items.push(h('li', { class: 'muted' }, 'No client certificate'));
  }
  items.push(h('li', { id: 'tls-key' }, 'Client key: ', tls.client_key
    ? h('span', { class: 'badge badge-ok badge-plain' }, 'set')
    : h('span', { class: 'muted' }, 'none')));
  items.push(h('li', { id: 'tls-ca' }, tls.ca_certificate
    ? 'Trusts its own CA certificate only'
    : 'Trusts the system\u2019s CAs'));
  return h('ul', { class: 'plain tls-facts', id: 'tls-facts' }, items);
}

// The OAuth settings as the API shows them: the token URL, client id and scope, and
// whether a client secret is set (the secret itself is write-only and never sent to the
// page).
function oauthFacts(d) {
  const auth = d.auth && typeof d.auth === 'object' ? d.auth : null;
  if (!auth) return h('span', { class: 'muted', id: 'oauth-none' }, 'none');
  return h('ul', { class: 'plain oauth-facts', id: 'oauth-facts' },
    h('li', null, 'Token URL: ',
      h('span', { class: 'mono break', id: 'oauth-token-url' }, show(auth.token_url))),
    h('li', null, 'Client id: ', h('span', { class: 'mono break', id: 'oauth-client-id' }, show(auth.client_id))),
    h('li', { id: 'oauth-secret' }, 'Client secret: ', auth.client_secret
      ? h('span', { class: 'badge badge-ok badge-plain' }, 'secret set')
      : h('span', { class: 'muted' }, 'none')),
    h('li', null, 'Scope: ', auth.scope
      ? h('span', { class: 'mono break', id: 'oauth-scope' }, auth.scope)
      : h('span', { class: 'muted', id: 'oauth-scope' }, 'none')));
}

// The transport the url names and, for a broker, its settings as the API shows them: the
// username and password only as set (they are write-only and never sent to the page).
function brokerFacts(d) {
  const transport = transportOf(d.url);
  if (!Object.hasOwn(BROKER_SETTINGS, transport || '')) {
    return h('span', { id: 'broker-transport' }, transport ? TRANSPORT_LABELS[transport] : show(null));
  }
  const broker = d.broker && typeof d.broker === 'object' ? d.broker : {};
  const given = (v) => v !== null && v !== undefined && v !== '';
  return h('ul', { class: 'plain broker-facts', id: 'broker-facts' },
    h('li', null, h('strong', { id: 'broker-transport' }, TRANSPORT_LABELS[transport])),
    BROKER_SETTINGS[transport].map((s) => {
      const id = `broker-${s.name.replaceAll('_', '-')}`;
      return h('li', null, `${s.label}: `, given(broker[s.name])
        ? h('span', { class: 'mono break', id }, String(broker[s.name]))
        : h('span', { class: 'muted', id }, s.absent));
    }),
    ['username', 'password'].map((name) => h('li', { id: `broker-${name}` },
      `${name === 'username' ? 'Username' : 'Password'}: `, broker[name]
        ? h('span', { class: 'badge badge-ok badge-plain' }, `${name} set`)
        : h('span', { class: 'muted' }, 'none'))));
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
  const created = takeCreatedSecret(id);
  if (created) {
    shown(created, 'This is the new destination\u2019s secret. Give it to the receiver; you can reveal it again later.');
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
