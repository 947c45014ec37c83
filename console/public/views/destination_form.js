// The destination form: create, and edit.

import * as api from '../api.js';
import { button, busy, errorBox, h, loading, replace, show, toast } from '../dom.js';
import { indent } from '../json_text.js';
import { loadCatalog, typeBadges } from './catalog.js';
import { pageHeader } from './common.js';
import {
  BROKER_SETTINGS, TRANSPORT_LABELS, brokerOrigin, destinationLabel, rememberCreatedSecret, transportOf,
} from './destination_shared.js';

function parseHeaders(text) {
  const headers = {};
  const problems = [];
  text.split('\n').forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed) return;
    const colon = trimmed.indexOf(':');
    if (colon <= 0) {
      problems.push(`line ${i + 1} is not "Name: value"`);
      return;
    }
    headers[trimmed.slice(0, colon).trim()] = trimmed.slice(colon + 1).trim();
  });
  return { headers, problems };
}

function headersText(headers) {
  if (!headers || typeof headers !== 'object') return '';
  return Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\n');
}

function select(id, name, options, value) {
  const input = h('select', { id, name }, options.map(([v, text]) => h('option', { value: v }, text)));
  input.value = value;
  return input;
}

function eventTypeList(text) {
  return text.split(/[\s,]+/).filter(Boolean);
}

