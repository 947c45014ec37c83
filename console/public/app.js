// The webhookd console: sign-in, the page frame and hash routing. Each page lives in
// views/ and is a function (ctx) -> Node that fills itself in as its data arrives.

import {
  ApiError, describeKey, detectRole, forgetKey, setUnauthorizedHandler, storedKey, storeKey,
} from './api.js';
import { button, dropStaleToast, errorBox, h, loading, replace } from './dom.js';
import * as catalog from './views/catalog.js';
import * as deadLetters from './views/dead_letters.js';
import * as delivery from './views/delivery.js';
import * as destination from './views/destination.js';
import * as destinationForm from './views/destination_form.js';
import * as destinations from './views/destinations.js';
import * as events from './views/events.js';
import * as overview from './views/overview.js';
import * as sources from './views/sources.js';

const ROLE_LABELS = { admin: 'Admin', publisher: 'Publisher', tenant: 'Tenant portal' };

const session = {
  role: null, // 'admin' | 'publisher' | 'tenant', once the key is known to work
  notice: '', // shown on the sign-in page (e.g. why the session ended)
  offeredKey: null, // a link's key, held in memory alone until the user accepts it
};

// Where each role may go, in menu order.
const NAV = [
  { path: '/overview', label: 'Overview', roles: ['admin'] },
  { path: '/destinations', label: 'Destinations', roles: ['admin', 'publisher', 'tenant'] },
  { path: '/events', label: 'Events', roles: ['admin', 'publisher', 'tenant'] },
  { path: '/catalog', label: 'Catalog', roles: ['admin', 'publisher', 'tenant'] },
  { path: '/sources', label: 'Sources', roles: ['admin', 'publisher', 'tenant'] },
  { path: '/dead-letters', label: 'Dead letters', roles: ['admin', 'tenant'] },
];

// [pattern, view, page title, roles]; ":id" captures one segment.
const ROUTES = [
  ['/overview', overview.render, 'Overview', ['admin']],
  ['/destinations', destinations.renderList, 'Destinations'],
  ['/destinations/new', destinationForm.renderForm, 'New destination'],
  ['/destinations/:id', destination.renderDetail, 'Destination'],
  ['/destinations/:id/edit', destinationForm.renderForm, 'Edit destination'],
  ['/events', events.renderList, 'Events'],
  ['/events/:id', events.renderDetail, 'Event'],
  ['/deliveries/:id', delivery.render, 'Delivery'],
  ['/catalog', catalog.renderList, 'Catalog'],
  ['/catalog/new', catalog.renderForm, 'New event type', ['admin', 'publisher']],
  ['/catalog/types/:name', catalog.renderDetail, 'Event type'],
  ['/catalog/types/:name/edit', catalog.renderForm, 'Edit event type', ['admin', 'publisher']],
  ['/dead-letters', deadLetters.render, 'Dead letters', ['admin', 'tenant']],
  ['/sources', sources.renderList, 'Sources'],
  ['/sources/new', sources.renderForm, 'New source'],
  ['/sources/:id', sources.renderDetail, 'Source'],
];

function homePath() {
  return session.role === 'admin' ? '/overview' : '/destinations';
}

