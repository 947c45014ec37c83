// The REST API as the console uses it. The key lives in this tab's sessionStorage
// and leaves the browser only in the Authorization header of same-origin requests.

const KEY_ITEM = 'webhookd.key';

export function storedKey() {
  return sessionStorage.getItem(KEY_ITEM);
}

export function storeKey(key) {
  sessionStorage.setItem(KEY_ITEM, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_ITEM);
}

// A non-2xx answer. `problem` is the RFC 9457 body when the server sent one.
export class ApiError extends Error {
  constructor(status, problem, fallback) {
    super(describe(status, problem, fallback));
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

function describe(status, problem, fallback) {
  if (problem && typeof problem === 'object') {
    const parts = [];
    if (typeof problem.detail === 'string' && problem.detail) parts.push(problem.detail);
    else if (typeof problem.title === 'string' && problem.title) parts.push(problem.title);
    if (Array.isArray(problem.errors)) {
      for (const e of problem.errors) {
        // A detail that already says it ("field: message") is not repeated.
        if (e && typeof e.field === 'string' && typeof e.message === 'string' &&
            !(parts.length && parts[0].includes(e.message))) {
          parts.push(`${e.field} ${e.message}`);
        }
      }
    }
    if (parts.length) return parts.join('; ');
  }
  return fallback || `the server answered ${status}`;
}

let onUnauthorized = () => {};

// Called with the error whenever a request answers 401 (the key expired or was revoked).
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

// Sends one request; resolves to {status, text, json} on 2xx, rejects with ApiError
// otherwise, or with a TypeError when the server cannot be reached. `body` is sent as
// JSON.stringify makes it; `jsonText` is JSON text sent as it is (so a number the user
// typed keeps every digit).
export async function request(method, route, { query, body, jsonText, signal, key, headers } = {}) {
  const url = new URL(route, window.location.origin);
  if (query) {
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== '') {
        url.searchParams.set(name, String(value));
      }
    }
  }
  const token = key ?? storedKey();
  const sent = { Accept: 'application/json', ...(headers || {}) };
  if (token) sent.Authorization = `Bearer ${token}`;
  const init = {
    method,
    headers: sent,
    signal,
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
    redirect: 'error',
  };
  if (body !== undefined || jsonText !== undefined) {
    sent['Content-Type'] = 'application/json';
    init.body = jsonText !== undefined ? jsonText : JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, null, 'webhookd could not be reached; check that it is running');
  }
  const text = await response.text();
  if (!response.ok) {
    let problem;
    try {
      problem = text ? JSON.parse(text) : null;
    } catch {
      problem = null;
    }
    const error = new ApiError(response.status, problem,
      `the server answered ${response.status} ${response.statusText}`.trim());
    if (response.status === 401 && key === undefined) onUnauthorized(error);
    throw error;
  }
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      throw new ApiError(response.status, null, 'the server sent a body that is not JSON');
    }
  }
  return { status: response.status, text, json };
}

export async function get(route, query, options = {}) {
  return (await request('GET', route, { ...options, query })).json;
}

export async function post(route, body, options = {}) {
  return (await request('POST', route, { ...options, body })).json;
}

export async function patch(route, body, options = {}) {
  return (await request('PATCH', route, { ...options, body })).json;
}

export async function del(route, options = {}) {
  return (await request('DELETE', route, options)).json;
}

// Path segments built from ids are escaped, so an id can never reach another route.
export function path(strings, ...values) {
  let out = strings[0];
  values.forEach((v, i) => {
    out += encodeURIComponent(String(v)) + strings[i + 1];
  });
  return out;
}

// What the key may do. The API has no "who am I" route, so the console asks:
//   - GET /v1/admin/stats answers 200 only to admin keys;
//   - otherwise GET /v1/admin/dead-letters?limit=1 answers 200 to a tenant key (a
//     tenant may list its own dead letters) and 403 to a publisher key.
// Nothing is published or changed to find out. 401 on the first probe means the key
// is not valid at all.
export async function detectRole(key, signal) {
  try {
    await request('GET', '/v1/admin/stats', { query: { window: '1h' }, key, signal });
    return 'admin';
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403) throw err;
  }
  try {
    await request('GET', '/v1/admin/dead-letters', { query: { limit: 1 }, key, signal });
    return 'tenant';
  } catch (err) {
    if (err instanceof ApiError && (err.status === 403 || err.status === 404)) return 'publisher';
    throw err;
  }
}

// What a link's key signs in as, without keeping it: its role and, for a tenant key,
// its tenant. The API has no route naming a key's tenant, but a tenant key's lists hold
// its own tenant's rows alone, so the first row any of them returns names it. A tenant
// with no destination, event or dead letter yet cannot be named: `tenant` is then null.
export async function describeKey(key, signal) {
  const role = await detectRole(key, signal);
  if (role !== 'tenant') return { role, tenant: null };
  for (const route of ['/v1/destinations', '/v1/events', '/v1/admin/dead-letters']) {
    let page;
    try {
      page = (await request('GET', route, { query: { limit: 1 }, key, signal })).json;
    } catch (err) {
      // One list failing leaves the others to ask; an expired key fails them all.
      if (err && err.name === 'AbortError') throw err;
      if (err instanceof ApiError && err.status === 401) throw err;
      continue;
    }
    const row = page && Array.isArray(page.data) ? page.data[0] : null;
    if (row && typeof row.tenant_id === 'string' && row.tenant_id) {
      return { role, tenant: row.tenant_id };
    }
  }
  return { role, tenant: null };
}
