// scripts/bench's peer: graphile-worker, a popular PostgreSQL job queue for Node.js, tuned
// for throughput (preset.mjs), whose task signs and POSTs each job to a sink
// (deliver.mjs).
//
// Drain (the default): N jobs are pre-loaded with SQL, the database is vacuumed,
// analyzed and checkpointed, then the worker is started and timed until the last job
// succeeded, like webhookd's drain of pre-loaded deliveries.
// Record (--record): the task also inserts a row per attempt into webhook_attempts
// (deliver.mjs), created with the queue's schema before the clock starts; the drain
// then prints attempts=, the rows recorded.
// Serve (--serve): the same worker with no jobs of its own, delivering jobs as they are
// added (ingest.mjs adds them) until SIGTERM or SIGINT, then a clean stop.
//
// Usage: node peer.mjs --connection URL --jobs N --concurrency C --sink URL
//                      --secret whsec_<base64> [--timeout S] [--record]
//        node peer.mjs --serve --connection URL --concurrency C --sink URL
//                      --secret whsec_<base64> [--record]
// Prints (drain): jobs= concurrency= seconds= per_s= failed= [attempts=]
//   and exits 1 unless all N jobs succeeded within --timeout seconds (default 600).
// Prints (serve, on stopping): delivered= failed=
// failed counts the task's failures (each is retried later, as the queue does).
import { EventEmitter } from 'node:events';
import { parseArgs } from 'node:util';
import { run, runMigrations } from 'graphile-worker';
import pg from 'pg';
import { ATTEMPTS_TABLE, deliverTask } from './deliver.mjs';
import { workerPreset } from './preset.mjs';

const USAGE = `usage: node peer.mjs --connection URL --jobs N --concurrency C --sink URL --secret whsec_... [--timeout S] [--record]
       node peer.mjs --serve --connection URL --concurrency C --sink URL --secret whsec_... [--record]`;

const { values } = parseArgs({
  options: {
    serve: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
    connection: { type: 'string' },
    jobs: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
    sink: { type: 'string' },
    secret: { type: 'string' },
    timeout: { type: 'string', default: '600' },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const timeoutS = Number(values.timeout);
if (!values.connection || !values.sink || !values.secret || !(Number.isInteger(concurrency) && concurrency > 0) ||
    (!values.serve && !(Number.isInteger(jobs) && jobs > 0 && timeoutS > 0))) {
  console.error(USAGE);
  process.exit(2);
}

let task;
try {
  task = deliverTask({ sink: values.sink, secret: values.secret, connections: concurrency,
    record: values.record });
} catch (error) {
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const { deliver, close } = task;
const events = new EventEmitter();
const options = {
  preset: workerPreset({
    connection: values.connection, concurrency, events, record: values.record,
  }),
  taskList: { deliver },
  // Both modes decide when to stop, and stop the same way.
  noHandleSignals: true,
};
let succeeded = 0;
let failed = 0;
events.on('job:error', () => { ++failed; });

if (values.record) {
  const client = new pg.Client({ connectionString: values.connection });
  await client.connect();
  await client.query(ATTEMPTS_TABLE);
  await client.end();
}

if (values.serve) {
  events.on('job:success', () => { ++succeeded; });
  const runner = await run(options);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    // Lets running jobs finish and gives the local queue's locked jobs back.
    await runner.stop();
    await close();
    console.log(`delivered=${succeeded} failed=${failed}`);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  // The queue's schema and the jobs before the clock starts, as webhookd's deliveries
  // are pre-loaded with SQL; the payload's id becomes the webhook-id.
  await runMigrations(options);
  const client = new pg.Client({ connectionString: values.connection });
  await client.connect();
  // add_jobs (what add_job calls for each job) in statements of 10,000: 200,000 calls of
  // add_job in one statement took over 10 minutes here (its cost grows with the jobs the
  // statement has already added), 20 calls of add_jobs take a few seconds.
  const chunk = 10000;
  for (let from = 1; from <= jobs; from += chunk) {
    await client.query(
      `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
         SELECT ROW('deliver', json_build_object(
                  'id', 'evt_' || g,
                  'type', 'order.created',
                  'payload', json_build_object('id', g, 'total', '9.99', 'currency', 'EUR',
                                               'customer', 'cus_42')),
                NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec
           FROM generate_series($1::int, $2::int) g))`,
      [from, Math.min(jobs, from + chunk - 1)],
    );
  }
  // The same preparation webhookd's drain gets: fresh statistics, and no checkpoint
  // of the loading writes falling inside the timed run.
  await client.query('VACUUM ANALYZE');
  await client.query('CHECKPOINT');
  await client.end();

  let finish;
  const allDone = new Promise((resolve) => { finish = resolve; });
  events.on('job:success', () => { if (++succeeded === jobs) finish(); });
  const timer = setTimeout(finish, timeoutS * 1000);
  const started = process.hrtime.bigint();
  const runner = await run(options);
  await allDone;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearTimeout(timer);
  await runner.stop();
  await close();
  let attempts = '';
  if (values.record) {
    const counter = new pg.Client({ connectionString: values.connection });
    await counter.connect();
    const { rows } = await counter.query('SELECT count(*)::int AS n FROM webhook_attempts');
    await counter.end();
    attempts = ` attempts=${rows[0].n}`;
  }
  console.log(`jobs=${succeeded} concurrency=${concurrency} seconds=${seconds.toFixed(3)} ` +
    `per_s=${(succeeded / seconds).toFixed(1)} failed=${failed}${attempts}`);
  process.exit(succeeded === jobs ? 0 : 1);
}
