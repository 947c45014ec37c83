// What the destination pages share: how a destination is labelled and its health shown,
// and the secret of a destination just created, handed from the form to its page.

import { show, time } from '../dom.js';

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
