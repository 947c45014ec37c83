#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "base/result.h"
#include "core/retry_policy.h"
#include "core/trace_context.h"
#include "store/delivery_queue.h"
#include "trace/span.h"
#include "worker/async_sender.h"
#include "worker/attempt_trace.h"
#include "worker/token_source.h"

namespace webhookd {

class Metrics;

// The delivery loop of one worker process: claims due deliveries in batches, starts each
// on the sender (at most `concurrency` at once), and writes outcomes in batches. Wakes on the
// ingest/replay notification, sleeps until the next due time otherwise (at most
// `fallback_poll`), and rides out database outages by backing off and retrying.
class Dispatcher {
 public:
  struct Options {
    int concurrency = 64;  // at most this many deliveries between claim and send end
    int claim_batch = 64;
    Duration lease = std::chrono::seconds(60);
    int default_max_in_flight = 16;
    Duration fallback_poll = std::chrono::seconds(1);
    // How long a recorder waits for more outcomes (up to flush_batch) from the sends that
    // were running when the first of its batch arrived; once those have ended, or with
    // none running, it writes what it has at once.
    Duration flush_interval = std::chrono::milliseconds(2);
    int flush_batch = 256;
    // Outcome writers: a delivery counts against its destination's cap until its outcome
    // is written, so a second writer keeps a slow commit from holding every cap full.
    int recorders = 2;
    // The circuit breaker and auto-disabling; its default_max_in_flight is taken from
    // default_max_in_flight above.
    ProtectionSettings protection;
    // Where finished attempt spans go (null: nowhere), and which are sampled
    // (docs/tracing.md). Every attempt sends a traceparent either way.
    trace::SpanSink* spans = nullptr;
    Sampler sampler;
  };

  // Borrows every argument; each must outlive the Dispatcher. `metrics` may be null.
  Dispatcher(DeliveryQueue& queue, AsyncSender& sender, Clock& clock, Random& random,
             const RetryPolicy& policy, Options options, Metrics* metrics = nullptr);
  ~Dispatcher();

  // Runs until Stop(): then stops claiming, hands back what has not started, lets sends
  // in progress finish and records them, and returns.
  void Run();
  // Thread-safe; may be called from a signal-handling thread.
  void Stop();

  // The deliveries in this process between claim and send end (for tests and metrics).
  // Ended is read first: every send it counts had started by then, so from any thread the
  // difference is never below what was in flight (read the other way round, sends started
  // and ended between the two reads could make it negative).
  int in_flight() const {
    const int64_t ended = sends_ended_.load();
    return static_cast<int>(sends_started_.load() - ended);
  }

 private:
  // What a started send needs when its answer comes back.
  struct Sending {
    ClaimedDelivery delivery;
    Timestamp started;
    std::chrono::steady_clock::time_point steady_start;
    SpanStart trace;
  };

  void ListenLoop();
  void RecordLoop();
  // Writes a batch of outcomes. When the database refuses the statement (not the
  // connection), each record is written alone, and one refused alone is dropped.
  Result<RecordedOutcomes> WriteOutcomes(std::span<const AttemptRecord> batch);
  // The claim loop: claims what is due while there are free slots, sleeps otherwise.
  void ClaimLoop();
  // After the claim loop ends: hands back what has not started, waits for the sends in
  // progress, lets the recorders write them, and joins the threads Run made.
  void Drain();
  void RequeueExpiredLeases();
  // A feed's lease that ended unsettled is a failed attempt, "lease expired" (docs/feeds.md).
  void ExpireFeedLeases();
  // How long to sleep when the earliest due time is still ahead; nullopt: something is
  // due (or the lookup failed), so claim.
  std::optional<Duration> NothingDueFor();
  // Every slot is taken: raises slots_full_ so that the end of a send wakes the loop;
  // true when a slot freed up meanwhile (the loop claims again at once).
  bool SlotFreedMeanwhile();
  // Claims up to `want` and starts them (skips go to the recorders); how many were
  // claimed, or nullopt when the claim failed.
  std::optional<int> ClaimAndStart(int want);
  Duration SleepAfterClaim(int want, int got);
  // Signs the delivery and starts it on the sender.
  void Start(ClaimedDelivery d);
  // Sends with an OAuth token (docs/egress.md); after a 401, once more with a new token.
  void SendAuthorized(const std::shared_ptr<Sending>& sending, const Outgoing& out, bool retried);
  // Runs on the sender's thread with the send's answer.
  void Finish(const Sending& s, SendResult sent);
  // A send ended: the claim loop is woken when enough room for a claim is free.
  void Ended();
  // An open circuit's due delivery: nothing is sent; it is recorded as skipped and
  // rescheduled as a retryable failure would be.
  AttemptRecord Skip(const ClaimedDelivery& d);
  // Hands outcomes to the recorders.
  void Record(std::vector<AttemptRecord> records);
  void Wake();
  void Backoff(Duration& delay);
  void Recheck();
  // Sleeps until a wake-up or `timeout`; true when the only wake-up was Recheck().
  bool Sleep(Duration timeout);
  void Observe(const AttemptRecord& r, Timestamp now);

  DeliveryQueue& queue_;
  AsyncSender& sender_;
  Clock& clock_;
  Random& random_;
  const RetryPolicy& policy_;
  Options options_;
  Metrics* metrics_;
  TokenSource tokens_;  // OAuth tokens of this process's destinations

  std::atomic<bool> stopping_{false};
  // The last claim got fewer deliveries than it asked for.
  std::atomic<bool> held_back_{false};
  // The claim loop sleeps because every slot is taken: only then does the end of a send
  // wake it.
  std::atomic<bool> slots_full_{false};
  // Sends started and ended, ever: the difference is what is in flight. A recorder waits
  // for more outcomes only until the sends started before its batch's first outcome
  // arrived have ended (records_wave_).
  std::atomic<int64_t> sends_started_{0};
  std::atomic<int64_t> sends_ended_{0};

  // The claim loop sleeps here; notifications, freed slots and Stop() wake it (woken_),
  // and so do written outcomes (recheck_), which may or may not have made work due.
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool woken_ = false;
  bool recheck_ = false;

  // Sends the sender handed back unstarted at shutdown, and the end of the last send.
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  std::vector<ReleasedClaim> unstarted_;

  // Taken after done_mu_ where both are held (Ended), never before it.
  std::mutex records_mu_;
  std::condition_variable records_cv_;
  std::vector<AttemptRecord> records_;
  // sends_started_ when the first of records_ arrived. Written under records_mu_; atomic
  // for Ended, which reads it without. Every waiting recorder reads it afresh: one woken
  // late for a batch another took must not take the next batch early.
  std::atomic<int64_t> records_wave_{0};
  bool records_closed_ = false;

  std::thread listener_;
  std::vector<std::thread> recorders_;
};

}  // namespace webhookd