// Whether the entry `pattern` of a destination's event types takes type `name`: the
// name itself, or "p.*" for every type starting with "p.".
function takes(pattern, name) {
  return pattern.endsWith('.*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

// Whether a destination with these event types gets events of type `name`. An empty
// list means every type but webhookd's own, which must be named.
function subscribed(list, t) {
  if (!list.length) return !t.builtin;
  return list.some((p) => takes(p, t.name));
}

// The catalog's types as checkboxes that write into (and follow) the event types input,
// which stays the one source: patterns such as "order.*" are typed there.
function catalogPicker(ctx, input, onTypes) {
  const node = h('fieldset', { class: 'catalog-picker', id: 'catalog-picker' },
    h('legend', null, 'From the catalog'),
    loading('Loading the catalog\u2026'));
  let boxes = [];
  const sync = () => {
    const list = eventTypeList(input.value);
    for (const { box, t, via } of boxes) {
      const exact = list.includes(t.name);
      const pattern = exact ? null : list.find((p) => p !== t.name && takes(p, t.name));
      box.checked = exact || Boolean(pattern);
      box.disabled = Boolean(pattern);
      replace(via, pattern ? ` via ${pattern}` : '');
    }
  };
  const toggle = (t, on) => {
    const list = eventTypeList(input.value).filter((p) => p !== t.name);
    if (on) list.push(t.name);
    input.value = list.join(', ');
    input.dispatchEvent(new Event('input'));
  };
  input.addEventListener('input', sync);
  loadCatalog(ctx.signal).then((all) => {
    if (!ctx.alive()) return;
    // webhookd's own types never reach a tenant's destination.
    const types = all.filter((t) => !(t.builtin && ctx.role === 'tenant'));
    onTypes(types);
    if (!types.length) {
      replace(node, h('legend', null, 'From the catalog'),
        h('p', { class: 'hint' }, 'The catalog has no event types yet: type names and patterns above.'));
      return;
    }
    boxes = types.map((t, i) => {
      const box = h('input', {
        type: 'checkbox', id: `catalog-type-${i}`, value: t.name,
        onchange: () => toggle(t, box.checked),
      });
      return { box, t, via: h('span', { class: 'muted small' }) };
    });
    replace(node, h('legend', null, 'From the catalog'),
      h('ul', { class: 'checklist' }, boxes.map(({ box, t, via }) => h('li', null, box,
        h('label', { for: box.id, title: t.description || null },
          h('span', { class: 'mono' }, t.name), typeBadges(t), via)))));
    sync();
  }, (err) => {
    if (!ctx.alive() || err.name === 'AbortError') return;
    replace(node, h('legend', null, 'From the catalog'),
      h('p', { class: 'hint' }, `The catalog could not be loaded (${err.message}); type names and patterns above.`));
  });
  return node;
}

// "Test against an example": a payload from the catalog's examples of the types the
// destination takes (or pasted), tested with POST /v1/filters/test, the fan-out's own
// test.
function filterTester(ctx, filterInput, eventTypesInput) {
  let types = [];
  const picker = h('select', { id: 'filter-example', name: 'filter_example' });
  const payload = h('textarea', {
    id: 'filter-payload', name: 'filter_payload', rows: 6, spellcheck: 'false',
    placeholder: '{"amount": 150, "currency": "EUR"}', 'aria-describedby': 'filter-payload-help',
  });
  const result = h('div', { id: 'filter-result', class: 'filter-result', 'aria-live': 'polite' });
  let offered = [];
  const refresh = () => {
    const list = eventTypeList(eventTypesInput.value);
    offered = [];
    for (const t of types) {
      if (!subscribed(list, t)) continue;
      t.examples.forEach((raw, i) => offered.push({ label: `${t.name} \u2014 example ${i + 1}`, raw }));
    }
    const chosen = picker.value;
    replace(picker,
      h('option', { value: '' }, offered.length ? 'Choose an example\u2026' : 'No examples in the catalog for these types'),
      offered.map((o, i) => h('option', { value: String(i) }, o.label)));
    picker.value = offered[Number(chosen)] ? chosen : '';
  };
  picker.addEventListener('change', () => {
    const o = offered[Number(picker.value)];
    if (!picker.value || !o) return;
    let text = o.raw;
    try {
      text = indent(o.raw);
    } catch {
      // shown as the server sent it
    }
    payload.value = text;
    replace(result);
  });
  eventTypesInput.addEventListener('input', refresh);
  refresh();

  const say = (kind, ...content) => replace(result,
    h('div', { class: ['alert', `alert-${kind}`], role: kind === 'error' ? 'alert' : null }, content));
  const test = button('Test', () => busy(test, async () => {
    const filter = filterInput.value.trim();
    const text = payload.value.trim();
    if (!filter) return say('info', 'Enter a filter to test.');
    if (!text) return say('info', 'Choose an example or paste a payload.');
    let value;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return say('error', `The payload is not valid JSON (${err.message}).`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return say('error', 'The payload must be a JSON object.');
    }
    replace(result, loading('Testing\u2026'));
    try {
      // The payload's text as typed, so a number keeps every digit.
      const { json } = await api.request('POST', '/v1/filters/test', {
        jsonText: `{"filter":${JSON.stringify(filter)},"payload":${text}}`, signal: ctx.signal,
      });
      if (!ctx.alive()) return undefined;
      if (json && json.matches === true) {
        say('ok', h('span', { class: 'badge badge-ok badge-plain', id: 'filter-verdict' }, 'matches'),
          ' This payload would be delivered.');
      } else {
        say('warn', h('span', { class: 'badge badge-muted badge-plain', id: 'filter-verdict' }, 'does not match'),
          ' This payload would not be delivered.');
      }
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.alive()) return undefined;
      const errors = err.problem && Array.isArray(err.problem.errors) ? err.problem.errors : [];
      const lines = errors.filter((e) => e && typeof e.field === 'string' && typeof e.message === 'string')
        .map((e) => `${e.field === 'filter' ? 'The filter' : e.field} ${e.message}`);
      say('error', h('strong', null, 'Not tested: '), lines.length ? lines.join('; ') : err.message);
    }
    return undefined;
  }), { id: 'filter-test', class: 'btn-secondary' });

  return {
    setTypes: (t) => {
      types = t;
      refresh();
    },
    node: h('div', { class: 'filter-test', role: 'group', 'aria-labelledby': 'filter-test-title' },
      h('h3', { id: 'filter-test-title' }, 'Test against an example'),
      h('div', { class: 'field' },
        h('label', { for: 'filter-example' }, 'Example payload'), picker),
      h('div', { class: 'field' },
        h('label', { for: 'filter-payload' }, 'Payload'), payload,
        h('p', { class: 'hint', id: 'filter-payload-help' },
          'An example of the types above, or any JSON object pasted here. Nothing is published.')),
      h('div', { class: 'toolbar' }, test),
      result),
  };
}

function field(id, label, input, help) {
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  input.setAttribute('aria-describedby', help ? `${id}-help ${id}-error` : `${id}-error`);
  return {
    node: h('div', { class: 'field' },
      h('label', { for: id }, label), input,
      help ? h('p', { class: 'hint', id: `${id}-help` }, help) : null,
      error),
    error,
    input,
  };
}

// PEM text as it is sent: trimmed, ending with one newline; null when blank.
function pemText(text) {
  const trimmed = typeof text === 'string' ? text.trim() : '';
  return trimmed ? `${trimmed}\n` : null;
}

// "Mutual TLS": the client certificate and its key, presented to receivers that ask for
// one, and a CA trusted instead of the system's. The key is write-only: a stored key is
// never in the page; it shows as set and is kept (sent as "set") unless a new one is
// pasted, or the certificate is emptied, which takes the key with it.
function tlsSection(d) {
  const tls = d && d.tls && typeof d.tls === 'object' ? d.tls : null;
  let keyStored = Boolean(tls && tls.client_key);
  const pem = (id, name, value, placeholder) => h('textarea', {
    id, name, rows: 4, spellcheck: 'false', autocomplete: 'off', class: 'pem', placeholder,
    value: value || '',
  });
  const certificate = field('dest-tls-cert', 'Client certificate', pem('dest-tls-cert',
    'tls_client_certificate', tls && tls.client_certificate, '-----BEGIN CERTIFICATE-----'),
  'PEM. Presented to receivers that ask for a client certificate.');
  const key = field('dest-tls-key', 'Client key', pem('dest-tls-key', 'tls_client_key', '',
    keyStored ? 'Leave empty to keep the key that is set' : '-----BEGIN PRIVATE KEY-----'),
  'The certificate\u2019s private key, PEM, not encrypted. Write-only: once saved it shows as set and is never shown again.');
  const ca = field('dest-tls-ca', 'CA certificate (optional)', pem('dest-tls-ca',
    'tls_ca_certificate', tls && tls.ca_certificate, '-----BEGIN CERTIFICATE-----'),
  'PEM. When given, the receiver\u2019s certificate must chain to it, and the system\u2019s CAs are not trusted.');
  key.input.setAttribute('aria-describedby', 'dest-tls-key-status dest-tls-key-help dest-tls-key-error');

  const keyStatus = h('p', { class: 'key-status', id: 'dest-tls-key-status', 'aria-live': 'polite' });
  const showKeyStatus = () => {
    if (!keyStored) {
      replace(keyStatus);
    } else if (!certificate.input.value.trim()) {
      replace(keyStatus, h('span', { class: 'badge badge-warn badge-plain' }, 'key set'),
        ' Emptied with its certificate, the key that is set is removed when you save.');
    } else {
      replace(keyStatus, h('span', { class: 'badge badge-ok badge-plain', id: 'dest-tls-key-set' }, 'key set'),
        ' A key is set. It is kept unless you paste a new one.');
    }
  };
  certificate.input.addEventListener('input', showKeyStatus);
  showKeyStatus();
  key.node.insertBefore(keyStatus, key.input);

  const removed = h('p', { class: 'hint', id: 'dest-tls-removed', 'aria-live': 'polite' });
  const remove = tls ? button('Remove TLS settings', () => {
    for (const f of [certificate, key, ca]) f.input.value = '';
    keyStored = false;
    showKeyStatus();
    replace(removed, 'The TLS settings are removed when you save; paste new ones to replace them instead.');
  }, { id: 'dest-tls-remove', class: 'btn-small btn-secondary' }) : null;

  // What the form holds, in the API's form: null for no settings.
  const value = () => {
    const cert = pemText(certificate.input.value);
    const typedKey = pemText(key.input.value);
    const out = {
      client_certificate: cert,
      client_key: typedKey ?? (keyStored && cert ? 'set' : null),
      ca_certificate: pemText(ca.input.value),
    };
    return out.client_certificate || out.client_key || out.ca_certificate ? out : null;
  };
  // What the destination has, in the same form, to see whether anything changed.
  const current = tls ? {
    client_certificate: pemText(tls.client_certificate),
    client_key: tls.client_key ? 'set' : null,
    ca_certificate: pemText(tls.ca_certificate),
  } : null;

  return {
    fields: {
      'tls.client_certificate': certificate,
      'tls.client_key': key,
      'tls.ca_certificate': ca,
    },
    value,
    current,
    node: h('fieldset', { class: 'tls-settings', id: 'tls-settings' },
      h('legend', null, 'Mutual TLS'),
      h('p', { class: 'hint tls-intro' },
        'Only for receivers that require a client certificate, or whose certificate a private CA signed. Leave empty otherwise.'),
      certificate.node, key.node, ca.node,
      remove ? h('div', { class: 'toolbar' }, remove) : null,
      removed),
  };
}

// "OAuth 2.0": client credentials (RFC 6749 4.4); webhookd fetches a token from the token
// URL and sends it as a bearer token with every attempt. The client secret is write-only:
// a stored secret is never in the page; it shows as set and is kept (sent as "set")
// unless a new one is typed, or every other field is emptied, which takes it with them.
function oauthSection(d) {
  const auth = d && d.auth && typeof d.auth === 'object' ? d.auth : null;
  let secretStored = Boolean(auth && auth.client_secret);
  const text = (id, name, value, attrs = {}) => h('input', {
    id, name, autocomplete: 'off', spellcheck: 'false', value: value || '', ...attrs,
  });
  const tokenUrl = field('dest-oauth-token-url', 'Token URL', text('dest-oauth-token-url',
    'auth_token_url', auth && auth.token_url, { type: 'url', placeholder: 'https://auth.example.com/oauth2/token' }),
  'Where a token is asked for with the client credentials, as an http or https URL.');
  const clientId = field('dest-oauth-client-id', 'Client id', text('dest-oauth-client-id',
    'auth_client_id', auth && auth.client_id));
  const secret = field('dest-oauth-client-secret', 'Client secret', text('dest-oauth-client-secret',
    'auth_client_secret', '', {
      type: 'password', autocomplete: 'new-password',
      placeholder: secretStored ? 'Leave empty to keep the secret that is set' : '',
    }),
  'Write-only: once saved it shows as set and is never shown again.');
  const scope = field('dest-oauth-scope', 'Scope (optional)', text('dest-oauth-scope',
    'auth_scope', auth && auth.scope, { placeholder: 'webhooks:write' }),
  'Space-separated, as the authorization server expects it; empty asks for none.');
  secret.input.setAttribute('aria-describedby',
    'dest-oauth-secret-status dest-oauth-client-secret-help dest-oauth-client-secret-error');

  // Whether the fields other than the secret are all empty: the settings go with them.
  const emptied = () => ![tokenUrl, clientId, scope].some((f) => f.input.value.trim());
  const secretStatus = h('p', { class: 'key-status', id: 'dest-oauth-secret-status', 'aria-live': 'polite' });
  const showSecretStatus = () => {
    if (!secretStored) {
      replace(secretStatus);
    } else if (emptied()) {
      replace(secretStatus, h('span', { class: 'badge badge-warn badge-plain' }, 'secret set'),
        ' Emptied with the other fields, the secret that is set is removed when you save.');
    } else {
      replace(secretStatus, h('span', { class: 'badge badge-ok badge-plain', id: 'dest-oauth-secret-set' }, 'secret set'),
        ' A client secret is set. It is kept unless you type a new one.');
    }
  };
  for (const f of [tokenUrl, clientId, scope]) f.input.addEventListener('input', showSecretStatus);
  showSecretStatus();
  secret.node.insertBefore(secretStatus, secret.input);

  const removed = h('p', { class: 'hint', id: 'dest-oauth-removed', 'aria-live': 'polite' });
  const remove = auth ? button('Remove OAuth settings', () => {
    for (const f of [tokenUrl, clientId, secret, scope]) f.input.value = '';
    secretStored = false;
    showSecretStatus();
    replace(removed, 'The OAuth settings are removed when you save; fill them in again to replace them instead.');
  }, { id: 'dest-oauth-remove', class: 'btn-small btn-secondary' }) : null;

  // What the form holds, in the API's form: null for no settings. A required field left
  // empty is sent as null for the API to name it.
  const value = () => {
    const typedSecret = secret.input.value;
    if (emptied() && !typedSecret) return null;
    return {
      type: 'oauth2_client_credentials',
      token_url: tokenUrl.input.value.trim() || null,
      client_id: clientId.input.value.trim() || null,
      client_secret: typedSecret || (secretStored ? 'set' : null),
      scope: scope.input.value.trim() || null,
    };
  };
  // What the destination has, in the same form, to see whether anything changed.
  const trimmed = (x) => (typeof x === 'string' && x.trim()) || null;
  const current = auth ? {
    type: 'oauth2_client_credentials',
    token_url: trimmed(auth.token_url),
    client_id: trimmed(auth.client_id),
    client_secret: auth.client_secret ? 'set' : null,
    scope: trimmed(auth.scope),
  } : null;

  return {
    fields: {
      'auth.token_url': tokenUrl,
      'auth.client_id': clientId,
      'auth.client_secret': secret,
      'auth.scope': scope,
    },
    value,
    current,
    node: h('fieldset', { class: 'oauth-settings', id: 'oauth-settings' },
      h('legend', null, 'OAuth 2.0'),
      h('p', { class: 'hint oauth-intro' },
        'Only for receivers that want a bearer token from an OAuth 2.0 server (client credentials). Leave empty otherwise.'),
      h('div', { class: 'grid-2 tight' }, tokenUrl.node, clientId.node),
      h('div', { class: 'grid-2 tight' }, secret.node, scope.node),
      remove ? h('div', { class: 'toolbar' }, remove) : null,
      removed),
  };
}

// "Transport": what the URL's scheme delivers to. An http(s) URL takes no broker
// settings; a broker's URL (amqp, nats, redis, kafka) shows that broker's settings only,
// a fieldset each, and the credentials every broker takes. The username and password are
// write-only: a stored one is never in the page; it shows as set and is kept (sent as
// "set") unless a new one is typed or the credentials are removed. `broker` replaces
// every setting, so the settings go together, as the API wants them.
function brokerSection(d, urlInput) {
  const stored = d && d.broker && typeof d.broker === 'object' ? d.broker : null;
  const storedTransport = d ? transportOf(d.url) : null;
  const storedOrigin = d ? brokerOrigin(d.url) : null;
  const text = (id, name, value, attrs = {}) => h('input', {
    id, name, autocomplete: 'off', spellcheck: 'false', value: value || '', ...attrs,
  });
  const idOf = (name) => `dest-broker-${name.replaceAll('_', '-')}`;

  const fields = {};
  const fieldsets = {};
  for (const [transport, settings] of Object.entries(BROKER_SETTINGS)) {
    // A setting shows its stored value only under the transport it was stored for.
    const own = stored && storedTransport === transport ? stored : null;
    const nodes = settings.map((s) => {
      const id = idOf(s.name);
      const value = own && own[s.name] != null ? String(own[s.name]) : '';
      const attrs = s.integer
        ? { type: 'number', min: 1, max: 1000000000, step: 1, placeholder: s.placeholder }
        : { placeholder: s.placeholder, class: 'mono' };
      if (s.required) attrs['aria-required'] = 'true';
      const f = field(id, s.required ? s.label : `${s.label} (optional)`,
        text(id, `broker_${s.name}`, value, attrs), s.hint);
      fields[`broker.${s.name}`] = f;
      return f.node;
    });
    fieldsets[transport] = h('fieldset', {
      class: 'broker-transport', id: `broker-${transport}`, hidden: true,
    }, h('legend', null, TRANSPORT_LABELS[transport]),
    nodes.length > 1 ? h('div', { class: 'grid-2 tight' }, nodes) : nodes);
  }

  // The credentials: write-only, each with its own status line.
  const credentials = [
    { name: 'username', label: 'Username (optional)', attrs: { type: 'text' } },
    { name: 'password', label: 'Password (optional)', attrs: { type: 'password', autocomplete: 'new-password' } },
  ].map((c) => {
    const id = idOf(c.name);
    const isStored = Boolean(stored && stored[c.name]);
    const f = field(id, c.label, text(id, `broker_${c.name}`, '', {
      ...c.attrs,
      placeholder: isStored ? `Leave empty to keep the ${c.name} that is set` : '',
    }), c.name === 'password'
      ? 'Required with a username. Write-only: once saved it shows as set and is never shown again.'
      : 'Write-only: once saved it shows as set and is never shown again.');
    const status = h('p', { class: 'key-status', id: `${id}-status`, 'aria-live': 'polite' });
    f.input.setAttribute('aria-describedby', `${id}-status ${id}-help ${id}-error`);
    f.node.insertBefore(status, f.input);
    fields[`broker.${c.name}`] = f;
    return { ...c, f, status, stored: isStored };
  });

  const transportLine = h('p', { class: 'hint broker-intro', id: 'dest-transport', 'aria-live': 'polite' });
  const credentialsNode = h('fieldset', { class: 'broker-transport', id: 'broker-credentials', hidden: true },
    h('legend', null, 'Credentials'),
    h('div', { class: 'grid-2 tight' }, credentials.map((c) => c.f.node)));
  const removed = h('p', { class: 'hint', id: 'dest-broker-removed', 'aria-live': 'polite' });
  const remove = credentials.some((c) => c.stored) ? button('Remove the credentials', () => {
    for (const c of credentials) {
      c.f.input.value = '';
      c.stored = false;
    }
    sync();
    replace(removed, 'The username and password are removed when you save; type new ones to replace them instead.');
  }, { id: 'dest-broker-credentials-remove', class: 'btn-small btn-secondary' }) : null;
  if (remove) credentialsNode.append(h('div', { class: 'toolbar' }, remove));
  credentialsNode.append(removed);

  // The transport shown, so that the line (a live region) changes only with it.
  let shown;
  function sync() {
    const url = urlInput.value.trim();
    const transport = transportOf(url);
    const broker = Object.hasOwn(BROKER_SETTINGS, transport || '');
    for (const [t, node] of Object.entries(fieldsets)) node.hidden = t !== transport;
    credentialsNode.hidden = !broker;
    const kind = broker || transport === 'http' || !url ? transport || 'http' : 'none';
    if (kind === shown) {
      // unchanged
    } else if (broker) {
      replace(transportLine, 'Transport: ', h('strong', { id: 'dest-transport-name' }, TRANSPORT_LABELS[transport]),
        '. Each webhook is published to this broker, signed and with its headers as over HTTP.');
    } else if (transport === 'http' || !url) {
      replace(transportLine, 'Transport: ', h('strong', { id: 'dest-transport-name' }, TRANSPORT_LABELS.http),
        '. A broker\u2019s URL (amqp://, nats://, redis:// or kafka://) shows its settings here.');
    } else {
      replace(transportLine, 'Transport: ', h('strong', { id: 'dest-transport-name' }, 'none'),
        '. The URL\u2019s scheme names no transport: use http, https, amqp, nats, redis or kafka.');
    }
    shown = kind;
    // The stored credentials were given for the broker of the stored url.
    const moved = broker && storedOrigin !== null && brokerOrigin(url) !== storedOrigin;
    for (const c of credentials) {
      if (!c.stored) {
        replace(c.status);
      } else if (!broker) {
        replace(c.status, h('span', { class: 'badge badge-warn badge-plain' }, `${c.name} set`),
          ` Not a broker\u2019s URL: the ${c.name} that is set is removed when you save.`);
      } else if (moved && !c.f.input.value) {
        replace(c.status, h('span', { class: 'badge badge-warn badge-plain', id: `${idOf(c.name)}-set` }, `${c.name} set`),
          ' Given for the broker of the saved URL: type it again, or remove the credentials, to move to another broker.');
      } else {
        replace(c.status, h('span', { class: 'badge badge-ok badge-plain', id: `${idOf(c.name)}-set` }, `${c.name} set`),
          ` A ${c.name} is set. It is kept unless you type a new one.`);
      }
    }
  }
  urlInput.addEventListener('input', sync);
  for (const c of credentials) c.f.input.addEventListener('input', sync);
  sync();

  // The settings of `transport` out of `read(name)`, in the API's form: null for none.
  const settingsOf = (transport, read, credential) => {
    if (!Object.hasOwn(BROKER_SETTINGS, transport || '')) return null;
    const out = {};
    for (const s of BROKER_SETTINGS[transport]) {
      const raw = read(s.name);
      if (raw === '' || raw == null) continue;
      out[s.name] = s.integer && /^\d+$/.test(String(raw)) ? Number(raw) : String(raw);
    }
    for (const c of credentials) {
      const v = credential(c);
      if (v) out[c.name] = v;
    }
    return Object.keys(out).length ? out : null;
  };
  // What the form holds: the settings of the URL's transport only.
  const value = () => settingsOf(transportOf(urlInput.value),
    (name) => fields[`broker.${name}`].input.value.trim(),
    (c) => c.f.input.value || (c.stored ? 'set' : null));
  // What the destination has, in the same form, to see whether anything changed.
  const current = stored ? settingsOf(storedTransport, (name) => stored[name],
    (c) => (stored[c.name] ? 'set' : null)) : null;
  // Checks what the browser can: a whole number for max_len.
  const check = (fieldError) => {
    if (transportOf(urlInput.value) !== 'redis') return false;
    const typed = fields['broker.max_len'].input.value.trim();
    return Boolean(typed) && !/^\d+$/.test(typed) && fieldError('broker.max_len', 'Enter a whole number.');
  };

  return {
    fields,
    value,
    current,
    check,
    node: h('fieldset', { class: 'broker-settings', id: 'broker-settings' },
      h('legend', null, 'Transport'),
      transportLine,
      Object.values(fieldsets),
      credentialsNode),
  };
}

export function renderForm(ctx) {
  const editing = Boolean(ctx.params.id);
  const root = h('section', null, loading());
  if (!editing) {
    replace(root, ...formBody(ctx, null));
    return root;
  }
  api.get(api.path`/v1/destinations/${ctx.params.id}`, undefined, { signal: ctx.signal }).then((d) => {
    if (ctx.alive()) replace(root, ...formBody(ctx, d));
  }, (err) => {
    if (ctx.alive() && err.name !== 'AbortError') {
      replace(root, pageHeader('Edit destination', { back: ['#/destinations', 'Destinations'] }),
        errorBox(err, 'Could not load the destination'));
    }
  });
  return root;
}

function formBody(ctx, d) {
  const editing = d !== null;
  const fields = {
    url: field('dest-url', 'URL', h('input', {
      id: 'dest-url', name: 'url', type: 'url', required: true, autocomplete: 'off',
      placeholder: 'https://example.com/webhooks', value: editing ? d.url || '' : '',
    }), 'An absolute http or https URL the webhooks are POSTed to, or a broker\u2019s: amqp://host[:port][/vhost], nats://host[:port], redis://host[:port][/db] or kafka://host[:port][,host:port\u2026].'),
    description: field('dest-description', 'Description', h('input', {
      id: 'dest-description', name: 'description', autocomplete: 'off', maxlength: 1024,
      value: editing ? d.description || '' : '',
    })),
    event_types: field('dest-event-types', 'Event types', h('input', {
      id: 'dest-event-types', name: 'event_types', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'order.created, invoice.*',
      value: editing && Array.isArray(d.event_types) ? d.event_types.join(', ') : '',
    }), 'Separated by commas. Empty means every type; "order.*" matches every type starting with "order.".'),
    filter: field('dest-filter', 'Filter', h('input', {
      id: 'dest-filter', name: 'filter', autocomplete: 'off', spellcheck: 'false', class: 'mono',
      placeholder: '$.amount >= 100 && $.currency == "EUR"',
      value: editing && typeof d.filter === 'string' ? d.filter : '',
    }), 'A SQL/JSON path predicate on the payload: only events it is true for are delivered. Empty delivers every event of the types above.'),
    headers: field('dest-headers', 'Custom headers', h('textarea', {
      id: 'dest-headers', name: 'headers', rows: 3, spellcheck: 'false', placeholder: 'X-Team: payments',
      value: editing ? headersText(d.headers) : '',
    }), editing
      ? 'One "Name: value" per line, sent with every delivery. Values are write-only: leave "set" to keep a value as it is.'
      : 'One "Name: value" per line, sent with every delivery. Values are write-only: once saved they show as "set".'),
    max_in_flight: field('dest-max-in-flight', 'Max in flight', h('input', {
      id: 'dest-max-in-flight', name: 'max_in_flight', type: 'number', min: 1, max: 10000, step: 1,
      placeholder: 'server default', value: editing && d.max_in_flight != null ? String(d.max_in_flight) : '',
    }), 'Concurrent deliveries to this destination, all workers together.'),
    rate_limit: field('dest-rate-limit', 'Rate limit (attempts per second)', h('input', {
      id: 'dest-rate-limit', name: 'rate_limit', type: 'number', min: 1, max: 100000, step: 1,
      placeholder: 'no limit', value: editing && d.rate_limit != null ? String(d.rate_limit) : '',
    })),
    ordering: field('dest-ordering', 'Ordering', select('dest-ordering', 'ordering', [
      ['none', 'None: deliveries go in parallel'],
      ['fifo', 'fifo: one at a time per ordering key, in order'],
    ], editing ? d.ordering || 'none' : 'none'), 'With fifo, events that share an ordering_key arrive one after another, in the order they were accepted.'),
    on_dead_letter: field('dest-on-dead-letter', 'When a fifo delivery is dead-lettered', select('dest-on-dead-letter', 'on_dead_letter', [
      ['continue', 'Continue with the next of its key'],
      ['block', 'Hold its key until it is replayed or dismissed'],
    ], editing ? d.on_dead_letter || 'continue' : 'continue')),
  };
  const tls = tlsSection(d);
  Object.assign(fields, tls.fields);
  const oauth = oauthSection(d);
  Object.assign(fields, oauth.fields);
  const broker = brokerSection(d, fields.url.input);
  Object.assign(fields, broker.fields);
  const showTenant = !editing && ctx.role !== 'tenant';
  if (showTenant) {
    fields.tenant_id = field('dest-tenant', 'Tenant', h('input', {
      id: 'dest-tenant', name: 'tenant_id', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'none', pattern: '[A-Za-z0-9._:\\-]{1,128}',
    }), 'Set at creation and never changed: only this tenant\u2019s events reach the destination.');
  }
  const enabled = h('input', { id: 'dest-enabled', name: 'enabled', type: 'checkbox', checked: true });
  const status = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'btn-primary' }, editing ? 'Save changes' : 'Create destination');
  const cancelHref = editing ? `#/destinations/${encodeURIComponent(d.id)}` : '#/destinations';

  const tester = filterTester(ctx, fields.filter.input, fields.event_types.input);
  const picker = catalogPicker(ctx, fields.event_types.input, tester.setTypes);
  const form = h('form', { class: 'card form', novalidate: true },
    fields.url.node,
    broker.node,
    h('div', { class: 'grid-2 tight' }, fields.description.node, showTenant ? fields.tenant_id.node
      : editing ? h('div', { class: 'field' }, h('span', { class: 'label' }, 'Tenant'),
        h('p', { class: 'static' }, show(d.tenant_id))) : null),
    fields.event_types.node,
    picker,
    h('div', { class: 'filter-editor' }, fields.filter.node, tester.node),
    fields.headers.node,
    h('div', { class: 'grid-2 tight' }, fields.max_in_flight.node, fields.rate_limit.node),
    h('div', { class: 'grid-2 tight' }, fields.ordering.node, fields.on_dead_letter.node),
    tls.node,
    oauth.node,
    editing ? null : h('div', { class: 'field check' }, enabled,
      h('label', { for: 'dest-enabled' }, 'Enabled: deliver events as soon as it exists')),
    status,
    h('div', { class: 'actions' },
      h('a', { class: 'btn', href: cancelHref }, 'Cancel'),
      submit));

  const clearErrors = () => {
    for (const f of Object.values(fields)) {
      f.error.hidden = true;
      f.input.removeAttribute('aria-invalid');
    }
    replace(status);
  };
  const fieldError = (name, message) => {
    const f = fields[name] || fields[name.split(/[.[]/)[0]];
    if (!f) return false;
    replace(f.error, message);
    f.error.hidden = false;
    f.input.setAttribute('aria-invalid', 'true');
    return true;
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    const v = (name) => fields[name].input.value.trim();
    const body = {};
    let bad = false;
    if (!v('url')) bad = fieldError('url', 'A URL is required.') || bad;
    const { headers, problems } = parseHeaders(fields.headers.input.value);
    if (problems.length) bad = fieldError('headers', `Check the headers: ${problems.join('; ')}.`) || bad;
    const intField = (name) => {
      const text = v(name);
      if (!text) return null;
      if (!/^\d+$/.test(text)) {
        bad = fieldError(name, 'Enter a whole number.') || bad;
        return null;
      }
      return Number(text);
    };
    const maxInFlight = intField('max_in_flight');
    const rateLimit = intField('rate_limit');
    bad = broker.check(fieldError) || bad;
    if (bad) {
      replace(status, h('div', { class: 'alert alert-error', role: 'alert' }, 'Some fields need attention.'));
      return;
    }
    const eventTypes = eventTypeList(v('event_types'));
    const wanted = {
      url: v('url'),
      description: v('description'),
      event_types: eventTypes,
      filter: v('filter'),
      headers,
      max_in_flight: maxInFlight,
      rate_limit: rateLimit,
      ordering: fields.ordering.input.value,
      on_dead_letter: fields.on_dead_letter.input.value,
      tls: tls.value(),
      auth: oauth.value(),
      broker: broker.value(),
    };
    if (editing) {
      // Only what changed, so fields this form does not show are left alone.
      const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
      if (!same(wanted.url, d.url)) body.url = wanted.url;
      if (!same(wanted.description, d.description || '')) body.description = wanted.description;
      if (!same(wanted.event_types, d.event_types || [])) body.event_types = wanted.event_types;
      if (!same(wanted.filter || null, d.filter)) body.filter = wanted.filter || null;
      if (!same(wanted.headers, d.headers || {})) body.headers = wanted.headers;
      if (!same(wanted.max_in_flight, d.max_in_flight)) body.max_in_flight = wanted.max_in_flight;
      if (!same(wanted.rate_limit, d.rate_limit)) body.rate_limit = wanted.rate_limit;
      if (!same(wanted.ordering, d.ordering || 'none')) body.ordering = wanted.ordering;
      if (!same(wanted.on_dead_letter, d.on_dead_letter || 'continue')) body.on_dead_letter = wanted.on_dead_letter;
      // The three go together: a change to any sends them all ("set" keeps the key).
      if (!same(wanted.tls, tls.current)) body.tls = wanted.tls;
      // Likewise the OAuth settings ("set" keeps the client secret).
      if (!same(wanted.auth, oauth.current)) body.auth = wanted.auth;
      // And the broker settings, which `broker` replaces together ("set" keeps a credential).
      if (!same(wanted.broker, broker.current)) body.broker = wanted.broker;
      if (!Object.keys(body).length) {
        ctx.navigate(cancelHref);
        return;
      }
    } else {
      body.url = wanted.url;
      if (wanted.description) body.description = wanted.description;
      if (eventTypes.length) body.event_types = eventTypes;
      if (wanted.filter) body.filter = wanted.filter;
      if (Object.keys(headers).length) body.headers = headers;
      if (maxInFlight !== null) body.max_in_flight = maxInFlight;
      if (rateLimit !== null) body.rate_limit = rateLimit;
      if (wanted.ordering !== 'none') body.ordering = wanted.ordering;
      if (wanted.on_dead_letter !== 'continue') body.on_dead_letter = wanted.on_dead_letter;
      if (wanted.tls) body.tls = wanted.tls;
      if (wanted.auth) body.auth = wanted.auth;
      if (wanted.broker) body.broker = wanted.broker;
      if (showTenant && v('tenant_id')) body.tenant_id = v('tenant_id');
      if (!enabled.checked) body.enabled = false;
    }
    submit.disabled = true;
    replace(status, loading(editing ? 'Saving\u2026' : 'Creating\u2026'));
    try {
      const saved = editing
        ? await api.patch(api.path`/v1/destinations/${d.id}`, body, { signal: ctx.signal })
        : await api.post('/v1/destinations', body, { signal: ctx.signal });
      if (!editing && saved && saved.secret) rememberCreatedSecret(saved.id, saved.secret);
      toast(editing ? 'Changes saved' : 'Destination created');
      ctx.navigate(`#/destinations/${encodeURIComponent(saved.id)}`);
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.alive()) return;
      // Field errors go next to their fields too; the summary keeps all of them.
      if (err.problem && Array.isArray(err.problem.errors)) {
        for (const e of err.problem.errors) {
          if (e && typeof e.field === 'string') fieldError(e.field, String(e.message));
        }
      }
      replace(status, errorBox(err, editing ? 'Not saved' : 'Not created'));
      submit.disabled = false;
    }
  });

  return [
    pageHeader(editing ? 'Edit destination' : 'New destination', {
      subtitle: editing ? h('span', { class: 'mono' }, d.id) : 'Where webhooks are sent, and which ones.',
      back: editing ? [cancelHref, show(destinationLabel(d))] : ['#/destinations', 'Destinations'],
    }),
    form,
  ];
}
