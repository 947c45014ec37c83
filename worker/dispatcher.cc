#include "worker/dispatcher.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "base/encoding.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/strings.h"
#include "core/delivery_body.h"
#include "core/ids.h"
#include "core/outcome.h"
#include "core/retry_after.h"
#include "core/signing.h"
#include "net/broker_url.h"

namespace webhookd {
namespace {

constexpr Duration kMaxBackoff = std::chrono::seconds(2);
constexpr Duration kFirstBackoff = std::chrono::milliseconds(50);
constexpr Duration kSweepEvery = std::chrono::seconds(1);
// How long due work held back by a destination's cap may wait when nothing wakes us.
constexpr Duration kCappedPoll = std::chrono::milliseconds(50);

}  // namespace

void Dispatcher::Observe(const AttemptRecord& r, Timestamp now) {
  if (metrics_ == nullptr) return;
  if (r.outcome == Outcome::kSkipped) {
    metrics_->attempts_skipped.Inc();
  } else {
    metrics_->attempts[static_cast<int>(r.outcome)].Inc();
  }
  if (r.next_status == DeliveryStatus::kSucceeded) {
    metrics_->deliveries_succeeded.Inc();
    metrics_->delivery_latency.Observe(Seconds(now - r.delivery_created_at));
  } else if (r.next_status == DeliveryStatus::kDeadLettered) {
    metrics_
        ->dead_letters[static_cast<int>(
            r.dead_letter_reason.value_or(DeadLetterReason::kExhausted))]
        .Inc();
  }
}

Dispatcher::Dispatcher(DeliveryQueue& queue, AsyncSender& sender, Clock& clock, Random& random,
                       const RetryPolicy& policy, Options options, Metrics* metrics)
    : queue_(queue),
      sender_(sender),
      clock_(clock),
      random_(random),
      policy_(policy),
      options_(options),
      metrics_(metrics),
      tokens_(sender, clock) {
  options_.protection.default_max_in_flight = options_.default_max_in_flight;
}

Dispatcher::~Dispatcher() {
  Stop();
  if (listener_.joinable()) listener_.join();
}

void Dispatcher::Stop() {
  stopping_ = true;
  Wake();
}

void Dispatcher::Wake() {
  {
    std::lock_guard lock(wake_mu_);
    woken_ = true;
  }
  wake_cv_.notify_one();
}

void Dispatcher::Recheck() {
  {
    std::lock_guard lock(wake_mu_);
    recheck_ = true;
  }
  wake_cv_.notify_one();
}

bool Dispatcher::Sleep(Duration timeout) {
  std::unique_lock lock(wake_mu_);
  wake_cv_.wait_for(lock, timeout, [&] { return woken_ || recheck_ || stopping_.load(); });
  const bool recheck_only = recheck_ && !woken_;
  woken_ = recheck_ = false;
  return recheck_only;
}

void Dispatcher::Backoff(Duration& delay) {
  std::unique_lock lock(wake_mu_);
  wake_cv_.wait_for(lock, delay, [&] { return stopping_.load(); });
  delay = std::min(kMaxBackoff, delay * 2);
}

void Dispatcher::ListenLoop() {
  std::unique_ptr<WakeupListener> listener;
  Duration delay = kFirstBackoff;
  while (!stopping_) {
    if (!listener) {
      auto made = queue_.Listen();
      if (!made) {
        Backoff(delay);
        continue;
      }
      listener = std::move(*made);
      delay = kFirstBackoff;
      Wake();  // anything ingested while we were not listening is due now
    }
    auto got = listener->Wait(std::chrono::milliseconds(250));
    if (!got) {
      listener.reset();
      continue;
    }
    if (*got) Wake();
  }
}

void Dispatcher::Run() {
  listener_ = std::thread([this] { ListenLoop(); });
  for (int i = 0; i < std::max(1, options_.recorders); ++i) {
    recorders_.emplace_back([this] { RecordLoop(); });
  }
  ClaimLoop();
  Drain();
}

void Dispatcher::ClaimLoop() {
  Duration delay = kFirstBackoff;
  auto last_sweep = std::chrono::steady_clock::now() - kSweepEvery;
  bool recheck_only = false;
  while (!stopping_) {
    if (std::chrono::steady_clock::now() - last_sweep >= kSweepEvery) {
      last_sweep = std::chrono::steady_clock::now();
      RequeueExpiredLeases();
    }
    if (std::exchange(recheck_only, false)) {
      // Woken by written outcomes alone: most free nothing that is due (the destination
      // had room), so the hints' earliest due time, a lookup of microseconds, is read
      // before a claim is paid for. At a steady low rate this halves the claims.
      if (const std::optional<Duration> idle = NothingDueFor()) {
        recheck_only = Sleep(*idle);
        continue;
      }
    }
    const int want = std::min(options_.concurrency - in_flight(), options_.claim_batch);
    if (want <= 0 && SlotFreedMeanwhile()) continue;
    int got = 0;
    if (want > 0) {
      const std::optional<int> claimed = ClaimAndStart(want);
      if (!claimed) {
        Backoff(delay);
        continue;
      }
      delay = kFirstBackoff;
      got = *claimed;
      if (got == want) continue;  // more may be waiting: no sleep between full batches
      // Fewer than asked for: due work may be held back by destination caps, which free
      // up as outcomes are written; the recorders wake this loop when they write some.
      held_back_ = true;
    }
    recheck_only = Sleep(SleepAfterClaim(want, got));
    slots_full_ = false;
  }
}

void Dispatcher::RequeueExpiredLeases() {
  if (auto swept = queue_.RequeueExpiredLeases(); swept && *swept > 0) {
    Log(LogLevel::kInfo, "requeued deliveries whose lease ran out", {{"count", *swept}});
  }
  ExpireFeedLeases();
}

std::optional<Duration> Dispatcher::NothingDueFor() {
  auto next = queue_.NextDueAt();
  if (!next) return std::nullopt;  // unknown: let the claim find out
  const Timestamp now = clock_.Now();
  if (*next && **next <= now) return std::nullopt;
  return *next ? std::min(options_.fallback_poll, **next - now) : options_.fallback_poll;
}

bool Dispatcher::SlotFreedMeanwhile() {
  // Every slot is taken: the end of a send wakes this loop from now on. The slots are
  // counted again after the flag is raised, so an end between the two is not missed.
  slots_full_ = true;
  if (options_.concurrency - in_flight() > 0) {
    slots_full_ = false;
    return true;
  }
  return false;
}

std::optional<int> Dispatcher::ClaimAndStart(int want) {
  auto claimed = queue_.ClaimDue(want, options_.lease, options_.default_max_in_flight);
  if (!claimed) {
    Log(LogLevel::kWarn, "claim failed; retrying", {{"error", claimed.error().message}});
    return std::nullopt;
  }
  const int got = static_cast<int>(claimed->deliveries.size());
  if (metrics_ != nullptr) metrics_->rate_limited.Inc(claimed->rate_limited);
  // Skips send nothing: they go straight to the recorders, taking no slot.
  std::vector<AttemptRecord> skipped;
  for (auto& d : claimed->deliveries) {
    if (d.kind == ClaimKind::kSkip) {
      skipped.push_back(Skip(d));
      continue;
    }
    if (d.kind == ClaimKind::kProbe && metrics_ != nullptr) {
      metrics_->circuit_transitions[static_cast<int>(CircuitState::kHalfOpen)].Inc();
    }
    ++sends_started_;
    Start(std::move(d));
  }
  if (!skipped.empty()) Record(std::move(skipped));
  return got;
}

Duration Dispatcher::SleepAfterClaim(int want, int got) {
  // After a claim that got something, the end of those sends (or a notification) wakes
  // this loop first, so the next due time is looked up only when nothing was claimed:
  // one round trip fewer between a notification and the next claim.
  if (want > 0 && got > 0) return kCappedPoll;
  Duration timeout = options_.fallback_poll;
  if (want > 0) {
    auto next = queue_.NextDueAt();
    if (next && *next) {
      const Duration until = **next - clock_.Now();
      // Due work we could not claim waits on another destination's cap: poll gently.
      timeout = until <= Duration::zero() ? kCappedPoll : std::min(timeout, until);
    }
  }
  return timeout;
}

void Dispatcher::Drain() {
  // Nothing new starts; the sends the sender has not begun come back and their claims go
  // back; sends in progress finish and are recorded.
  sender_.CancelUnstarted();
  std::vector<ReleasedClaim> unstarted;
  {
    std::unique_lock lock(done_mu_);
    done_cv_.wait(lock, [&] { return in_flight() == 0; });
    unstarted.swap(unstarted_);
  }
  if (!unstarted.empty()) {
    auto released = queue_.ReleaseClaims(unstarted);
    Log(LogLevel::kInfo, "released unstarted deliveries on shutdown",
        {{"count", static_cast<int64_t>(unstarted.size())}, {"ok", released.has_value()}});
  }
  {
    std::lock_guard lock(records_mu_);
    records_closed_ = true;
  }
  records_cv_.notify_all();
  for (auto& t : recorders_) t.join();
  listener_.join();
}

void Dispatcher::Start(ClaimedDelivery d) {
  const std::string webhook_id = FormatId(kEventPrefix, d.event_id);
  Outgoing out;
  out.url = d.url;
  out.body = DeliveryBody(d.event_type, d.event_created_at, d.payload);
  out.tls = d.tls;
  out.tenant = d.tenant_id.value_or("");
  out.destination_id = d.destination_id;
  const Timestamp started = clock_.Now();
  const auto signature = SignatureHeader(d.secrets, webhook_id, UnixSeconds(started), out.body);
  out.headers = {{"Content-Type", "application/json"},
                 {"User-Agent", "webhookd/" WEBHOOKD_VERSION},
                 {"webhook-id", webhook_id},
                 {"webhook-timestamp", std::to_string(UnixSeconds(started))},
                 {"webhook-signature", signature.value_or("")}};
  if (d.broker) {
    out.broker = d.broker;
    // A broker message names its key itself; a fifo receiver over HTTP has no need.
    if (d.ordering_key) out.headers.emplace_back("webhook-ordering-key", *d.ordering_key);
  }
  for (const auto& header : d.headers) out.headers.push_back(header);
  // The attempt's own span context: a destination's custom header of that name gives way.
  SpanStart trace = StartAttemptTrace(d, options_.sampler, SecureRandomBytes(24));
  std::erase_if(out.headers, [](const auto& header) {
    return EqualsIgnoreCase(header.first, "traceparent") ||
           EqualsIgnoreCase(header.first, "tracestate");
  });
  out.headers.emplace_back("traceparent", trace.traceparent());
  if (!trace.tracestate.empty()) out.headers.emplace_back("tracestate", trace.tracestate);

  // Shared, not moved into the callback: std::function must be copyable.
  auto sending = std::make_shared<Sending>(
      Sending{std::move(d), started, std::chrono::steady_clock::now(), std::move(trace)});
  if (sending->delivery.credential_error) {
    // Retryable: the operator can give the process the key it lacks.
    SendResult sent;
    sent.error =
        "a stored credential of the destination cannot be decrypted; see the "
        "worker's log";
    Log(LogLevel::kError, "cannot decrypt a destination's credential",
        {{"destination_id", sending->delivery.destination_id},
         {"error", *sending->delivery.credential_error}});
    Finish(*sending, std::move(sent));
    return;
  }
  if (!signature) {
    SendResult sent;
    sent.refused = true;
    sent.error = "the destination's secret is not usable";
    Finish(*sending, std::move(sent));
    return;
  }
  if (sending->delivery.auth) {
    SendAuthorized(sending, out, /*retried=*/false);
    return;
  }
  sender_.Start(std::move(out),
                [this, sending](SendResult sent) { Finish(*sending, std::move(sent)); });
}

void Dispatcher::SendAuthorized(const std::shared_ptr<Sending>& sending, const Outgoing& out,
                                bool retried) {
  const ClaimedDelivery& d = sending->delivery;
  tokens_.Get(d.destination_id, *d.auth,
              [this, sending, out, retried](TokenSource::Token token) mutable {
                if (!token.value) {
                  // No token, no request: retryable ("token request failed: 503").
                  SendResult failed;
                  failed.not_started = token.not_started;
                  if (!token.not_started) failed.error = token.error;
                  Finish(*sending, std::move(failed));
                  return;
                }
                Outgoing authorized = out;
                // The token is the request's one Authorization: a custom header of that
                // name gives way to it.
                std::erase_if(authorized.headers, [](const auto& header) {
                  return EqualsIgnoreCase(header.first, "Authorization");
                });
                authorized.headers.emplace_back("Authorization", "Bearer " + *token.value);
                sender_.Start(std::move(authorized),
                              [this, sending, out, retried, used = *token.value](SendResult sent) {
                                if (sent.status_code == 401 && !retried) {
                                  // The token was refused: a new one, and this attempt once more at
                                  // once with it; only that second answer is the attempt's outcome.
                                  tokens_.Drop(sending->delivery.destination_id, used);
                                  SendAuthorized(sending, out, /*retried=*/true);
                                  return;
                                }
                                Finish(*sending, std::move(sent));
                              });
              });
}

namespace {

// What every record of an attempt of `d` holds, whatever its answer.
AttemptRecord RecordOf(const ClaimedDelivery& d, Timestamp started, Outcome outcome) {
  AttemptRecord rec;
  rec.delivery_id = d.delivery_id;
  rec.claim_token = d.claim_token;
  rec.destination_id = d.destination_id;
  rec.event_id = d.event_id;
  rec.attempt_number = d.attempt_count + 1;
  rec.started_at = started;
  rec.outcome = outcome;
  rec.delivery_created_at = d.created_at;
  return rec;
}

// The delivery's next state, as the retry policy decided it.
void ApplyDecision(const Decision& decision, AttemptRecord& rec) {
  switch (decision.kind) {
    case Decision::Kind::kSucceed:
      rec.next_status = DeliveryStatus::kSucceeded;
      break;
    case Decision::Kind::kRetry:
      rec.next_status = DeliveryStatus::kPending;
      rec.wait = decision.wait;
      break;
    case Decision::Kind::kDeadLetter:
      rec.next_status = DeliveryStatus::kDeadLettered;
      rec.dead_letter_reason = decision.reason;
      rec.disable_destination = decision.disable_destination;
      break;
  }
}

}  // namespace

void Dispatcher::Finish(const Sending& s, SendResult sent) {
  const ClaimedDelivery& d = s.delivery;
  if (sent.not_started) {
    // Handed back at shutdown: the claim is released, no attempt happened.
    {
      std::lock_guard lock(done_mu_);
      unstarted_.push_back({d.delivery_id, d.claim_token});
    }
    Ended();
    return;
  }
  const Timestamp started = s.started;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - s.steady_start);

