// What the destination pages share: how a destination is labelled and its health shown,
// its client certificate's end, and the secret of a destination just created, handed
// from the form to its page.

import { h, show, time } from '../dom.js';

// The secret of a destination just created, shown once on its page (memory only).
let createdSecret = null;

export function rememberCreatedSecret(id, secret) {
  createdSecret = { id, secret };
}

// The secret remembered for `id`, once: later calls get null.
export function takeCreatedSecret(id) {
  if (!createdSecret || createdSecret.id !== id) return null;
  const { secret } = createdSecret;
  createdSecret = null;
  return secret;
}

export function capText(d) {
  const effective = d.health && typeof d.health === 'object' ? d.health.effective_max_in_flight : null;
  if (effective === null || effective === undefined) return show(d.max_in_flight);
  if (d.max_in_flight === undefined || d.max_in_flight === null) return show(effective);
  return `${effective} / ${d.max_in_flight}`;
}

export function failingSince(d) {
  return time(d.health && typeof d.health === 'object' ? d.health.failing_since : null);
}

// What a destination's health comes to, judged by its attempts and not by its circuit
// alone: a permanent failure (a 404, say) dead-letters its delivery at once and leaves the
// circuit closed with no failure counted, yet `failing_since` says that nothing has
// succeeded since. Returns {label, kind, attention, why}; attention is whether the
// destination needs someone to look at it.
export function healthOf(d) {
  const health = d && d.health && typeof d.health === 'object' ? d.health : null;
  const circuit = health ? health.circuit : null;
  if (d.enabled === false && (d.disabled_reason === 'failing' || d.disabled_reason === 'gone')) {
    return {
      label: d.disabled_reason === 'gone' ? 'gone' : 'failing',
      kind: 'bad',
      attention: true,
      why: d.disabled_reason === 'gone'
        ? 'The receiver answered 410 Gone, so the destination was disabled.'
        : 'Its attempts kept failing, so the destination was disabled.',
    };
  }
  if (circuit === 'open') {
    return {
      label: 'circuit open', kind: 'bad', attention: true,
      why: 'Too many retryable failures in a row: due deliveries are not sent until a probe succeeds.',
    };
  }
  if (circuit === 'half_open') {
    return {
      label: 'circuit half open', kind: 'warn', attention: true,
      why: 'The circuit opened after retryable failures; one delivery is probing the receiver.',
    };
  }
  if (health && health.failing_since) {
    return {
      label: 'failing', kind: 'bad', attention: true,
      why: 'No attempt has succeeded since the first failure.',
    };
  }
  // Disabled by hand: nothing is delivered while it stays so.
  if (d.enabled === false) {
    return { label: 'disabled', kind: 'muted', attention: true, why: 'Disabled: nothing is sent to it.' };
  }
  if (!health) return { label: null, kind: 'muted', attention: false, why: null };
  return { label: 'healthy', kind: 'ok', attention: false, why: 'The latest attempts succeeded, or none failed yet.' };
}

export function healthBadge(d) {
  const state = healthOf(d);
  if (!state.label) return h('span', { class: 'muted' }, '\u2014');
  return h('span', {
    class: ['badge', `badge-${state.kind}`, 'health-badge'],
    title: state.why,
  }, state.label);
}

export function destinationLabel(d) {
  return d.description ? d.description : d.url;
}

const DAY_MS = 24 * 60 * 60 * 1000;

// Warned about this long before the end.
export const CERTIFICATE_WARNING_DAYS = 14;

// How near the end of a client certificate (`tls.expires_at`) is: null when unknown, else
// {state, days}: 'expired', 'soon' (within CERTIFICATE_WARNING_DAYS) or 'ok', with the
// days left rounded up.
export function certificateExpiry(iso, now = Date.now()) {
  if (typeof iso !== 'string' || !iso) return null;
  const end = Date.parse(iso);
  if (Number.isNaN(end)) return null;
  const left = end - now;
  if (left <= 0) return { state: 'expired', days: 0 };
  const days = Math.ceil(left / DAY_MS);
  return { state: left <= CERTIFICATE_WARNING_DAYS * DAY_MS ? 'soon' : 'ok', days };
}

