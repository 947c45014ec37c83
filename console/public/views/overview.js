// Overview (admin): the health figures, attempts and success rate over time, the
// destinations that failed most in the last hour and those that need attention.

import * as api from '../api.js';
import { attemptsChart, legend, successRateChart } from '../chart.js';
import {
  emptyState, errorBox, h, link, loading, replace, show, table,
} from '../dom.js';
import { attentionList } from './attention.js';
import { destinationLabel } from './destination_shared.js';
import { card, pageHeader } from './common.js';

const WINDOWS = [
  ['1h', '1m', 'Last hour'],
  ['6h', '5m', 'Last 6 hours'],
  ['24h', '15m', 'Last 24 hours'],
];

function percent(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return show(null);
  return `${(v * 100).toFixed(v >= 0.1 || v === 0 ? 1 : 2)}%`;
}

function decimal(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return show(null);
  return v.toFixed(2);
}

function count(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return show(null);
  return v.toLocaleString();
}

function figure(label, value, hint, kind) {
  return h('div', { class: ['figure', kind ? `figure-${kind}` : null] },
    h('p', { class: 'figure-label' }, label),
    h('p', { class: 'figure-value' }, value),
    hint ? h('p', { class: 'figure-hint' }, hint) : null);
}

function figures(ctx, windowName) {
  const root = h('div', { class: 'figures' }, loading());
  api.get('/v1/admin/stats', { window: windowName }, { signal: ctx.signal }).then((s) => {
    if (!ctx.alive()) return;
    replace(root,
      figure('Pending', count(s.pending), 'waiting for an attempt'),
      figure('In flight', count(s.in_flight), 'being sent now'),
      figure('Retrying > 24 h', count(s.retrying_over_24h), 'still not delivered after a day',
        s.retrying_over_24h > 0 ? 'warn' : null),
      figure('Retry rate', percent(s.retry_rate), 'attempts that were retries'),
      figure('Dead-letter rate', percent(s.dead_letter_rate), 'deliveries that gave up',
        s.dead_letter_rate > 0 ? 'bad' : null),
      figure('Attempts to deliver', decimal(s.avg_attempts_to_success), 'on average, when delivered'),
      figure('Retry success', percent(s.second_attempt_success_rate), 'second attempts that succeeded'));
  }, (err) => {
    if (ctx.alive() && err.name !== 'AbortError') replace(root, errorBox(err, 'Could not load the figures'));
  });
  return root;
}

function charts(ctx, windowName, step) {
  const root = h('div', { class: 'grid-2' }, loading());
  api.get('/v1/admin/stats/series', { window: windowName, step }, { signal: ctx.signal }).then((s) => {
    if (!ctx.alive()) return;
    const points = s && Array.isArray(s.points) ? s.points : [];
    if (!points.length) {
      replace(root, card(null, emptyState('No series available', 'There is no data for this window yet.')));
      return;
    }
    const quiet = points.every((p) => !p.attempts);
    replace(root,
      card(`Attempts per ${step === '1m' ? 'minute' : step}`,
        attemptsChart(points),
        legend([['bar-ok', 'succeeded'], ['bar-bad', 'failed'], ['bar-other', 'skipped']]),
        quiet ? h('p', { class: 'muted small' }, 'No attempts in this window.') : null),
      card('Success rate', successRateChart(points),
        h('p', { class: 'muted small' }, 'Successful attempts over all attempts of each step; gaps had no attempts.')));
  }, (err) => {
    if (!ctx.alive() || err.name === 'AbortError') return;
    replace(root, card(null, err.status === 404
      ? emptyState('No series available', 'This webhookd does not offer the attempt series.')
      : errorBox(err, 'Could not load the series')));
  });
  return root;
}

// The ten destinations with the most failed attempts in the last hour, whatever window
// the page shows: the question after an alert is "who is failing now". An older server
// answers 404, and the card is left out.
function mostFailing(ctx) {
  const section = h('div');
  api.get('/v1/admin/stats/failing', { window: '1h', limit: 10 }, { signal: ctx.signal }).then((body) => {
    if (!ctx.alive()) return;
    const rows = Array.isArray(body && body.destinations) ? body.destinations : [];
    replace(section, card('Most failures in the last hour', rows.length
      ? table([
        {
          label: 'Destination',
          cell: (d) => link(`#/destinations/${encodeURIComponent(d.id)}`, show(destinationLabel(d))),
        },
        { label: 'Tenant', cell: (d) => show(d.tenant_id) },
        { label: 'Failed', class: 'num', cell: (d) => count(d.failed) },
        { label: 'Succeeded', class: 'num', cell: (d) => count(d.succeeded) },
        { label: 'Dead-lettered', class: 'num', cell: (d) => count(d.dead_lettered) },
      ], rows, { 'aria-label': 'Destinations with the most failures in the last hour' })
      : emptyState('No failures', 'No destination had a failed attempt in the last hour.')));
  }, (err) => {
    if (!ctx.alive() || err.name === 'AbortError' || err.status === 404) return;
    replace(section, card('Most failures in the last hour', errorBox(err, 'Could not load the failing destinations')));
  });
  return section;
}

// Tenants appear only where the server lists them; an older one answers 404.
function tenants(ctx) {
  const section = h('div');
  api.get('/v1/admin/tenants', { limit: 100 }, { signal: ctx.signal }).then((body) => {
    if (!ctx.alive()) return;
    const rows = Array.isArray(body && body.data) ? body.data : Array.isArray(body) ? body : [];
    if (!rows.length) return;
    replace(section, card('Tenants', table([
      {
        label: 'Tenant',
        cell: (t) => link(`#/destinations?tenant_id=${encodeURIComponent(t.tenant_id || '')}`, show(t.tenant_id)),
      },
      { label: 'Destinations', class: 'num', cell: (t) => count(t.destinations) },
      { label: 'Pending', class: 'num', cell: (t) => count(t.pending) },
      { label: 'Dead letters', class: 'num', cell: (t) => count(t.dead_letters) },
    ], rows, { 'aria-label': 'Tenants' })));
  }, () => {});
  return section;
}

export function render(ctx) {
  const requested = ctx.query.get('window');
  const chosen = WINDOWS.find(([w]) => w === requested) || WINDOWS[0];
  const [windowName, step] = chosen;
  const switcher = h('nav', { class: 'segmented', 'aria-label': 'Time window' },
    WINDOWS.map(([w, , label]) => h('a', {
      href: `#/overview?window=${w}`,
      class: w === windowName ? 'active' : null,
      'aria-current': w === windowName ? 'true' : null,
    }, label)));
  return h('section', null,
    pageHeader('Overview', {
      subtitle: `Delivery health over the ${chosen[2].toLowerCase()}.`,
      actions: [switcher],
    }),
    figures(ctx, windowName),
    charts(ctx, windowName, step),
    mostFailing(ctx),
    card('Needs attention', attentionList(ctx)),
    tenants(ctx));
}