  if (sent.proxy_unreachable || sent.at_capacity) {
    // The receiver was never asked: the attempt follows the schedule as a skip does, and
    // neither the destination's circuit nor its cap moves (docs/egress.md, docs/brokers.md).
    AttemptRecord rec = Skip(d);
    rec.started_at = started;
    rec.duration_ms = static_cast<int>(elapsed.count());
    rec.error = SanitizeUtf8(sent.error.value_or("egress proxy unreachable"));
    if (metrics_ != nullptr && sent.proxy_unreachable) metrics_->egress_proxy_failures.Inc();
    Record({std::move(rec)});
    Ended();
    return;
  }
  AttemptResult result;
  if (sent.refused) {
    result.outcome = Outcome::kPermanent;
  } else if (sent.acknowledged && !sent.error) {
    result.outcome = Outcome::kSuccess;  // a broker's confirm (docs/brokers.md)
  } else if (sent.status_code && !sent.error) {
    result.outcome = ClassifyStatus(*sent.status_code);
    result.status_code = sent.status_code;
    if (sent.retry_after) result.retry_after = ParseRetryAfter(*sent.retry_after, clock_.Now());
  } else {
    result.outcome = Outcome::kRetryable;
  }
  const int cycle_attempt = d.cycle_attempts + 1;
  const Decision decision = policy_.Next(cycle_attempt, result, random_);

