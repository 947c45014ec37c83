// A destination's charts (its stats buckets: attempts stacked by outcome, latency lines),
// drawn by uPlot: the charting library the console bundles from npm at build time
// (console/vendor; served from /ui/vendor/, so the CSP stays script-src 'self'). uPlot
// draws on a canvas and is given its colours here; its own legend is off (it writes
// markup with inline styles, which the CSP refuses), and the page's legend says what
// each colour is.

import uPlot from './vendor/uPlot.esm.js';
import { h } from './dom.js';

// The colours of app.css's .bar-* and .line-* classes, which the legend's swatches use.
const COLORS = {
  succeeded: '#2f9e5a',
  retryable: '#e8a33d',
  permanent: '#e0484f',
  dead_lettered: '#7a1f2b',
  p50: '#3b5bdb',
  p99: '#e0484f',
};
const OUTCOMES = ['succeeded', 'retryable', 'permanent', 'dead_lettered'];
const HEIGHT = 220;

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function seconds(b) {
  return Date.parse(b.start) / 1000;
}

function latencyText(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms >= 10000 ? 0 : 1)} s` : `${Math.round(ms)} ms`;
}

// A day's bucket starts at midnight UTC, so its axis reads UTC dates; shorter ones read as
// the browser's clock.
function dayBuckets(buckets) {
  return buckets.length > 1 && seconds(buckets[1]) - seconds(buckets[0]) >= 86400;
}

function clock(buckets) {
  return dayBuckets(buckets) ? { tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') } : {};
}

// What both charts share: a time axis over the buckets from 0 up, no legend, no cursor.
function options(buckets, width, yAxis, series) {
  return {
    ...clock(buckets),
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { show: false },
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
    axes: [AXIS, { ...AXIS, ...yAxis }],
    series: [{}, ...series],
  };
}

const AXIS = { stroke: '#6b7280', grid: { stroke: '#eef0f4' }, ticks: { stroke: '#e1e4ea' } };

// Mounts the chart once its box is in the page (its width is the box's), and again when
// the box changes width. Returns the box.
function mount(label, build) {
  const box = h('div', { class: 'uchart', role: 'img', 'aria-label': label });
  let plot = null;
  let width = 0;
  const draw = () => {
    const w = Math.max(240, Math.floor(box.clientWidth || 480));
    if (w === width && plot) return;
    width = w;
    if (plot) plot.destroy();
    plot = build(w);
    box.appendChild(plot.root);
  };
  requestAnimationFrame(() => {
    if (!box.isConnected) return;
    draw();
    const observer = new ResizeObserver(() => {
      if (!box.isConnected) {
        observer.disconnect();
        if (plot) plot.destroy();
        return;
      }
      draw();
    });
    observer.observe(box);
  });
  return box;
}

// Bars stacked by outcome: each series is the sum of those below it, drawn largest first
// so that each smaller one covers the bottom of the one before. A dead letter is also
// counted by its last attempt's outcome; its part on top shows how many deliveries gave up.
export function outcomeChart(buckets) {
  const xs = buckets.map(seconds);
  const stacked = [];
  let running = buckets.map(() => 0);
  for (const name of OUTCOMES) {
    running = running.map((v, i) => v + num(buckets[i][name]));
    stacked.push(running);
  }
  const order = [...OUTCOMES.keys()].reverse();
  const bars = uPlot.paths.bars({ size: [0.7, 24] });
  return mount('Attempts per bucket by outcome, and dead letters', (width) => new uPlot(
    options(buckets, width, { size: 44 }, order.map((i) => ({
      label: OUTCOMES[i], fill: COLORS[OUTCOMES[i]], stroke: COLORS[OUTCOMES[i]], width: 0,
      paths: bars, points: { show: false },
    }))),
    [xs, ...order.map((i) => stacked[i])]));
}

// p50 and p99 latency per bucket as two lines; buckets without attempts are gaps.
export function latencyChart(buckets) {
  const xs = buckets.map(seconds);
  const values = (name) => buckets.map((b) => (typeof b[name] === 'number' ? b[name] : null));
  const line = (label, color) => ({ label, stroke: color, width: 2, points: { show: true, size: 5, fill: color } });
  return mount('Latency per bucket: p50 and p99', (width) => new uPlot(
    options(buckets, width, { size: 52, values: (u, ticks) => ticks.map(latencyText) },
      [line('p99', COLORS.p99), line('p50', COLORS.p50)]),
    [xs, values('p99_ms'), values('p50_ms')]));
}