function parseHash() {
  const raw = window.location.hash.replace(/^#/, '');
  const [pathPart, queryPart = ''] = raw.split('?', 2);
  const path = pathPart && pathPart.startsWith('/') ? pathPart.replace(/\/+$/, '') || '/' : '/';
  return { path, query: new URLSearchParams(queryPart) };
}

function matchRoute(path) {
  const parts = path.split('/').filter(Boolean);
  for (const [pattern, view, title, roles] of ROUTES) {
    const want = pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params = {};
    let ok = true;
    want.forEach((seg, i) => {
      if (seg.startsWith(':')) {
        try {
          params[seg.slice(1)] = decodeURIComponent(parts[i]);
        } catch {
          ok = false;
        }
      } else if (seg !== parts[i]) {
        ok = false;
      }
    });
    if (ok) return { view, title, roles, params };
  }
  return null;
}

let current = null; // the page on screen: {controller, cleanups}

// A portal link is /ui/#key=<key>. The key leaves the address bar (and this history
// entry) before anything else happens, so it is never shown, bookmarked or shared. It is
// never used silently either: a link someone else made would sign the user in to the
// tenant of whoever made it (login CSRF), and what they set up there would be the
// attacker's. The page names the tenant and waits for Continue; until then the key is
// held in memory alone, never in storage.
function takeKeyFromFragment() {
  const fragment = window.location.hash.replace(/^#/, '');
  if (!fragment.startsWith('key=')) return;
  let key;
  try {
    key = decodeURIComponent(fragment.slice(4));
  } catch {
    key = '';
  }
  window.history.replaceState(null, '', '/ui/');
  if (!key || key === storedKey()) return;
  session.offeredKey = key;
}

const ROLE_PHRASES = { admin: 'an admin key', publisher: 'a publisher key' };

// What the link signs in to, as the lookup found it; the tenant is a text node.
function linkTarget({ role, tenant }) {
  if (role !== 'tenant') {
    return h('p', null, `This link signs you in with ${ROLE_PHRASES[role] || 'a key'}, not to a tenant portal. Continue?`);
  }
  if (tenant) {
    return h('p', null, 'This link signs you in to the webhook portal of tenant ',
      h('strong', { id: 'link-tenant', class: 'mono' }, tenant), '. Continue?');
  }
  return h('p', null, 'This link signs you in to the webhook portal of a tenant whose name ' +
    'the key does not reveal: it has no destinations, events or dead letters yet. Continue?');
}

function renderLinkConfirm() {
  document.title = 'Open this link? · webhookd';
  // The menu and Sign out stay hidden: nothing but Continue or Cancel leaves this screen.
  document.body.classList.add('signed-out');
  const key = session.offeredKey;
  const main = document.getElementById('main');
  const controller = new AbortController();
  current = { controller, cleanups: [] };
  const page = current;
  const cancel = button('Cancel', () => {
    session.offeredKey = null;
    if (!storedKey()) session.notice = 'The link was not used; no key was kept.';
    render({ focus: true });
  }, { class: 'btn-ghost', id: 'link-cancel' });
  const body = h('div', { id: 'link-target' }, loading('Checking the link…'));
  const actions = h('div', { class: 'actions' }, cancel);
  const signedIn = storedKey()
    ? h('div', { class: 'alert alert-warn', id: 'link-replaces' },
      'This tab is signed in with another key. Continuing signs that key out and uses the link’s instead.')
    : null;
  replace(main, h('div', { class: 'signin' }, h('section', { class: 'signin-card', id: 'link-confirm' },
    h('h1', { tabindex: '-1' }, 'Open this link?'),
    body,
    signedIn,
    h('p', { class: 'hint' }, 'Continue only if you expected this link from the service that sends you webhooks. ' +
      'A link someone else made signs you in to their tenant, and what you set up there is theirs.'),
    actions)));
  cancel.focus();
  describeKey(key, controller.signal).then((found) => {
    if (current !== page) return;
    const go = button('Continue', () => {
      storeKey(key);
      session.offeredKey = null;
      session.role = found.role;
      session.notice = '';
      window.history.replaceState(null, '', `/ui/#${homePath()}`);
      render({ focus: true });
    }, { class: 'btn-primary', id: 'link-continue' });
    replace(body, linkTarget(found));
    replace(actions, go, cancel);
  }, (err) => {
    if (current !== page || (err && err.name === 'AbortError')) return;
    replace(body, err instanceof ApiError && err.status === 401
      ? h('div', { class: 'alert alert-error', role: 'alert' },
        'This link’s key is not accepted: it is unknown, expired or revoked. Ask for a new link.')
      : errorBox(err, 'Could not check the link'));
  });
}

function leavePage() {
  if (!current) return;
  current.controller.abort();
  for (const fn of current.cleanups) {
    try {
      fn();
    } catch {
      // a cleanup that fails must not keep the next page from showing
    }
  }
  current = null;
}

function signOut(notice = '') {
  leavePage();
  forgetKey();
  session.role = null;
  session.notice = notice;
  if (window.location.hash) window.history.replaceState(null, '', '/ui/');
  render();
}

setUnauthorizedHandler(() => {
  signOut('The key is no longer accepted (expired or revoked). Sign in again.');
});

function renderNav(activePath) {
  const nav = document.getElementById('nav');
  const links = NAV.filter((item) => item.roles.includes(session.role)).map((item) => {
    const active = activePath === item.path || activePath.startsWith(`${item.path}/`) ||
      (item.path === '/events' && activePath.startsWith('/deliveries/'));
    return h('a', {
      href: `#${item.path}`,
      class: active ? 'active' : null,
      'aria-current': active ? 'page' : null,
    }, item.label);
  });
  replace(nav, links);
  const who = document.getElementById('session');
  replace(who,
    h('span', { class: 'role', title: 'What this key may do' }, ROLE_LABELS[session.role] || ''),
    button('Sign out', () => signOut('Signed out.'), { class: 'btn-ghost', id: 'sign-out' }));
}

function renderSignedOut() {
  document.body.classList.add('signed-out');
  replace(document.getElementById('nav'));
  replace(document.getElementById('session'));
  document.title = 'Sign in · webhookd';
  const main = document.getElementById('main');
  const input = h('input', {
    id: 'api-key', name: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false',
    required: true, placeholder: 'whk_\u2026', 'aria-describedby': 'key-help',
  });
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  if (session.notice) replace(status, h('div', { class: 'alert alert-info' }, session.notice));
  const submit = h('button', { type: 'submit', class: 'btn-primary' }, 'Sign in');
  const form = h('form', { class: 'signin-card', novalidate: true },
    h('h1', null, 'Sign in to webhookd'),
    h('p', { class: 'muted' }, 'Paste an API key. Admin keys see everything; publisher keys see destinations and events; a tenant key (or a portal link) sees one tenant.'),
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h('p', { id: 'key-help', class: 'hint' },
      'The key stays in this browser tab (session storage) and is sent only in the Authorization header. Closing the tab forgets it.'),
    status,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      replace(status, h('div', { class: 'alert alert-error', role: 'alert' }, 'Enter an API key.'));
      input.focus();
      return;
    }
    submit.disabled = true;
    replace(status, loading('Checking the key\u2026'));
    try {
      const role = await detectRole(key);
      storeKey(key);
      session.role = role;
      session.notice = '';
      input.value = '';
      // A deep link opened before signing in is kept; otherwise go to the start page.
      if (parseHash().path === '/') window.history.replaceState(null, '', `/ui/#${homePath()}`);
      render({ focus: true });
    } catch (err) {
      const message = err instanceof ApiError && err.status === 401
        ? 'This key was not accepted: it is unknown, expired or revoked.'
        : err.message;
      replace(status, h('div', { class: 'alert alert-error', role: 'alert' }, message));
      submit.disabled = false;
      input.focus();
    }
  });
  replace(main, h('div', { class: 'signin' }, form));
  input.focus();
}