// A badge when the destination's client certificate has expired or soon will; null
// otherwise.
export function certificateBadge(d, attrs = {}) {
  const tls = d && d.tls && typeof d.tls === 'object' ? d.tls : null;
  const expiry = tls && tls.client_certificate ? certificateExpiry(tls.expires_at) : null;
  if (!expiry || expiry.state === 'ok') return null;
  const expired = expiry.state === 'expired';
  return h('span', {
    class: ['badge', expired ? 'badge-bad' : 'badge-warn', 'badge-plain', 'cert-badge'],
    title: expired ? 'Receivers that check client certificates will refuse it: replace it.'
      : 'Replace the client certificate before it expires.',
    ...attrs,
  }, expired ? 'certificate expired'
    : `certificate expires in ${expiry.days} day${expiry.days === 1 ? '' : 's'}`);
}

// ---- transports (docs/brokers.md) ----

// What carries a destination's messages, by its url's scheme: the same schemes the API
// reads (net/broker_url.h).
const SCHEME_TRANSPORTS = {
  http: 'http', https: 'http',
  amqp: 'amqp', amqps: 'amqp',
  nats: 'nats', tls: 'nats',
  redis: 'redis', rediss: 'redis',
  kafka: 'kafka',
};

export const TRANSPORT_LABELS = {
  http: 'HTTP',
  amqp: 'RabbitMQ (AMQP 0-9-1)',
  nats: 'NATS JetStream',
  redis: 'Redis Streams',
  kafka: 'Apache Kafka',
};

// Each broker's own settings, in the order they are shown and sent. `absent`: what the
// broker does without the setting; `required`: the API refuses the url without it.
export const BROKER_SETTINGS = {
  amqp: [
    { name: 'exchange', label: 'Exchange', placeholder: 'webhooks', absent: 'the default exchange',
      hint: 'Up to 127 of A-Z a-z 0-9 - _ . : \u2014 empty publishes to the default exchange.' },
    { name: 'routing_key', label: 'Routing key', placeholder: 'order.created', absent: 'the event type',
      hint: 'Empty: the event\u2019s type.' },
  ],
  nats: [
    { name: 'subject', label: 'Subject', placeholder: 'webhooks.orders', absent: 'webhooks.<event type>',
      hint: 'Dot-separated tokens, no wildcards. Empty: webhooks.<event type>.' },
  ],
  redis: [
    { name: 'stream', label: 'Stream', placeholder: 'webhooks', required: true, absent: 'none',
      hint: 'The stream key every message is appended to (XADD).' },
    { name: 'max_len', label: 'Max length', placeholder: 'not trimmed', integer: true, absent: 'not trimmed',
      hint: 'Trims the stream to about this many entries (MAXLEN ~), 1 to 1000000000. Empty: not trimmed.' },
  ],
  kafka: [
    { name: 'topic', label: 'Topic', placeholder: 'webhooks', required: true, absent: 'none',
      hint: '1 to 249 of A-Z a-z 0-9 . _ -' },
  ],
};

function schemeOf(url) {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(typeof url === 'string' ? url.trim() : '');
  return m ? m[1].toLowerCase() : null;
}

// 'http', 'amqp', 'nats', 'redis' or 'kafka' for a url; null for one of no known scheme.
export function transportOf(url) {
  const scheme = schemeOf(url);
  return scheme && Object.hasOwn(SCHEME_TRANSPORTS, scheme) ? SCHEME_TRANSPORTS[scheme] : null;
}

const DEFAULT_PORTS = { amqp: 5672, amqps: 5671, nats: 4222, tls: 4222, redis: 6379, rediss: 6379, kafka: 9092 };

// The broker a url names, as text that tells one broker from another: the scheme and
// every host with its port (another AMQP vhost or Redis database is the same broker).
// null for a url that is not a broker's.
export function brokerOrigin(url) {
  const scheme = schemeOf(url);
  if (!scheme || !Object.hasOwn(DEFAULT_PORTS, scheme)) return null;
  const authority = url.trim().slice(scheme.length + 3).split(/[/?#]/)[0].toLowerCase();
  const hosts = authority.split(',').map((hp) => {
    const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(hp);
    if (!m) return hp;
    return `${m[1]}:${m[2] ? Number(m[2]) : DEFAULT_PORTS[scheme]}`;
  });
  return `${scheme}://${hosts.join(',')}`;
}
