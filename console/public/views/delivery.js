// One delivery and the timeline of its attempts.

import * as api from '../api.js';
import {
  badge, busy, button, emptyState, errorBox, facts, h, loading, replace, show, time,
} from '../dom.js';
import { card, idLink, pageHeader, statusCode } from './common.js';

const TERMINAL = new Set(['succeeded', 'dead_lettered', 'cancelled']);
const MAX_POLLS = 90;

function duration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return show(null);
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

function attemptItem(a) {
  const body = typeof a.response_body === 'string' ? a.response_body : '';
  return h('li', { class: ['attempt', `attempt-${a.outcome || 'unknown'}`] },
    h('span', { class: 'attempt-marker', 'aria-hidden': 'true' }),
    h('div', { class: 'attempt-body' },
      h('div', { class: 'attempt-head' },
        h('h3', null, `Attempt ${show(a.attempt_number)}`),
        badge(a.outcome),
        statusCode(a.status_code),
        h('span', { class: 'muted' }, duration(a.duration_ms)),
        h('span', { class: 'attempt-time' }, time(a.started_at))),
      a.error ? h('p', { class: 'attempt-error' }, h('strong', null, 'Error: '), a.error) : null,
      body
        ? h('div', { class: 'response' },
          h('p', { class: 'label' }, 'Response body', h('span', { class: 'muted' }, ` (first ${body.length} characters kept)`)),
          h('pre', { class: 'code code-small', tabindex: '0' }, body))
        : h('p', { class: 'muted small' }, 'No response body.')));
}

export function render(ctx) {
  const id = ctx.params.id;
  const root = h('section', null, loading());
  let polls = 0;
  let timer = 0;
  ctx.onLeave(() => clearTimeout(timer));

  const load = async () => {
    let delivery;
    let attempts;
    try {
      [delivery, attempts] = await Promise.all([
        api.get(api.path`/v1/deliveries/${id}`, undefined, { signal: ctx.signal }),
        api.get(api.path`/v1/deliveries/${id}/attempts`, undefined, { signal: ctx.signal }),
      ]);
    } catch (err) {
      if (!ctx.alive() || err.name === 'AbortError') return;
      replace(root, pageHeader('Delivery', { back: ['#/events', 'Events'] }),
        errorBox(err, err.status === 404 ? 'Not found' : 'Could not load the delivery'));
      return;
    }
    if (!ctx.alive()) return;
    const list = Array.isArray(attempts) ? attempts : Array.isArray(attempts && attempts.data) ? attempts.data : [];
    const live = !TERMINAL.has(delivery.status) && polls < MAX_POLLS;
    const refresh = button('Refresh', () => busy(refresh, load), { id: 'refresh' });
    replace(root,
      pageHeader(`Delivery ${show(delivery.id)}`, {
        subtitle: live ? 'Not finished yet: this page updates itself.' : null,
        back: [`#/events/${encodeURIComponent(delivery.event_id || '')}`, 'Its event'],
        actions: [refresh],
      }),
      h('div', { class: 'grid-2' },
        card('Delivery', facts([
          ['Status', h('span', { id: 'delivery-status' }, badge(delivery.status))],
          ['Event', idLink('events', delivery.event_id)],
          ['Destination', idLink('destinations', delivery.destination_id)],
          ['Attempts', show(delivery.attempt_count)],
          ['Ordering key', delivery.ordering_key === null || delivery.ordering_key === undefined
            ? show(null) : h('span', { class: 'mono', id: 'delivery-ordering-key' }, delivery.ordering_key)],
          ['Created', time(delivery.created_at)],
        ])),
        card('Latest', facts([
          ['Last attempt', time(delivery.last_attempt_at)],
          ['Last status code', statusCode(delivery.last_status_code)],
          ['Last error', show(delivery.last_error)],
          ['Next attempt', time(delivery.next_attempt_at)],
          ['Updated', time(delivery.updated_at)],
        ]))),
      delivery.blocked_by
        ? h('div', { class: 'alert alert-info', id: 'delivery-blocked-by' },
          'Waiting for ', idLink('deliveries', delivery.blocked_by),
          ': its destination delivers the events of one ordering key one at a time, in order.')
        : null,
      delivery.status === 'dead_lettered' && ctx.role !== 'publisher'
        ? h('div', { class: 'alert alert-warn' }, 'This delivery was dead-lettered. ',
          h('a', { href: `#/dead-letters?destination_id=${encodeURIComponent(delivery.destination_id || '')}` },
            'Replay it from the dead letters'), '.')
        : null,
      card('Attempts', list.length
        ? h('ol', { class: 'timeline', 'aria-label': 'Attempts, oldest first' }, list.map(attemptItem))
        : emptyState('No attempts yet', 'The first attempt is made as soon as a worker is free.')));
    if (live) {
      clearTimeout(timer);
      timer = setTimeout(() => {
        polls++;
        load();
      }, 2000);
    }
  };
  load();
  return root;
}
