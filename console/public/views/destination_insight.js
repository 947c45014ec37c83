// A destination's picture and its recovery: its attempts by outcome and its latency over
// the last hour, day or month (GET /v1/destinations/{id}/stats, drawn by uPlot:
// insight_charts.js), and "Recover since…" (POST /v1/destinations/{id}/recover),
// followed until the recovery is done.

import * as api from '../api.js';
import { legend } from '../chart.js';
import { latencyChart, outcomeChart } from '../insight_charts.js';
import {
  badge, button, errorBox, h, loading, localInputToRfc3339, replace,
  rfc3339ToLocalInput, show, time,
} from '../dom.js';
import { card } from './common.js';

const HOUR_MS = 3600000;

// [name, label, span, step]: each fits well within the server's 1,000 buckets.
const WINDOWS = [
  ['hour', 'Last hour', HOUR_MS, '1m'],
  ['day', 'Last day', 24 * HOUR_MS, '1h'],
  ['month', 'Last month', 30 * 24 * HOUR_MS, '1d'],
];

function rfc3339(ms) {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function hasAttempts(b) {
  return ['succeeded', 'retryable', 'permanent', 'dead_lettered'].some((k) => typeof b[k] === 'number' && b[k] > 0);
}

export function statsCard(ctx, id) {
  const body = h('div', { class: 'grid-2', id: 'destination-charts' }, loading());
  let chosen = WINDOWS[0][0];
  const switches = WINDOWS.map(([name, label]) => button(label, () => {
    chosen = name;
    draw();
  }, { class: 'btn-small', 'data-window': name }));
  const draw = () => {
    for (const b of switches) {
      const on = b.dataset.window === chosen;
      b.setAttribute('aria-pressed', on ? 'true' : 'false');
      b.classList.toggle('active', on);
    }
    const asked = chosen;
    const [, , span, step] = WINDOWS.find(([name]) => name === asked);
    replace(body, loading());
    const until = Date.now();
    api.get(api.path`/v1/destinations/${id}/stats`,
      { since: rfc3339(until - span), until: rfc3339(until), step }, { signal: ctx.signal }).then((s) => {
      if (!ctx.alive() || chosen !== asked) return;
      const buckets = s && Array.isArray(s.buckets) ? s.buckets : [];
      const quiet = !buckets.some(hasAttempts);
      const note = quiet
        ? h('p', { class: 'muted small chart-empty' }, 'No attempts in this window.')
        : null;
      replace(body,
        h('div', { id: 'outcome-chart' },
          h('h3', { class: 'chart-title' }, `Attempts per ${step === '1m' ? 'minute' : step === '1h' ? 'hour' : 'day'}`),
          outcomeChart(buckets),
          legend([['bar-ok', 'succeeded'], ['bar-warn', 'retryable'], ['bar-bad', 'permanent'],
            ['bar-dead', 'dead-lettered']]),
          note),
        h('div', { id: 'latency-chart' },
          h('h3', { class: 'chart-title' }, 'Latency'),
          latencyChart(buckets),
          legend([['line-p50', 'p50'], ['line-p99', 'p99']]),
          note ? note.cloneNode(true) : null));
    }, (err) => {
      if (!ctx.alive() || err.name === 'AbortError' || chosen !== asked) return;
      replace(body, errorBox(err, 'Could not load the stats'));
    });
  };
  draw();
  const root = card('Activity', h('div', { class: 'activity-windows', role: 'group', 'aria-label': 'Time window' }, switches), body);
  root.id = 'activity-card';
  return root;
}

// "Recover since…": replays the destination's dead letters of a window (admin and the
// destination's tenant; a publisher key may not).
export function recoverCard(ctx, id) {
  const since = h('input', {
    id: 'recover-since', name: 'since', type: 'datetime-local', required: true,
    value: rfc3339ToLocalInput(rfc3339(Date.now() - HOUR_MS)),
  });
  const until = h('input', { id: 'recover-until', name: 'until', type: 'datetime-local' });
  const status = h('div', { id: 'recover-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'btn-primary', id: 'recover-submit' }, 'Recover');
  const form = h('form', { class: 'recover-form', id: 'recover-form' },
    h('div', { class: 'field' }, h('label', { for: 'recover-since' }, 'Since'), since),
    h('div', { class: 'field' }, h('label', { for: 'recover-until' }, 'Until (optional)'), until),
    submit);
  let timer = 0;
  ctx.onLeave(() => clearTimeout(timer));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { since: localInputToRfc3339(since.value) };
    if (until.value) body.until = localInputToRfc3339(until.value);
    submit.disabled = true;
    replace(status, loading('Starting the recovery\u2026'));
    let started;
    try {
      started = await api.post(api.path`/v1/destinations/${id}/recover`, body, { signal: ctx.signal });
    } catch (err) {
      if (err.name !== 'AbortError' && ctx.alive()) replace(status, errorBox(err, 'Could not recover'));
      submit.disabled = false;
      return;
    }
    if (!ctx.alive()) return;
    clearTimeout(timer);
    follow(ctx, started, status, (t) => { timer = t; }, () => { submit.disabled = false; });
  });
  const root = card('Recover since\u2026',
    h('p', { class: 'muted' },
      'Delivers again every dead letter of this destination from the time given (until now, or until the time given), at the destination\u2019s own pace. The recovery goes on if webhookd restarts.'),
    form, status);
  root.id = 'recover-card';
  return root;
}

// Shows a recovery and reads it again every second until it is done (at most an hour of
// polls; the page may be left sooner).
function follow(ctx, recovery, status, setTimer, finished) {
  let polls = 0;
  const showIt = (r) => {
    replace(status, h('div', { class: 'alert alert-info', id: 'recovery' },
      h('p', null, h('strong', null, 'Recovery '), h('span', { class: 'mono', id: 'recovery-id' }, show(r.id)), ': ',
        h('span', { id: 'recovery-status' }, badge(show(r.status), r.status === 'done' ? 'ok' : 'info')), ' ',
        h('span', { id: 'recovery-replayed' }, `${typeof r.replayed === 'number' ? r.replayed : 0}`),
        ' dead letters replayed',
        r.finished_at ? [', finished ', time(r.finished_at)] : null, '.')));
  };
  showIt(recovery);
  const poll = async () => {
    polls++;
    let now;
    try {
      now = await api.get(api.path`/v1/recoveries/${recovery.id}`, undefined, { signal: ctx.signal });
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.alive()) return;
      status.appendChild(errorBox(err, 'Could not follow the recovery'));
      finished();
      return;
    }
    if (!ctx.alive()) return;
    showIt(now);
    if (now.status === 'done' || polls >= 3600) {
      finished();
      return;
    }
    setTimer(setTimeout(poll, 1000));
  };
  setTimer(setTimeout(poll, 1000));
}
