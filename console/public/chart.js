// Charts as inline SVG built node by node (no markup strings, no inline styles: the
// colours come from app.css through class names).

import { formatClock, formatLocal, h, svg } from './dom.js';

// The drawing's own units; CSS scales it to the card. A narrow screen gets a narrower
// drawing, so that its labels stay readable once scaled down.
let WIDTH = 560;
const HEIGHT = 200;
const MARGIN = { top: 12, right: 12, bottom: 26, left: 44 };
let PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const MANY_POINTS = 30;

function fitToScreen() {
  WIDTH = window.innerWidth < 600 ? 360 : 560;
  PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
}

// The smallest of 1, 2, 5 × 10^k that is at least `value` (and at least 1).
function niceCeiling(value) {
  if (!(value > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

function frame(label, yTicks, points, formatAt = formatClock) {
  fitToScreen();
  const root = svg('svg', {
    class: 'chart',
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-label': label,
    preserveAspectRatio: 'xMidYMid meet',
  });
  root.appendChild(svg('title', null, label));
  for (const { value, text } of yTicks) {
    const y = MARGIN.top + PLOT_H - value * PLOT_H;
    root.appendChild(svg('line', {
      class: 'chart-grid', x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y, y2: y,
    }));
    root.appendChild(svg('text', {
      class: 'chart-label', x: MARGIN.left - 6, y: y + 4, 'text-anchor': 'end',
    }, text));
  }
  if (points.length) {
    const picks = points.length > 2 ? [0, Math.floor((points.length - 1) / 2), points.length - 1]
      : points.map((_, i) => i);
    for (const i of picks) {
      const date = new Date(points[i].at);
      if (Number.isNaN(date.getTime())) continue;
      const anchor = i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle';
      root.appendChild(svg('text', {
        class: 'chart-label', x: xCenter(i, points.length), y: HEIGHT - 8, 'text-anchor': anchor,
      }, formatAt(date)));
    }
  }
  return root;
}

function xCenter(i, n) {
  return MARGIN.left + (PLOT_W / n) * (i + 0.5);
}

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function when(point) {
  const date = new Date(point.at);
  return Number.isNaN(date.getTime()) ? String(point.at) : formatLocal(date);
}

// Attempts per step as bars: successes, failures and the rest (skipped) stacked.
export function attemptsChart(points) {
  const max = niceCeiling(Math.max(0, ...points.map((p) => num(p.attempts))));
  const ticks = [0, 0.5, 1].map((f) => ({ value: f, text: String(Math.round(max * f)) }));
  const root = frame('Attempts per step: successes, failures and skipped', ticks, points);
  const slot = PLOT_W / Math.max(points.length, 1);
  const barW = Math.max(1, Math.min(24, slot * 0.7));
  const base = MARGIN.top + PLOT_H;
  points.forEach((p, i) => {
    const attempts = num(p.attempts);
    const successes = Math.min(num(p.successes), attempts);
    const failures = Math.min(num(p.failures), attempts - successes);
    const other = attempts - successes - failures;
    const group = svg('g', null, svg('title', null,
      `${when(p)}: ${attempts} attempts, ${successes} succeeded, ${failures} failed`));
    let y = base;
    for (const [value, cls] of [[successes, 'bar-ok'], [failures, 'bar-bad'], [other, 'bar-other']]) {
      if (value <= 0) continue;
      const height = (value / max) * PLOT_H;
      y -= height;
      group.appendChild(svg('rect', {
        class: cls, x: xCenter(i, points.length) - barW / 2, y, width: barW, height,
      }));
    }
    // A transparent full-height target makes the tooltip easy to reach.
    group.appendChild(svg('rect', {
      class: 'bar-hit', x: xCenter(i, points.length) - slot / 2, y: MARGIN.top, width: slot, height: PLOT_H,
    }));
    root.appendChild(group);
  });
  return root;
}

// Success rate (successes / attempts) per step as a line; steps without attempts are gaps.
export function successRateChart(points) {
  const ticks = [0, 0.5, 1].map((f) => ({ value: f, text: `${f * 100}%` }));
  const root = frame('Success rate per step', ticks, points);
  let d = '';
  let drawing = false;
  const dots = [];
  points.forEach((p, i) => {
    const attempts = num(p.attempts);
    if (attempts <= 0) {
      drawing = false;
      return;
    }
    const rate = Math.min(1, num(p.successes) / attempts);
    const x = xCenter(i, points.length);
    const y = MARGIN.top + PLOT_H - rate * PLOT_H;
    d += `${drawing ? 'L' : 'M'}${x.toFixed(1)} ${y.toFixed(1)} `;
    drawing = true;
    // With many points the dots only show under the pointer (they carry the tooltips).
    dots.push(svg('circle', {
      class: ['line-dot', points.length > MANY_POINTS ? 'line-dot-quiet' : null], cx: x, cy: y, r: 3,
    },
      svg('title', null, `${when(p)}: ${(rate * 100).toFixed(1)}% of ${attempts} attempts`)));
  });
  if (d) root.appendChild(svg('path', { class: 'line', d: d.trim() }));
  for (const dot of dots) root.appendChild(dot);
  return root;
}

export function legend(items) {
  return h('ul', { class: 'legend' }, items.map(([cls, text]) =>
    h('li', null, h('span', { class: ['swatch', cls], 'aria-hidden': 'true' }), text)));
}
