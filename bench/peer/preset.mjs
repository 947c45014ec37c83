// The peer's worker settings: graphile-worker tuned as its authors tune it for throughput
// (the configuration of their published performance figures, with the local queue at
// the size their release notes recommend), shared by the drain and --serve modes of
// peer.mjs so that both measure the same worker.
import { Logger } from 'graphile-worker';

// The poll only finds jobs whose run_at has come (retries); new jobs arrive by
// LISTEN/NOTIFY, so the interval does not pace either mode.
const POLL_INTERVAL_MS = 1000;

// Errors only, a line each: a log line per job would cost the peer time webhookd does
// not spend, and a failing receiver would bury the result under stack traces.
export const quietLogger = new Logger(() => (level, message) => {
  if (level === 'error') console.error(message.split('\n', 1)[0]);
});

export function workerPreset({ connection, concurrency, events, record = false }) {
  return {
    worker: {
      connectionString: connection,
      concurrentJobs: concurrency,
      // The authors' own pairing. One client stays on LISTEN for new jobs; the rest
      // serve the batch fetches and the batched completions, as the plain task never
      // queries. A recording task inserts on the same pool, so every job may hold a
      // client at once: two more keep a fetch and a completion batch from waiting.
      maxPoolSize: concurrency + (record ? 3 : 1),
      // One fetch locks a batch and hands it out in memory, so a worker that finishes
      // a job starts the next without a round trip.
      localQueue: { size: concurrency + 1 },
      // 0, not off: completions and failures that land in the same tick share one
      // statement, without holding a finished job for a delay.
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
      pollInterval: POLL_INTERVAL_MS,
      logger: quietLogger,
      events,
    },
  };
}
