// Dead letters: filter, replay one, or replay every match.

import * as api from '../api.js';
import {
  badge, busy, button, confirmDialog, errorBox, h, loading, localInputToRfc3339, replace,
  rfc3339ToLocalInput, show, time, toast,
} from '../dom.js';
import {
  filterForm, idLink, lastAnswer, pageHeader, pagedTable, queryOf,
} from './common.js';

const FILTERS = ['destination_id', 'reason', 'since', 'until'];
const COUNT_PAGE = 1000;
const MAX_COUNT_PAGES = 100; // counts up to 100,000 before saying "more than"

function replayCell(ctx, dl) {
  if (dl.replayed_at) {
    return h('span', { class: 'muted' }, 'Replayed ', time(dl.replayed_at));
  }
  if (dl.dismissed_at) {
    return h('span', { class: 'muted' }, 'Dismissed ', time(dl.dismissed_at));
  }
  const cell = h('span');
  const btn = button('Replay', () => busy(btn, async () => {
    try {
      const r = await api.post(api.path`/v1/admin/dead-letters/${dl.id}/replay`, undefined,
        { signal: ctx.signal });
      replace(cell, h('span', { class: 'replayed' }, 'Replayed: ',
        idLink('deliveries', r && r.delivery_id ? r.delivery_id : dl.delivery_id)));
      toast('Dead letter replayed: the delivery is pending again');
    } catch (err) {
      if (err.name === 'AbortError') return;
      if (err.status === 409) {
        replace(cell, h('span', { class: 'muted' }, 'Already replayed'));
      } else {
        toast(`Could not replay it: ${err.message}`, 'error');
      }
    }
  }), { class: 'btn-small', 'aria-label': `Replay dead letter ${dl.id}` });
  // Dismissing sets it aside for good: on a fifo destination that blocks, its key goes on.
  const dismiss = button('Dismiss', () => busy(dismiss, async () => {
    try {
      const r = await api.post(api.path`/v1/admin/dead-letters/${dl.id}/dismiss`, undefined,
        { signal: ctx.signal });
      replace(cell, h('span', { class: 'muted' }, 'Dismissed ', time(r && r.dismissed_at)));
      toast('Dead letter dismissed');
    } catch (err) {
      if (err.name === 'AbortError') return;
      toast(`Could not dismiss it: ${err.message}`, 'error');
    }
  }), { class: 'btn-small btn-secondary', 'aria-label': `Dismiss dead letter ${dl.id}` });
  cell.append(btn, ' ', dismiss);
  return cell;
}

// Pages through the list with the page's filter, counting the letters a bulk replay
// would take (those not replayed yet).
async function countMatches(ctx, query, progress) {
  let cursor = null;
  let count = 0;
  for (let page = 0; page < MAX_COUNT_PAGES; page++) {
    const body = await api.get('/v1/admin/dead-letters', { ...query, cursor, limit: COUNT_PAGE },
      { signal: ctx.signal });
    const rows = Array.isArray(body.data) ? body.data : [];
    count += rows.filter((dl) => !dl.replayed_at && !dl.dismissed_at).length;
    progress(count);
    if (!body.next_cursor) return { count, complete: true };
    cursor = body.next_cursor;
  }
  return { count, complete: false };
}