  AttemptRecord rec = RecordOf(d, started, result.outcome);
  rec.duration_ms = static_cast<int>(elapsed.count());
  rec.status_code = sent.status_code;
  // Both come from the network (curl quotes a server's words in its errors): invalid
  // UTF-8 would make PostgreSQL refuse the whole outcome batch it is written in.
  if (sent.error) rec.error = SanitizeUtf8(*sent.error);
  rec.response_body = SanitizeUtf8(sent.body);
  rec.probe = d.kind == ClaimKind::kProbe;
  rec.clean = d.clean;
  // Only a failure can set a probe time: a success draws nothing.
  if (rec.outcome != Outcome::kSuccess) rec.jitter = random_.Unit();
  ApplyDecision(decision, rec);
  if (LogEnabled(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, "attempt",
        {{"event_id", FormatId(kEventPrefix, d.event_id)},
         {"delivery_id", FormatId(kDeliveryPrefix, d.delivery_id)},
         {"destination_id", FormatId(kDestinationPrefix, d.destination_id)},
         {"attempt", rec.attempt_number},
         {"status_code", static_cast<int64_t>(sent.status_code.value_or(0))},
         {"outcome", OutcomeName(rec.outcome)},
         {"duration_ms", static_cast<int64_t>(rec.duration_ms)}});
  }
  if (metrics_ != nullptr) {
    metrics_->attempt_duration.Observe(Seconds(elapsed));
    metrics_
        ->attempts_by_transport[static_cast<int>(TransportOfUrl(d.url))]
                               [static_cast<int>(result.outcome)]
        .Inc();
  }
  if (options_.spans != nullptr && s.trace.sampled) {
    options_.spans->Emit(AttemptSpan(d, s.trace, started, clock_.Now(), sent, rec.outcome));
  }
  Record({std::move(rec)});
  Ended();
}

