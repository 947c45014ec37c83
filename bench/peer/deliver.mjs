// The peer's task: one job, one webhook, the least a sender built on a job queue does —
// a keep-alive POST of the job's payload, signed as Standard Webhooks specifies (the
// sink checks it, as it checks webhookd's), and a check of the status. The payload's
// `id` is the webhook-id, so a receiver can tell deliveries apart and a load generator
// can match the id the ingest answered with the arrival.
//
// With `record`, the task also does what a team building webhooks on a job queue adds
// first: after the POST, one INSERT of the attempt (status, duration, the start of the
// response body, or the error) into its own table, in a statement of its own on the
// worker's pool (helpers.query), as webhookd writes an attempt row per request.
import { createHmac } from 'node:crypto';
import { Pool } from 'undici';

// webhookd's default attempt timeout: a receiver that hangs holds a job no longer.
const TIMEOUT_MS = 15_000;

// What a recorded response body keeps, as webhookd keeps an excerpt.
const BODY_EXCERPT_CHARS = 1024;

// The attempts table of the recording task: keyed as webhookd's attempts are (the job,
// the attempt's number), with nothing else indexed.
export const ATTEMPTS_TABLE = `CREATE TABLE IF NOT EXISTS webhook_attempts (
  job_id        bigint NOT NULL,
  attempt       integer NOT NULL,
  webhook_id    text NOT NULL,
  started_at    timestamptz NOT NULL,
  duration_ms   integer NOT NULL,
  status_code   integer,
  error         text,
  response_body text NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, attempt))`;

const INSERT_ATTEMPT = `INSERT INTO webhook_attempts
  (job_id, attempt, webhook_id, started_at, duration_ms, status_code, error, response_body)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

// deliverTask({ sink, secret, connections, record }) -> { deliver, close }: `deliver` is
// the task; `close` ends the connections once the worker has stopped.
export function deliverTask({ sink, secret, connections, record = false }) {
  const url = new URL(sink);
  const path = url.pathname + url.search;
  const key = secretKey(secret);
  // As many connections as jobs run at once, so no job waits for a socket.
  const pool = new Pool(url.origin, {
    connections,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });

  async function deliver(payload, helpers) {
    const id = payload?.id;
    if (typeof id !== 'string') throw new Error(`job ${helpers.job.id}: the payload has no string id`);
    const body = JSON.stringify(payload);
    const timestamp = Math.floor(Date.now() / 1000).toString();
    const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    const started = new Date();
    const t0 = process.hrtime.bigint();
    let status = null;
    let text = '';
    let failure = null;
    try {
      const response = await pool.request({
        method: 'POST',
        path,
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': `v1,${signature}`,
        },
        body,
      });
      status = response.statusCode;
      // Read to the end, so the connection goes back to the pool for the next job.
      text = await response.body.text();
      if (status < 200 || status > 299) failure = new Error(`HTTP ${status}`);
    } catch (error) {
      failure = error;
    }
    if (record) {
      const durationMs = Math.round(Number(process.hrtime.bigint() - t0) / 1e6);
      await helpers.query(INSERT_ATTEMPT, [helpers.job.id, helpers.job.attempts, id, started,
        durationMs, status, failure ? failure.message : null, text.slice(0, BODY_EXCERPT_CHARS)]);
    }
    if (failure) throw failure;
  }

  return { deliver, close: () => pool.close() };
}

// The HMAC key of a "whsec_<base64>" secret.
export function secretKey(secret) {
  const key = secret?.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : null;
  if (!key || key.length === 0) throw new Error('the secret must be whsec_<base64>');
  return key;
}
