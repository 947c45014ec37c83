// scripts/bench's peer: graphile-worker, a popular PostgreSQL job queue for Node.js,
// draining N pre-loaded jobs whose task is one POST to the benchmark's sink, timed like
// webhookd's drain of pre-loaded deliveries (from the worker's start to the last
// success). The task does what a webhook sender built on a job queue does at the least:
// a keep-alive POST of the job's payload and a check of the status; it does not sign.
//
// Usage: node peer.mjs --connection URL --jobs N --concurrency C --sink URL [--timeout S]
// Prints: jobs= concurrency= seconds= per_s= failed=
import { parseArgs } from 'node:util';
import { Logger, run, runMigrations } from 'graphile-worker';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    connection: { type: 'string' },
    jobs: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
    sink: { type: 'string' },
    timeout: { type: 'string', default: '600' },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const timeoutS = Number(values.timeout);
if (!values.connection || !values.sink || !(jobs > 0) || !(concurrency > 0) || !(timeoutS > 0)) {
  console.error('usage: node peer.mjs --connection URL --jobs N --concurrency C --sink URL [--timeout S]');
  process.exit(2);
}

// The queue's schema, then the jobs, before the clock starts (as webhookd's deliveries are
// pre-loaded with SQL).
await runMigrations({ connectionString: values.connection, logger: quietLogger() });
const client = new pg.Client({ connectionString: values.connection });
await client.connect();
await client.query(
  `SELECT graphile_worker.add_job('deliver', json_build_object(
     'type', 'order.created',
     'data', json_build_object('id', g, 'total', '9.99', 'currency', 'EUR', 'customer', 'cus_42')))
     FROM generate_series(1, $1::int) g`,
  [jobs],
);
await client.query('VACUUM ANALYZE graphile_worker._private_jobs');
await client.end();

let done = 0;
let failed = 0;
let finish;
const allDone = new Promise((resolve) => { finish = resolve; });
const started = process.hrtime.bigint();
const runner = await run({
  connectionString: values.connection,
  concurrency,
  noHandleSignals: true,
  pollInterval: 1000,
  logger: quietLogger(),
  taskList: {
    deliver: async (payload) => {
      const res = await fetch(values.sink, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      await res.arrayBuffer();
      if (res.status < 200 || res.status > 299) throw new Error(`HTTP ${res.status}`);
    },
  },
});
runner.events.on('job:success', () => { if (++done === jobs) finish(); });
runner.events.on('job:error', () => { ++failed; });
const timer = setTimeout(finish, timeoutS * 1000);
await allDone;
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
clearTimeout(timer);
await runner.stop();
console.log(`jobs=${done} concurrency=${concurrency} seconds=${seconds.toFixed(3)} ` +
  `per_s=${(done / seconds).toFixed(1)} failed=${failed}`);
process.exit(done === jobs ? 0 : 1);

// Errors only: a log line per job would cost the peer time webhookd does not spend.
function quietLogger() {
  return new Logger(() => (level, message) => {
    if (level === 'error') console.error(message);
  });
}
