// Destinations: the list, with health at a glance.

import * as api from '../api.js';
import { h, show } from '../dom.js';
import { attentionCard } from './attention.js';
import {
  enabledBadge, filterForm, pageHeader, pagedTable, queryOf,
} from './common.js';
import {
  capText, certificateBadge, failingSince, healthBadge,
} from './destination_shared.js';

export function renderList(ctx) {
  const filters = ctx.role === 'tenant' ? null : filterForm(ctx, '/destinations', [
    { name: 'tenant_id', label: 'Tenant', placeholder: 'any tenant' },
  ]);
  const query = queryOf(ctx, ['tenant_id']);
  const columns = [
    {
      label: 'Destination',
      class: 'col-main',
      // Without a description the URL is the link itself, not repeated under it.
      cell: (d) => h('div', null,
        d.description
          ? h('a', { href: `#/destinations/${encodeURIComponent(d.id)}`, class: 'strong' }, d.description)
          : h('a', { href: `#/destinations/${encodeURIComponent(d.id)}`, class: 'strong mono break' }, show(d.url)),
        d.description ? h('div', { class: 'muted mono small truncate', title: show(d.url) }, show(d.url)) : null),
    },
    ctx.role === 'tenant' ? null : { label: 'Tenant', cell: (d) => show(d.tenant_id) },
    {
      label: 'Status',
      cell: (d) => {
        // A client certificate that has expired or soon will is a health matter too.
        const cert = certificateBadge(d);
        return cert ? h('span', { class: 'badge-stack' }, enabledBadge(d), cert) : enabledBadge(d);
      },
    },
    { label: 'Health', cell: (d) => healthBadge(d) },
    { label: 'Failing since', cell: (d) => failingSince(d) },
    { label: 'In flight cap', class: 'num', cell: (d) => capText(d) },
  ].filter(Boolean);
  return h('section', null,
    pageHeader('Destinations', {
      subtitle: 'The endpoints webhooks are delivered to.',
      actions: [h('a', { class: 'btn btn-primary', href: '#/destinations/new' }, 'New destination')],
    }),
    filters,
    // An admin finds this list on the Overview.
    ctx.role === 'admin' ? null : attentionCard(ctx),
    pagedTable(ctx, {
      label: 'Destinations',
      columns,
      empty: ['No destinations yet', query.tenant_id
        ? 'No destination belongs to this tenant.'
        : 'Create one to start receiving webhooks.'],
      load: (cursor) => api.get('/v1/destinations', { ...query, cursor, limit: 50 }, { signal: ctx.signal }),
    }));
}