void Dispatcher::Record(std::vector<AttemptRecord> records) {
  {
    std::lock_guard lock(records_mu_);
    // The first outcome of a batch marks the sends it may wait for: those started by now.
    if (records_.empty()) records_wave_ = sends_started_.load();
    for (auto& r : records) records_.push_back(std::move(r));
  }
  records_cv_.notify_one();
}

void Dispatcher::Ended() {
  // All under the lock, the wake-up included: once the count reaches 0 the shutdown's wait
  // may return and the Dispatcher be destroyed, so nothing of it may be touched after the
  // lock is released (ThreadSanitizer saw Wake() race the destructor).
  // The claim loop adds to the count without this lock, hence the atomic counts.
  // The count falls before the flag is read, and the claim loop raises the flag before it
  // counts again: one of the two sees the other.
  std::lock_guard lock(done_mu_);
  const int64_t ended = ++sends_ended_;
  const int after = static_cast<int>(sends_started_.load() - ended);
  // Only a loop that waits for slots is woken, and only once a useful share is free, not
  // on every completion. A loop that got less than it asked for waits for outcomes
  // instead (a destination's cap counts a delivery until its outcome is written).
  if (slots_full_ &&
      (after <= 0 || options_.concurrency - after >= std::max(1, options_.claim_batch / 4))) {
    Wake();
  }
  // The last send a waiting recorder waits for has ended: it writes its outcomes now.
  // Notified under its lock, so a recorder between its check and its wait is not missed.
  if (ended == records_wave_.load()) {
    std::lock_guard records_lock(records_mu_);
    records_cv_.notify_all();
  }
  if (after == 0) done_cv_.notify_all();
}

