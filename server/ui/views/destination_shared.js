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
