// The peer's task: one job, one webhook, the least a sender built on a job queue does —
// a keep-alive POST of the job's payload, signed as Standard Webhooks specifies (the
// sink checks it, as it checks webhookd's), and a check of the status. The payload's
// `id` is the webhook-id, so a receiver can tell deliveries apart and a load generator
// can match the id the ingest answered with the arrival.
import { createHmac } from 'node:crypto';
import { Pool } from 'undici';

// webhookd's default attempt timeout: a receiver that hangs holds a job no longer.
const TIMEOUT_MS = 15_000;

// deliverTask({ sink, secret, connections }) -> { deliver, close }: `deliver` is the
// task; `close` ends the connections once the worker has stopped.
export function deliverTask({ sink, secret, connections }) {
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
    // Read to the end, so the connection goes back to the pool for the next job.
    await response.body.arrayBuffer();
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw new Error(`HTTP ${response.statusCode}`);
    }
  }

  return { deliver, close: () => pool.close() };
}

// The HMAC key of a "whsec_<base64>" secret.
export function secretKey(secret) {
  const key = secret?.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : null;
  if (!key || key.length === 0) throw new Error('the secret must be whsec_<base64>');
  return key;
}