let rendering = 0;

async function render({ focus = false } = {}) {
  const generation = ++rendering;
  leavePage();
  dropStaleToast();
  if (session.offeredKey) {
    renderLinkConfirm();
    return;
  }
  if (!storedKey()) {
    renderSignedOut();
    return;
  }
  document.body.classList.remove('signed-out');
  const main = document.getElementById('main');
  if (!session.role) {
    replace(main, loading('Signing in\u2026'));
    try {
      session.role = await detectRole(storedKey());
    } catch (err) {
      if (generation !== rendering) return;
      if (err instanceof ApiError && err.status === 401) {
        signOut('This key was not accepted: it is unknown, expired or revoked.');
      } else {
        replace(main, errorBox(err, 'Could not sign in'),
          button('Try again', () => render(), { class: 'btn-primary' }));
      }
      return;
    }
    if (generation !== rendering) return;
  }

  const { path, query } = parseHash();
  if (path === '/') {
    window.history.replaceState(null, '', `/ui/#${homePath()}`);
    render();
    return;
  }
  renderNav(path);
  const route = matchRoute(path);
  const controller = new AbortController();
  current = { controller, cleanups: [] };
  const page = current;
  const ctx = {
    role: session.role,
    params: route ? route.params : {},
    query,
    signal: controller.signal,
    alive: () => current === page,
    onLeave: (fn) => page.cleanups.push(fn),
    navigate: (hash) => {
      window.location.hash = hash;
    },
  };
  let node;
  if (!route) {
    document.title = 'Not found · webhookd';
    node = h('section', null, h('h1', { tabindex: '-1' }, 'Page not found'),
      h('p', null, 'There is no page at this address. ', h('a', { href: `#${homePath()}` }, 'Go to the start page'), '.'));
  } else if (route.roles && !route.roles.includes(session.role)) {
    document.title = `${route.title} · webhookd`;
    node = h('section', null, h('h1', { tabindex: '-1' }, route.title),
      h('div', { class: 'alert alert-info' }, 'This key may not see this page.'));
  } else {
    document.title = `${route.title} · webhookd`;
    node = route.view(ctx);
  }
  replace(main, node);
  if (focus) {
    const heading = main.querySelector('h1');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus({ preventScroll: true });
    }
    window.scrollTo(0, 0);
  }
}

window.addEventListener('hashchange', () => {
  takeKeyFromFragment();
  render({ focus: true });
});

takeKeyFromFragment();
render();