AttemptRecord Dispatcher::Skip(const ClaimedDelivery& d) {
  AttemptRecord rec = RecordOf(d, clock_.Now(), Outcome::kSkipped);
  rec.error = "circuit open";
  rec.jitter = random_.Unit();
  AttemptResult result;
  result.outcome = Outcome::kSkipped;
  ApplyDecision(policy_.Next(d.cycle_attempts + 1, result, random_), rec);
  return rec;
}

Result<RecordedOutcomes> Dispatcher::WriteOutcomes(std::span<const AttemptRecord> batch) {
  auto written = queue_.RecordOutcomes(batch, options_.protection);
  if (written || written.error().kind == ErrorKind::kUnavailable) return written;
  // The database refused the statement itself. Kept and retried, one record it can never
  // take (an attempt number written twice, once a claim read a stale attempt count)
  // failed every batch it was in, and each delivery in them waited for its lease and was
  // sent again. Alone, the others are written; a record refused alone is dropped, and its
  // delivery goes again when its lease runs out. Writing a record twice changes nothing
  // (its claim token no longer matches), so a connection lost midway retries the batch.
  RecordedOutcomes all;
  for (const AttemptRecord& r : batch) {
    auto one = queue_.RecordOutcomes({&r, 1}, options_.protection);
    if (!one && one.error().kind == ErrorKind::kUnavailable) return one;
    if (!one) {
      Log(LogLevel::kError,
          "an outcome the database refused was dropped; the delivery goes again after its lease",
          {{"delivery_id", FormatId(kDeliveryPrefix, r.delivery_id)},
           {"attempt", r.attempt_number},
           {"error", one.error().message}});
      continue;
    }
    all.applied.insert(all.applied.end(), one->applied.begin(), one->applied.end());
    all.fallen.insert(all.fallen.end(), one->fallen.begin(), one->fallen.end());
    all.circuits_opened += one->circuits_opened;
    all.circuits_closed += one->circuits_closed;
  }
  return all;
}

