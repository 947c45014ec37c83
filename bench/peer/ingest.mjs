// The peer's ingest: the minimal HTTP front a team would write beside graphile-worker,
// so that scripts/bench can send the peer the same events it sends webhookd. Each
// accepted event becomes one `deliver` job for `peer.mjs --serve`, whose task uses the
// id answered here as the webhook-id.
//
//   POST /v1/events  {"type": "...", "payload": {...}[, "tenant_id": "..."]}
//                    -> 202 {"id": "evt_..."} once the job is committed;
//                       400 not such an object, 413 over 1 MiB, 503 the database failed
//   GET  /healthz    -> 200
//
// --batch-ms M (above 0): the events that arrive within M ms of the first share one
// statement, graphile_worker.add_jobs (what its addJobs calls), and each is answered
// once that statement committed: what a team does at thousands of events a second.
// Without it, each event is one add_job of its own.
//
// Usage: node ingest.mjs --connection URL [--port 0] [--pool 16] [--batch-ms 0]
// Prints: port=N (the first line, once listening on 127.0.0.1; --port 0 picks a free
// port), then runs until SIGTERM or SIGINT.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { runMigrations } from 'graphile-worker';
import pg from 'pg';
import { quietLogger } from './preset.mjs';

const MAX_BODY_BYTES = 1 << 20;

const { values } = parseArgs({
  options: {
    connection: { type: 'string' },
    port: { type: 'string', default: '0' },
    pool: { type: 'string', default: '16' },
    'batch-ms': { type: 'string', default: '0' },
  },
});
const port = Number(values.port);
const poolSize = Number(values.pool);
const batchMs = Number(values['batch-ms']);
if (!values.connection || !Number.isInteger(port) || port < 0 || !(Number.isInteger(poolSize) && poolSize > 0) ||
    !(batchMs >= 0)) {
  console.error('usage: node ingest.mjs --connection URL [--port 0] [--pool 16] [--batch-ms 0]');
  process.exit(2);
}

// The worker migrates too; the migrations are idempotent and cope with another process
// migrating at the same moment, so the two may start in any order.
await runMigrations({ preset: { worker: { connectionString: values.connection, logger: quietLogger } } });
const db = new pg.Pool({ connectionString: values.connection, max: poolSize });
// Without a listener, an idle connection's error (a restart) would end the process.
db.on('error', (error) => console.error(`ingest: idle connection: ${error.message}`));

// A request whose client went away must not end the process as an unhandled rejection.
const server = http.createServer((req, res) => handle(req, res).catch(() => res.destroy()));
// Load generators keep their connections open between requests, at low rates for
// seconds; a short idle timeout would make them reconnect in the measured path.
server.keepAliveTimeout = 120_000;

server.listen(port, '127.0.0.1', () => {
  console.log(`port=${server.address().port}`);
});

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  server.close(async () => {
    await db.end();
    process.exit(0);
  });
  server.closeIdleConnections();
  // Connections in the middle of a request get a moment to finish, then are cut.
  setTimeout(() => server.closeAllConnections(), 2000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

async function handle(req, res) {
  if (req.url === '/healthz' && req.method === 'GET') return answer(res, 200, { ok: true });
  if (req.url !== '/v1/events') return answer(res, 404, { error: 'not found' });
  if (req.method !== 'POST') return answer(res, 405, { error: 'POST only' });

  const body = await readBody(req);
  if (body === null) {
    // The rest of an oversized body is not read, so the connection cannot carry on.
    res.setHeader('connection', 'close');
    return answer(res, 413, { error: `the body is over ${MAX_BODY_BYTES} bytes` });
  }
  let event;
  try {
    event = JSON.parse(body);
  } catch {
    return answer(res, 400, { error: 'the body is not JSON' });
  }
  if (!isObject(event) || typeof event.type !== 'string' || !isObject(event.payload) ||
      (event.tenant_id !== undefined && typeof event.tenant_id !== 'string')) {
    return answer(res, 400, { error: 'expected {"type": string, "payload": object[, "tenant_id": string]}' });
  }

  const id = `evt_${randomUUID()}`;
  const job = { id, type: event.type, payload: event.payload };
  try {
    if (batchMs > 0) {
      await addBatched(job);
    } else {
      // add_job is one statement, so it is its own transaction: the job is committed
      // (and its NOTIFY sent) before the 202, with no BEGIN/COMMIT round trips.
      await db.query("SELECT graphile_worker.add_job('deliver', $1::json)", [JSON.stringify(job)]);
    }
  } catch (error) {
    return answer(res, 503, { error: `the event was not stored: ${error.message}` });
  }
  answer(res, 202, { id });
}

// The jobs waiting for the batch's statement, and its timer.
let batch = [];
let batchTimer = null;

// Resolves once JOB is committed with the others that arrived within batchMs of the
// batch's first; batches in flight at once are bounded by the pool.
function addBatched(job) {
  return new Promise((resolve, reject) => {
    batch.push({ job, resolve, reject });
    if (!batchTimer) batchTimer = setTimeout(flushBatch, batchMs);
  });
}

async function flushBatch() {
  const jobs = batch;
  batch = [];
  batchTimer = null;
  try {
    await db.query(
      `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
         SELECT ROW('deliver', job, NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec
           FROM json_array_elements($1::json) job))`,
      [JSON.stringify(jobs.map((waiting) => waiting.job))]);
    for (const waiting of jobs) waiting.resolve();
  } catch (error) {
    for (const waiting of jobs) waiting.reject(error);
  }
}

// The body as a string, or null once it passes MAX_BODY_BYTES (the rest left unread).
function readBody(req) {
  if (Number(req.headers['content-length']) > MAX_BODY_BYTES) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function answer(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