export function render(ctx) {
  const query = queryOf(ctx, FILTERS);
  const filtered = Object.keys(query).length > 0;
  const listHolder = h('div');
  const notices = h('div', { 'aria-live': 'polite' });

  const showList = () => replace(listHolder, pagedTable(ctx, {
    label: 'Dead letters',
    columns: [
      { label: 'Dead-lettered', cell: (dl) => time(dl.dead_lettered_at) },
      { label: 'Destination', cell: (dl) => idLink('destinations', dl.destination_id) },
      { label: 'Delivery', cell: (dl) => idLink('deliveries', dl.delivery_id) },
      { label: 'Reason', cell: (dl) => badge(dl.reason) },
      { label: 'Attempts', class: 'num', cell: (dl) => show(dl.attempt_count) },
      { label: 'Last answer', cell: (dl) => lastAnswer(dl) },
      { label: 'Replay', cell: (dl) => replayCell(ctx, dl) },
    ],
    empty: filtered
      ? ['No dead letters match', 'Nothing that matches these filters was dead-lettered.']
      : ['No dead letters', 'Every delivery so far succeeded or is still being retried.'],
    load: (cursor) => api.get('/v1/admin/dead-letters', { ...query, cursor, limit: 50 },
      { signal: ctx.signal }),
  }));

  const replayAll = button(filtered ? 'Replay all matching' : 'Replay all', () => busy(replayAll, async () => {
    replace(notices, h('p', { class: 'loading', role: 'status' }, 'Counting the dead letters to replay\u2026'));
    let counted;
    try {
      counted = await countMatches(ctx, query, (n) => {
        replace(notices, h('p', { class: 'loading', role: 'status' }, `Counting\u2026 ${n} so far`));
      });
    } catch (err) {
      if (err.name !== 'AbortError' && ctx.alive()) replace(notices, errorBox(err, 'Could not count them'));
      return;
    }
    if (!ctx.alive()) return;
    replace(notices);
    if (counted.count === 0) {
      replace(notices, h('div', { class: 'alert alert-info' },
        'Nothing to replay: every matching dead letter has been replayed already.'));
      return;
    }
    const n = counted.complete ? String(counted.count) : `more than ${counted.count}`;
    const ok = await confirmDialog({
      title: `Replay ${n} dead letter${counted.count === 1 ? '' : 's'}?`,
      message: `Each becomes a pending delivery again, due now, with a fresh set of attempts${filtered ? ' (only those matching the filters)' : ''}. Letters dead-lettered after this count are included too.`,
      confirmLabel: `Replay ${n}`,
    });
    if (!ok || !ctx.alive()) return;
    try {
      const body = {};
      for (const name of FILTERS) if (query[name]) body[name] = query[name];
      // With no filter the server wants to hear that every dead letter is meant.
      if (!Object.keys(body).length) body.all = true;
      // Each request replays at most 10,000 and says whether more are left.
      let replayed = 0;
      for (let round = 0; round < 1000; round += 1) {
        const r = await api.post('/v1/admin/dead-letters/replay', body, { signal: ctx.signal });
        replayed += r && typeof r.replayed === 'number' ? r.replayed : 0;
        if (!r || !r.more || !ctx.alive()) break;
        replace(notices, loading(`${replayed} replayed so far\u2026`));
      }
      replace(notices, h('div', { class: 'alert alert-ok', id: 'replay-result' },
        `${replayed} dead letter${replayed === 1 ? '' : 's'} replayed: their deliveries are pending again.`));
      showList();
    } catch (err) {
      if (err.name !== 'AbortError' && ctx.alive()) replace(notices, errorBox(err, 'Replay failed'));
    }
  }), { class: 'btn-primary', id: 'replay-all' });

  showList();
  return h('section', null,
    pageHeader('Dead letters', {
      subtitle: 'Deliveries that ran out of attempts or were refused for good.',
      actions: [replayAll],
    }),
    filterForm(ctx, '/dead-letters', [
      { name: 'destination_id', label: 'Destination', placeholder: 'dst_\u2026' },
      {
        name: 'reason', label: 'Reason', value: (v) => v,
        options: [['', 'Any reason'], ['exhausted', 'Exhausted'], ['permanent_failure', 'Permanent failure']],
      },
      { name: 'since', label: 'Since', type: 'datetime-local', value: rfc3339ToLocalInput, toQuery: localInputToRfc3339 },
      { name: 'until', label: 'Until', type: 'datetime-local', value: rfc3339ToLocalInput, toQuery: localInputToRfc3339 },
    ]),
    notices,
    listHolder);
}
