// The destinations that need attention: failing, circuit open or half open, or disabled.
// The Overview shows the list to an admin; the Destinations page shows it to the keys
// that have no Overview (a tenant's portal, a publisher), only when it is not empty.

import * as api from '../api.js';
import {
  emptyState, errorBox, h, link, loading, replace, show, table, time,
} from '../dom.js';
import { card, enabledBadge } from './common.js';
import { destinationLabel, healthBadge, healthOf } from './destination_shared.js';

const MAX_DESTINATION_PAGES = 10;

async function needyDestinations(ctx) {
  const needy = [];
  let cursor = null;
  for (let page = 0; page < MAX_DESTINATION_PAGES; page++) {
    const body = await api.get('/v1/destinations', { cursor, limit: 1000 }, { signal: ctx.signal });
    for (const d of Array.isArray(body.data) ? body.data : []) {
      if (healthOf(d).attention) needy.push(d);
    }
    if (!body.next_cursor) break;
    cursor = body.next_cursor;
  }
  return needy;
}

function needyTable(ctx, needy) {
  return table([
    {
      label: 'Destination',
      cell: (d) => link(`#/destinations/${encodeURIComponent(d.id)}`, show(destinationLabel(d))),
    },
    ctx.role === 'tenant' ? null : { label: 'Tenant', cell: (d) => show(d.tenant_id) },
    { label: 'Health', cell: (d) => healthBadge(d) },
    { label: 'Status', cell: (d) => enabledBadge(d) },
    { label: 'Failing since', cell: (d) => time(d.health ? d.health.failing_since : null) },
    { label: 'Next probe', cell: (d) => time(d.health ? d.health.next_probe_at : null) },
  ].filter(Boolean), needy, { 'aria-label': 'Destinations that need attention' });
}

// The Overview's list: says so when every destination is healthy.
export function attentionList(ctx) {
  const root = h('div', null, loading());
  needyDestinations(ctx).then((needy) => {
    if (!ctx.alive()) return;
    replace(root, needy.length ? needyTable(ctx, needy)
      : emptyState('All destinations are healthy',
        'None is failing, disabled, or has its circuit open.'));
  }, (err) => {
    if (ctx.alive() && err.name !== 'AbortError') replace(root, errorBox(err, 'Could not load the destinations'));
  });
  return root;
}

// A card above the Destinations list, there only when something needs attention (the
// list below shows each destination's health anyway).
export function attentionCard(ctx) {
  const root = h('div');
  needyDestinations(ctx).then((needy) => {
    if (ctx.alive() && needy.length) {
      replace(root, card('Needs attention', needyTable(ctx, needy)));
    }
  }, () => {});
  return root;
}