void Dispatcher::RecordLoop() {
  std::vector<AttemptRecord> batch;
  Duration delay = kFirstBackoff;
  for (;;) {
    {
      std::unique_lock lock(records_mu_);
      records_cv_.wait(lock, [&] { return !records_.empty() || records_closed_; });
      if (records_.empty() && records_closed_ && batch.empty()) return;
      // A few milliseconds of patience turns many outcomes into one statement, but only
      // the sends already running when the first of them arrived are waited for: those
      // started later end a whole send later, and what waits for these outcomes (a
      // destination whose cap they fill, an ordering key's next event) would wait for
      // them too. One key's drain went from 230 to ~500 deliveries/s. A missed wake-up
      // costs only the patience.
      if (static_cast<int>(records_.size()) < options_.flush_batch && !records_closed_) {
        records_cv_.wait_for(lock, options_.flush_interval, [&] {
          return static_cast<int>(records_.size()) >= options_.flush_batch || records_closed_ ||
                 sends_ended_.load() >= records_wave_.load();
        });
      }
      const auto take = static_cast<std::ptrdiff_t>(std::min<size_t>(records_.size(), 1024));
      std::move(records_.begin(), records_.begin() + take, std::back_inserter(batch));
      records_.erase(records_.begin(), records_.begin() + take);
    }
    if (batch.empty()) continue;
    auto written = WriteOutcomes(batch);
    if (!written) {
      // Keep the outcomes and retry: a lease that runs out meanwhile makes them stale
      // (the claim token no longer matches) and the delivery is simply sent again.
      Log(LogLevel::kWarn, "recording outcomes failed; retrying",
          {{"count", static_cast<int64_t>(batch.size())}, {"error", written.error().message}});
      Backoff(delay);
      if (stopping_ && delay >= kMaxBackoff && records_closed_) {
        Log(LogLevel::kError, "giving up on outcomes at shutdown; their leases will expire",
            {{"count", static_cast<int64_t>(batch.size())}});
        batch.clear();
      }
      continue;
    }
    delay = kFirstBackoff;
    if (written->circuits_opened > 0 || written->circuits_closed > 0) {
      Log(LogLevel::kInfo, "circuits changed",
          {{"opened", written->circuits_opened}, {"closed", written->circuits_closed}});
      if (metrics_ != nullptr) {
        metrics_->circuit_transitions[static_cast<int>(CircuitState::kOpen)].Inc(
            written->circuits_opened);
        metrics_->circuit_transitions[static_cast<int>(CircuitState::kClosed)].Inc(
            written->circuits_closed);
      }
    }
    // Stale records (a lost lease) changed nothing and are not counted.
    const std::unordered_set<int64_t> applied(written->applied.begin(), written->applied.end());
    const std::unordered_set<int64_t> fallen(written->fallen.begin(), written->fallen.end());
    const Timestamp now = clock_.Now();
    bool retries = false;
    for (AttemptRecord& r : batch) {
      if (!applied.contains(r.delivery_id)) continue;
      if (fallen.contains(r.delivery_id)) {
        // Put in its destination's feed instead (docs/feeds.md, "Fallback"): pending, not
        // a dead letter, and counted as such.
        Log(LogLevel::kInfo, "put in the destination's feed instead of the dead letters",
            {{"delivery_id", FormatId(kDeliveryPrefix, r.delivery_id)},
             {"destination_id", FormatId(kDestinationPrefix, r.destination_id)},
             {"attempt", r.attempt_number}});
        r.next_status = DeliveryStatus::kPending;
        r.dead_letter_reason.reset();
      }
      retries = retries || r.next_status == DeliveryStatus::kPending;
      Observe(r, now);
      if (r.next_status == DeliveryStatus::kDeadLettered) {
        Log(LogLevel::kInfo, "dead-lettered",
            {{"event_id", FormatId(kEventPrefix, r.event_id)},
             {"delivery_id", FormatId(kDeliveryPrefix, r.delivery_id)},
             {"destination_id", FormatId(kDestinationPrefix, r.destination_id)},
             {"attempt", r.attempt_number},
             {"reason", r.dead_letter_reason ? DeadLetterReasonName(*r.dead_letter_reason) : ""}});
      }
    }
    batch.clear();
    // The claim loop last looked for the next due time before these retries were
    // written: let it look again, or a short wait is stretched to the fallback poll. A
    // claim held back by caps may find room now that these outcomes no longer count.
    if (held_back_.exchange(false) || retries) Recheck();
  }
}

void Dispatcher::ExpireFeedLeases() {
  // Bounded per sweep: a backlog of ended leases is worked off a batch a second.
  constexpr int kExpiriesPerSweep = 1000;
  auto expired = queue_.ExpiredFeedLeases(kExpiriesPerSweep);
  if (!expired || expired->empty()) return;
  const Timestamp now = clock_.Now();
  std::vector<AttemptRecord> records;
  records.reserve(expired->size());
  for (const FeedMessage& m : *expired) {
    AttemptRecord rec;
    rec.delivery_id = m.delivery_id;
    rec.claim_token = m.lease_token;
    rec.destination_id = m.destination_id;
    rec.event_id = m.event_id;
    rec.attempt_number = m.attempt_count + 1;
    rec.started_at = now;
    rec.outcome = Outcome::kRetryable;
    rec.error = "lease expired";
    rec.delivery_created_at = m.created_at;
    ApplyDecision(
        policy_.Next(m.cycle_attempts + 1,
                     AttemptResult{Outcome::kRetryable, std::nullopt, std::nullopt}, random_),
        rec);
    records.push_back(std::move(rec));
  }
  auto recorded = queue_.RecordOutcomes(records, options_.protection);
  if (!recorded) {
    Log(LogLevel::kWarn, "could not record ended feed leases",
        {{"error", recorded.error().message}});
    return;
  }
  for (AttemptRecord& r : records) {
    if (std::ranges::find(recorded->applied, r.delivery_id) == recorded->applied.end()) continue;
    // A message of a destination that falls back to its feed stays there: no dead letter.
    if (std::ranges::find(recorded->fallen, r.delivery_id) != recorded->fallen.end()) {
      r.next_status = DeliveryStatus::kPending;
      r.dead_letter_reason.reset();
    }
    Observe(r, now);
  }
  Log(LogLevel::kInfo, "feed leases ended without an ack",
      {{"count", static_cast<int64_t>(recorded->applied.size())}});
}

}  // namespace webhookd
