// The dispatcher against an in-memory store and a scripted sender: what it sends, the
// attempt records it writes (with the exact waits of the retry policy for scripted random
// values), and what it hands back on Stop(). No database, no network.
#include "worker/dispatcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/encoding.h"
#include "base/metrics.h"
#include "core/ids.h"
#include "core/signing.h"
#include "tests/testing/fakes.h"
#include "tests/testing/wait.h"
#include "worker/threaded_sender.h"

namespace webhookd::dispatcher_test {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeRandom;

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

class FakeListener final : public WakeupListener {
 public:
  Result<bool> Wait(Duration timeout) override {
    std::this_thread::sleep_for(std::min<Duration>(timeout, 5ms));
    return false;
  }
};

// Only what the dispatcher uses has behaviour; everything else fails with kInternal.
// A delivery recorded as pending is due again at once, with a new claim token.
class FakeQueue final : public DeliveryQueue {
 public:
  std::mutex mu;
  std::condition_variable cv;
  std::deque<ClaimedDelivery> due;
  std::vector<AttemptRecord> records;
  std::vector<ReleasedClaim> released;
  std::vector<ClaimedDelivery> claimed;
  std::vector<int> claim_limits;
  Duration lease{0};
  int default_cap = 0;
  std::function<void()> on_claim;  // runs inside ClaimDue, before it answers
  int64_t next_token = 1000;
  int rate_limited_per_claim = 0;
  ProtectionSettings protection;  // as last passed to RecordOutcomes
  RecordedOutcomes transitions;   // added to every RecordOutcomes answer
  // When > 0, at most this many claimed deliveries may be unrecorded, as a destination's
  // cap counts its deliveries until their outcomes are written.
  int unrecorded_cap = 0;
  Duration record_delay{0};   // each RecordOutcomes waits this long before it records
  int record_statements = 0;  // RecordOutcomes calls
  // A batch holding one of these delivery ids is refused whole, as PostgreSQL refuses a
  // statement, and counted.
  std::vector<int64_t> refused;
  int refusals = 0;

  void Add(ClaimedDelivery d) {
    std::lock_guard lock(mu);
    due.push_back(std::move(d));
  }
  bool WaitForRecords(size_t n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return records.size() >= n; });
  }

  Result<ClaimedBatch> ClaimDue(int limit, Duration l, int cap) override {
    ClaimedBatch batch;
    std::vector<ClaimedDelivery>& out = batch.deliveries;
    {
      std::lock_guard lock(mu);
      claim_limits.push_back(limit);
      lease = l;
      default_cap = cap;
      const auto unrecorded = [&] {
        return static_cast<int>(claimed.size() - records.size() - released.size());
      };
      while (!due.empty() && static_cast<int>(out.size()) < limit &&
             (unrecorded_cap == 0 || unrecorded() < unrecorded_cap)) {
        ClaimedDelivery d = std::move(due.front());
        due.pop_front();
        d.claim_token = next_token++;
        claimed.push_back(d);
        out.push_back(std::move(d));
      }
    }
    if (!out.empty() && on_claim) on_claim();
    batch.rate_limited = rate_limited_per_claim;
    return batch;
  }
  Result<RecordedOutcomes> RecordOutcomes(std::span<const AttemptRecord> batch,
                                          const ProtectionSettings& settings) override {
    RecordedOutcomes recorded = transitions;
    std::vector<int64_t>& applied = recorded.applied;
    std::this_thread::sleep_for(record_delay);
    {
      std::lock_guard lock(mu);
      if (std::any_of(batch.begin(), batch.end(), [&](const AttemptRecord& r) {
            return std::find(refused.begin(), refused.end(), r.delivery_id) != refused.end();
          })) {
        ++refusals;
        return Fail(ErrorKind::kInternal, "duplicate key value violates unique constraint");
      }
      ++record_statements;
      protection = settings;
      for (const AttemptRecord& r : batch) {
        records.push_back(r);
        applied.push_back(r.delivery_id);
        if (r.next_status != DeliveryStatus::kPending) continue;
        auto it = std::find_if(claimed.rbegin(), claimed.rend(), [&](const ClaimedDelivery& c) {
          return c.delivery_id == r.delivery_id;
        });
        ClaimedDelivery again = *it;
        again.attempt_count = r.attempt_number;
        again.cycle_attempts += 1;
        due.push_back(std::move(again));
      }
    }
    cv.notify_all();
    return recorded;
  }
  Result<int> ReleaseClaims(std::span<const ReleasedClaim> claims) override {
    std::lock_guard lock(mu);
    released.insert(released.end(), claims.begin(), claims.end());
    return static_cast<int>(claims.size());
  }
  Result<int> RequeueExpiredLeases() override { return 0; }
  // Whatever waits in `due` is due at once (the epoch is before any clock's now).
  Result<std::optional<Timestamp>> NextDueAt() override {
    std::lock_guard lock(mu);
    if (due.empty()) return std::optional<Timestamp>();
    return std::optional<Timestamp>(Timestamp{});
  }
  Result<std::unique_ptr<WakeupListener>> Listen() override {
    return std::unique_ptr<WakeupListener>(std::make_unique<FakeListener>());
  }
};

SendResult Answer(int status, std::optional<std::string> retry_after = std::nullopt) {
  SendResult r;
  r.status_code = status;
  r.body = "body " + std::to_string(status);
  r.retry_after = std::move(retry_after);
  return r;
}

// Answers from a script, in order (the last one repeats); records every request.
class FakeSender final : public Sender {
 public:
  explicit FakeSender(std::vector<SendResult> script = {}) : script_(std::move(script)) {
    if (script_.empty()) script_.push_back(Answer(200));
  }

  SendResult Send(const Outgoing& out) override {
    std::unique_lock lock(mu_);
    sent.push_back(out);
    ++started_;
    cv_.notify_all();
    const size_t n = sent.size();
    cv_.wait(lock, [&] { return open_ || released_ > 0; });
    if (!open_) --released_;
    return script_[std::min(n - 1, script_.size() - 1)];
  }
  // While closed, lets `n` blocked or later requests answer.
  void Release(int n) {
    {
      std::lock_guard lock(mu_);
      released_ += n;
    }
    cv_.notify_all();
  }
  // While closed, Send blocks after recording its request.
  void SetOpen(bool open) {
    {
      std::lock_guard lock(mu_);
      open_ = open;
    }
    cv_.notify_all();
  }
  bool WaitForStarted(int n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return started_ >= n; });
  }
  std::vector<Outgoing> Sent() {
    std::lock_guard lock(mu_);
    return sent;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<SendResult> script_;
  std::vector<Outgoing> sent;
  int started_ = 0;
  int released_ = 0;
  bool open_ = true;

 public:
  // What the dispatcher is given: these answers, on threads of their own. Last, so it is
  // stopped before the script goes.
  ThreadedSender async{*this, 16};
};

ClaimedDelivery Delivery(int64_t id, int attempt_count = 0, int cycle_attempts = 0) {
  ClaimedDelivery d;
  d.delivery_id = id;
  d.event_id = 500 + id;
  d.event_type = "order.created";
  d.payload = R"({"a":1})";
  d.event_created_at = Timestamp(std::chrono::seconds(1'699'999'000));
  d.destination_id = 7;
  d.url = "http://example.test/hook";
  d.secrets = {kSecret};
  d.headers = {{"X-Tenant", "acme"}};
  d.attempt_count = attempt_count;
  d.cycle_attempts = cycle_attempts;
  d.created_at = d.event_created_at;
  return d;
}

std::string HeaderOf(const Outgoing& out, const std::string& name) {
  for (const auto& [k, v] : out.headers)
    if (k == name) return v;
  return "<absent>";
}

Dispatcher::Options FastOptions(int concurrency = 4) {
  Dispatcher::Options o;
  o.concurrency = concurrency;
  o.claim_batch = concurrency;
  o.lease = 30s;
  o.default_max_in_flight = 3;
  o.fallback_poll = 10ms;
  return o;
}

// Runs a dispatcher on its own thread for the life of the object.
class Running {
 public:
  explicit Running(Dispatcher& d) : d_(d), thread_([this] { d_.Run(); }) {}
  ~Running() { Stop(); }
  void Stop() {
    d_.Stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  Dispatcher& d_;
  std::thread thread_;
};

// Schedule 10 s, 20 s with jitter 0.2; a random draw of 0.25 makes the factor 0.9.
const RetryPolicy kPolicy({10s, 20s}, 0.2);

TEST(DispatcherTest, A503Then200MakesTwoRecordsWithThePolicysWait) {
  FakeQueue store;
  FakeSender sender({Answer(503), Answer(200)});
  FakeClock clock;
  FakeRandom random({0.25});
  store.Add(Delivery(1));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(2));
  run.Stop();

  ASSERT_EQ(store.records.size(), 2u);
  ASSERT_EQ(store.claimed.size(), 2u);
  const AttemptRecord& first = store.records[0];
  EXPECT_EQ(first.delivery_id, 1);
  EXPECT_EQ(first.claim_token, store.claimed[0].claim_token);
  EXPECT_EQ(first.destination_id, 7);
  EXPECT_EQ(first.event_id, 501);
  EXPECT_EQ(first.attempt_number, 1);
  EXPECT_EQ(first.status_code, 503);
  EXPECT_FALSE(first.error.has_value());
  EXPECT_EQ(first.response_body, "body 503");
  EXPECT_EQ(first.outcome, Outcome::kRetryable);
  EXPECT_EQ(first.next_status, DeliveryStatus::kPending);
  EXPECT_EQ(first.wait, Duration(9s));  // 10 s × (0.8 + 0.4 × 0.25)
  FakeRandom same({0.25});
  EXPECT_EQ(first.wait, kPolicy.Wait(0, same));
  EXPECT_FALSE(first.dead_letter_reason.has_value());
  EXPECT_FALSE(first.disable_destination);
  EXPECT_EQ(first.started_at, clock.Now());
  EXPECT_EQ(first.jitter, 0.25);  // the probe-time draw, should this failure open a circuit

  const AttemptRecord& second = store.records[1];
  EXPECT_EQ(second.claim_token, store.claimed[1].claim_token);
  EXPECT_NE(second.claim_token, first.claim_token);
  EXPECT_EQ(second.attempt_number, 2);
  EXPECT_EQ(second.status_code, 200);
  EXPECT_EQ(second.outcome, Outcome::kSuccess);
  EXPECT_EQ(second.next_status, DeliveryStatus::kSucceeded);
  EXPECT_EQ(second.wait, Duration(0));
  EXPECT_EQ(second.jitter, 0);
  // The 503 draws its wait and the jitter of a probe time it may set; a success nothing.
  EXPECT_EQ(random.draws(), 2u);
  EXPECT_EQ(store.lease, Duration(30s));
  EXPECT_EQ(store.default_cap, 3);
  EXPECT_TRUE(store.released.empty());
  EXPECT_EQ(dispatcher.in_flight(), 0);
}

// An error text quoting a server's bytes may be invalid UTF-8; stored as it came,
// PostgreSQL refused the whole outcome batch it was written in.
TEST(DispatcherTest, AnErrorWithInvalidUtf8IsRecordedSanitized) {
  FakeQueue store;
  SendResult bad;
  bad.error = "Weird server reply (\xff\xfe\xc3)";
  bad.body = "\xc0\xaf";
  FakeSender sender({bad});
  FakeClock clock;
  FakeRandom random({0.25});
  store.Add(Delivery(1));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  run.Stop();
  const AttemptRecord& r = store.records[0];
  ASSERT_TRUE(r.error.has_value());
  EXPECT_TRUE(IsValidUtf8(*r.error)) << *r.error;
  EXPECT_TRUE(r.error->starts_with("Weird server reply (")) << *r.error;
  EXPECT_TRUE(IsValidUtf8(r.response_body));
  EXPECT_EQ(r.outcome, Outcome::kRetryable);
}

// A broker's confirm is a success without a status code (docs/brokers.md); an error
// beside it is not.
TEST(DispatcherTest, ABrokersConfirmIsASuccessWithoutAStatusCode) {
  FakeQueue store;
  SendResult confirmed;
  confirmed.acknowledged = true;
  confirmed.body = "1700000000000-0";
  SendResult failed;
  failed.acknowledged = true;
  failed.error = "redis: OOM command not allowed";
  FakeSender sender({confirmed, failed});
  FakeClock clock;
  FakeRandom random({0.25, 0.25});
  store.Add(Delivery(1));
  store.Add(Delivery(2));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(2));
  run.Stop();
  // Each delivery's first attempt: on a slow machine the failed one is tried again (the
  // script's last answer) before the dispatcher stops.
  std::map<Outcome, int> outcomes;
  for (const AttemptRecord& r : store.records) {
    if (r.attempt_number != 1) continue;
    ++outcomes[r.outcome];
    EXPECT_FALSE(r.status_code);
    if (r.outcome == Outcome::kSuccess) {
      EXPECT_EQ(r.next_status, DeliveryStatus::kSucceeded);
      EXPECT_EQ(r.response_body, "1700000000000-0");
    }
  }
  EXPECT_EQ(outcomes[Outcome::kSuccess], 1);
  EXPECT_EQ(outcomes[Outcome::kRetryable], 1);
}

// A broker attempt that found no connection free (docs/brokers.md) never reached the
// broker: it is recorded as skipped, with the words why, and scheduled as a retry; the
// message names its tenant and destination, whose connections are counted.
TEST(DispatcherTest, AnAttemptThatFoundNoBrokerConnectionFreeIsRecordedAsSkipped) {
  FakeQueue store;
  SendResult full;
  full.at_capacity = true;
  full.error = "broker connections: the tenant's 16 connections are all in use";
  FakeSender sender({full});
  FakeClock clock;
  FakeRandom random({0.25});
  ClaimedDelivery d = Delivery(1);
  d.tenant_id = "acme";
  store.Add(d);
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  run.Stop();
  const AttemptRecord& r = store.records[0];
  EXPECT_EQ(r.outcome, Outcome::kSkipped);
  EXPECT_EQ(r.error, "broker connections: the tenant's 16 connections are all in use");
  EXPECT_EQ(r.next_status, DeliveryStatus::kPending);
  ASSERT_FALSE(sender.Sent().empty());
  EXPECT_EQ(sender.Sent()[0].tenant, "acme");
  EXPECT_EQ(sender.Sent()[0].destination_id, d.destination_id);
}

TEST(DispatcherTest, EachAttemptIsSignedWithTheSameBody) {
  FakeQueue store;
  FakeSender sender({Answer(500), Answer(204)});
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1));
  sender.SetOpen(false);
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(sender.WaitForStarted(1));
  clock.Advance(10s);  // the second attempt starts after this and carries its own time
  sender.SetOpen(true);
  ASSERT_TRUE(store.WaitForRecords(2));
  run.Stop();

  const auto sent = sender.Sent();
  ASSERT_EQ(sent.size(), 2u);
  const std::string body =
      R"({"type":"order.created","timestamp":"2023-11-14T21:56:40.000000Z","data":{"a":1}})";
  const std::string key = *DecodeSecret(kSecret);
  std::set<std::string> timestamps;
  for (const Outgoing& out : sent) {
    EXPECT_EQ(out.url, "http://example.test/hook");
    EXPECT_EQ(out.body, body);
    EXPECT_EQ(HeaderOf(out, "Content-Type"), "application/json");
    EXPECT_EQ(HeaderOf(out, "User-Agent"), std::string("webhookd/") + WEBHOOKD_VERSION);
    EXPECT_EQ(HeaderOf(out, "webhook-id"), "evt_501");
    EXPECT_EQ(HeaderOf(out, "X-Tenant"), "acme");
    const std::string ts = HeaderOf(out, "webhook-timestamp");
    timestamps.insert(ts);
    EXPECT_EQ(HeaderOf(out, "webhook-signature"), Sign(key, "evt_501", std::stoll(ts), body));
  }
  EXPECT_EQ(HeaderOf(sent[0], "webhook-timestamp"), "1700000000");
  EXPECT_EQ(HeaderOf(sent[1], "webhook-timestamp"), "1700000010");
  EXPECT_EQ(timestamps.size(), 2u);
  EXPECT_EQ(store.records[1].started_at, clock.Now());
}

TEST(DispatcherTest, RetryAfterAndA429AreScaledAsTheContractSays) {
  FakeQueue store;
  FakeSender sender({Answer(503, "7"), Answer(429), Answer(429, "1"), Answer(200)});
  FakeClock clock;
  FakeRandom random({0.25});
  store.Add(Delivery(1));
  const RetryPolicy policy({10s, 20s, 30s, 40s}, 0.2);
  Dispatcher dispatcher(store, sender.async, clock, random, policy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(4));
  run.Stop();

  ASSERT_EQ(store.records.size(), 4u);
  EXPECT_EQ(store.records[0].wait, Duration(7350ms));  // 7 s × (1 + 0.2 × 0.25)
  EXPECT_EQ(store.records[1].wait, Duration(36s));     // twice 20 s × 0.9
  EXPECT_EQ(store.records[2].wait, Duration(1050ms));  // 1 s × 1.05
  EXPECT_EQ(store.records[3].next_status, DeliveryStatus::kSucceeded);
}

TEST(DispatcherTest, A410DeadLettersAndDisablesTheDestination) {
  FakeQueue store;
  FakeSender sender({Answer(410)});
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  std::this_thread::sleep_for(100ms);  // nothing more may come
  run.Stop();

  ASSERT_EQ(store.records.size(), 1u);
  const AttemptRecord& r = store.records[0];
  EXPECT_EQ(r.status_code, 410);
  EXPECT_EQ(r.outcome, Outcome::kPermanent);
  EXPECT_EQ(r.next_status, DeliveryStatus::kDeadLettered);
  EXPECT_EQ(r.dead_letter_reason, DeadLetterReason::kPermanentFailure);
  EXPECT_TRUE(r.disable_destination);
  EXPECT_EQ(sender.Sent().size(), 1u);
}

TEST(DispatcherTest, OtherPermanentFailuresDoNotDisable) {
  FakeQueue store;
  FakeSender sender({Answer(404)});
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  run.Stop();
  EXPECT_EQ(store.records[0].next_status, DeliveryStatus::kDeadLettered);
  EXPECT_EQ(store.records[0].dead_letter_reason, DeadLetterReason::kPermanentFailure);
  EXPECT_FALSE(store.records[0].disable_destination);
}

TEST(DispatcherTest, TheLastAttemptOfACycleExhausts) {
  // A replayed delivery: 7 attempts in all, 2 of them in this cycle of 3 (schedule of 2).
  FakeQueue store;
  SendResult refused;
  refused.error = "HTTP Connection";
  FakeSender sender({refused});
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1, 7, 2));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  run.Stop();

  ASSERT_EQ(store.records.size(), 1u);
  const AttemptRecord& r = store.records[0];
  EXPECT_EQ(r.attempt_number, 8);
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_EQ(r.error, "HTTP Connection");
  EXPECT_EQ(r.outcome, Outcome::kRetryable);
  EXPECT_EQ(r.next_status, DeliveryStatus::kDeadLettered);
  EXPECT_EQ(r.dead_letter_reason, DeadLetterReason::kExhausted);
  EXPECT_FALSE(r.disable_destination);
}

TEST(DispatcherTest, AnUnusableSecretIsAPermanentFailureAndNothingIsSent) {
  FakeQueue store;
  FakeSender sender;
  FakeClock clock;
  FakeRandom random({0.5});
  ClaimedDelivery d = Delivery(1);
  d.secrets = {"whsec_short"};
  store.Add(d);
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  run.Stop();
  EXPECT_TRUE(sender.Sent().empty());
  EXPECT_EQ(store.records[0].next_status, DeliveryStatus::kDeadLettered);
  EXPECT_EQ(store.records[0].dead_letter_reason, DeadLetterReason::kPermanentFailure);
}

TEST(DispatcherTest, ClaimsNoMoreThanItsFreeSlots) {
  FakeQueue store;
  FakeSender sender;
  sender.SetOpen(false);
  FakeClock clock;
  FakeRandom random({0.5});
  for (int i = 1; i <= 10; ++i) store.Add(Delivery(i));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions(3));
  Running run(dispatcher);
  ASSERT_TRUE(sender.WaitForStarted(3));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(sender.Sent().size(), 3u);
  EXPECT_EQ(dispatcher.in_flight(), 3);
  {
    std::lock_guard lock(store.mu);
    EXPECT_EQ(store.claimed.size(), 3u);
    for (int limit : store.claim_limits) EXPECT_LE(limit, 3);
  }
  sender.SetOpen(true);
  ASSERT_TRUE(store.WaitForRecords(10));
  run.Stop();
  EXPECT_EQ(dispatcher.in_flight(), 0);
}

TEST(DispatcherTest, AClaimHeldBackByACapIsMadeAgainOnceOutcomesAreWritten) {
  FakeQueue store;
  store.unrecorded_cap = 1;
  // The claim after the first send comes before its outcome is written, and gets nothing.
  store.record_delay = 200ms;
  FakeSender sender;
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1));
  store.Add(Delivery(2));
  Dispatcher::Options options = FastOptions();
  options.fallback_poll = 1h;  // nothing but the recorder can wake the loop in time
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, options);
  Running run(dispatcher);
  EXPECT_TRUE(store.WaitForRecords(2, 5s)) << "the held-back claim waited for the poll";
  run.Stop();
}

TEST(DispatcherTest, OutcomesWaitForTheSendsRunningWhenTheFirstArrivedAndNoLonger) {
  // A recorder's patience is an hour here: an outcome written at all was written because
  // the sends it waited for had ended, not because the patience ran out.
  FakeQueue store;
  FakeSender sender;
  sender.SetOpen(false);
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1));
  store.Add(Delivery(2));
  Dispatcher::Options options = FastOptions();
  options.flush_interval = 1h;
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, options);
  Running run(dispatcher);
  struct Opened {  // before the dispatcher stops, even after a failed assertion
    FakeSender& sender;
    ~Opened() { sender.SetOpen(true); }
  } opened{sender};
  ASSERT_TRUE(sender.WaitForStarted(2));
  sender.Release(1);
  std::this_thread::sleep_for(200ms);
  {
    std::lock_guard lock(store.mu);
    EXPECT_TRUE(store.records.empty()) << "written while the other send was still running";
  }
  sender.Release(1);
  ASSERT_TRUE(store.WaitForRecords(2)) << "held for the patience with no send running";
  {
    std::lock_guard lock(store.mu);
    EXPECT_EQ(store.record_statements, 1);
  }
  // A send started after the first outcome arrived does not hold it: it ends a whole
  // send later.
  store.Add(Delivery(3));
  store.Add(Delivery(4));
  ASSERT_TRUE(sender.WaitForStarted(4));
  sender.Release(1);  // the first outcome arrives with two sends running
  // Its send ends after its outcome reaches the recorder: only then is the fifth added, or
  // a slow sender thread would let the fifth start before that outcome arrived.
  ASSERT_TRUE(testing::WaitUntil([&] { return dispatcher.in_flight() == 1; }, 10s, 10ms));
  store.Add(Delivery(5));
  ASSERT_TRUE(sender.WaitForStarted(5));
  sender.Release(1);
  ASSERT_TRUE(store.WaitForRecords(4)) << "held for a send started after the first outcome";
  {
    std::lock_guard lock(store.mu);
    EXPECT_EQ(store.records.size(), 4u);  // the fifth is still being sent
  }
  sender.Release(1);
  EXPECT_TRUE(store.WaitForRecords(5));
  run.Stop();
}

TEST(DispatcherTest, AnOutcomeTheDatabaseRefusesHoldsUpNoOther) {
  // Retried whole, a batch with one record the database can never take failed until the
  // leases of all its deliveries ran out, and each of them was sent again.
  FakeQueue store;
  store.refused = {2};
  FakeSender sender;
  sender.SetOpen(false);
  FakeClock clock;
  FakeRandom random({0.5});
  for (int64_t id = 1; id <= 3; ++id) store.Add(Delivery(id));
  Dispatcher::Options options = FastOptions();
  options.flush_interval = 1h;  // the three outcomes are one batch
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, options);
  Running run(dispatcher);
  struct Opened {
    FakeSender& sender;
    ~Opened() { sender.SetOpen(true); }
  } opened{sender};
  ASSERT_TRUE(sender.WaitForStarted(3));
  sender.SetOpen(true);
  ASSERT_TRUE(store.WaitForRecords(2));
  std::this_thread::sleep_for(200ms);
  run.Stop();
  std::lock_guard lock(store.mu);
  std::vector<int64_t> written;  // in the order the outcomes arrived
  for (const AttemptRecord& r : store.records) written.push_back(r.delivery_id);
  std::sort(written.begin(), written.end());
  EXPECT_EQ(written, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(store.refusals, 2) << "the batch, then the record alone: never again";
}

TEST(DispatcherTest, AnEndedSendThatFreesNothingDueCostsNoClaim) {
  // One delivery, and nothing more due: its send ending and its outcome being written
  // free a slot and a cap, but what is due is read from the hints (NextDueAt), and no
  // claim is made for nothing.
  FakeQueue store;
  FakeSender sender;
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1));
  Dispatcher::Options options = FastOptions();
  options.fallback_poll = 1h;
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, options);
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  size_t before = 0;
  {
    // The claims made before the outcome was written: the first, and on a slow machine
    // a start-up wake or a capped poll that came before the write.
    std::lock_guard lock(store.mu);
    before = store.claim_limits.size();
  }
  std::this_thread::sleep_for(300ms);
  {
    std::lock_guard lock(store.mu);
    // At most one more: a capped poll whose 50 ms ran out while the outcome was written.
    EXPECT_LE(store.claim_limits.size(), before + 1);
  }
  run.Stop();
}

TEST(DispatcherTest, StopLetsASendInProgressFinishAndRecordsIt) {
  FakeQueue store;
  FakeSender sender;
  sender.SetOpen(false);
  FakeClock clock;
  FakeRandom random({0.5});
  store.Add(Delivery(1));
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  std::atomic<bool> returned{false};
  std::thread run([&] {
    dispatcher.Run();
    returned = true;
  });
  ASSERT_TRUE(sender.WaitForStarted(1));
  dispatcher.Stop();
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(returned) << "Run returned with a send in progress";
  sender.SetOpen(true);
  run.join();
  ASSERT_EQ(store.records.size(), 1u);
  EXPECT_EQ(store.records[0].next_status, DeliveryStatus::kSucceeded);
  EXPECT_TRUE(store.released.empty());
}

TEST(DispatcherTest, StopReleasesClaimedButUnstartedJobs) {
  // Stop() arrives while a batch is being claimed: what no sender has picked up yet goes
  // back through ReleaseClaims with its token; the rest is sent and recorded. How many
  // senders start first is up to the scheduler, so repeat until some were left unstarted
  // (under ThreadSanitizer 30 rounds once in about ten runs left none).
  bool saw_release = false;
  for (int round = 0; round < 200 && !saw_release; ++round) {
    FakeQueue store;
    FakeSender sender;
    FakeClock clock;
    FakeRandom random({0.5});
    constexpr int kJobs = 32;
    for (int i = 1; i <= kJobs; ++i) store.Add(Delivery(i));
    Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions(kJobs));
    store.on_claim = [&] { dispatcher.Stop(); };
    dispatcher.Run();  // returns once drained

    std::map<int64_t, int64_t> tokens;  // delivery -> claim token
    for (const ClaimedDelivery& c : store.claimed) tokens[c.delivery_id] = c.claim_token;
    ASSERT_EQ(tokens.size(), static_cast<size_t>(kJobs));
    std::set<int64_t> ended;
    for (const AttemptRecord& r : store.records) {
      EXPECT_EQ(r.claim_token, tokens[r.delivery_id]);
      EXPECT_TRUE(ended.insert(r.delivery_id).second) << "recorded twice: " << r.delivery_id;
    }
    for (const ReleasedClaim& c : store.released) {
      EXPECT_EQ(c.claim_token, tokens[c.delivery_id]);
      EXPECT_TRUE(ended.insert(c.delivery_id).second)
          << "both recorded and released: " << c.delivery_id;
    }
    EXPECT_EQ(ended.size(), static_cast<size_t>(kJobs)) << "a claim was lost";
    EXPECT_EQ(sender.Sent().size(), store.records.size());
    EXPECT_EQ(dispatcher.in_flight(), 0);
    saw_release = !store.released.empty();
  }
  EXPECT_TRUE(saw_release) << "no round left a claimed job unstarted";
}

TEST(DispatcherTest, AnOpenCircuitsDeliveryIsRecordedAsSkippedAndNotSent) {
  FakeQueue store;
  FakeSender sender;
  FakeClock clock;
  FakeRandom random({0.25});
  Metrics metrics;
  ClaimedDelivery d = Delivery(1, 4, 0);
  d.kind = ClaimKind::kSkip;
  store.Add(d);
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions(), &metrics);
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  run.Stop();

  EXPECT_TRUE(sender.Sent().empty());
  const AttemptRecord& r = store.records[0];
  EXPECT_EQ(r.delivery_id, 1);
  EXPECT_EQ(r.claim_token, store.claimed[0].claim_token);
  EXPECT_EQ(r.attempt_number, 5);
  EXPECT_EQ(r.outcome, Outcome::kSkipped);
  EXPECT_EQ(r.error, "circuit open");
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_FALSE(r.probe);
  // Scheduled exactly as a retryable failure of the same attempt would be.
  EXPECT_EQ(r.next_status, DeliveryStatus::kPending);
  EXPECT_EQ(r.wait, Duration(9s));
  EXPECT_GE(metrics.attempts_skipped.value(), 1u);
  EXPECT_EQ(metrics.attempts[static_cast<int>(Outcome::kRetryable)].value(), 0u);
}

TEST(DispatcherTest, ASkipOfTheCyclesLastAttemptDeadLettersAsExhausted) {
  FakeQueue store;
  FakeSender sender;
  FakeClock clock;
  FakeRandom random({0.5});
  ClaimedDelivery d = Delivery(1, 2, 2);  // the third and last attempt of kPolicy
  d.kind = ClaimKind::kSkip;
  store.Add(d);
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions());
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  std::this_thread::sleep_for(50ms);
  run.Stop();

  ASSERT_EQ(store.records.size(), 1u);
  EXPECT_TRUE(sender.Sent().empty());
  EXPECT_EQ(store.records[0].outcome, Outcome::kSkipped);
  EXPECT_EQ(store.records[0].next_status, DeliveryStatus::kDeadLettered);
  EXPECT_EQ(store.records[0].dead_letter_reason, DeadLetterReason::kExhausted);
}

TEST(DispatcherTest, AProbeIsSentAndItsRecordSaysSo) {
  FakeQueue store;
  FakeSender sender({Answer(200)});
  FakeClock clock;
  FakeRandom random({0.5});
  Metrics metrics;
  ClaimedDelivery probe = Delivery(1);
  probe.kind = ClaimKind::kProbe;
  store.Add(probe);
  ClaimedDelivery clean = Delivery(2);
  clean.clean = true;
  store.Add(clean);
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, FastOptions(), &metrics);
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(2));
  run.Stop();

  EXPECT_EQ(sender.Sent().size(), 2u);
  std::map<int64_t, bool> probes, cleans;
  for (const AttemptRecord& r : store.records) {
    probes[r.delivery_id] = r.probe;
    cleans[r.delivery_id] = r.clean;  // the claim's word, for the store's choice of statement
  }
  EXPECT_TRUE(probes[1]);
  EXPECT_FALSE(probes[2]);
  EXPECT_FALSE(cleans[1]);
  EXPECT_TRUE(cleans[2]);
  EXPECT_EQ(metrics.circuit_transitions[static_cast<int>(CircuitState::kHalfOpen)].value(), 1u);
}

TEST(DispatcherTest, ProtectionSettingsReachTheStoreAndItsTransitionsTheMetrics) {
  FakeQueue store;
  FakeSender sender;
  FakeClock clock;
  FakeRandom random({0.5});
  Metrics metrics;
  store.rate_limited_per_claim = 2;
  store.transitions.circuits_opened = 1;
  store.transitions.circuits_closed = 3;
  store.Add(Delivery(1));
  Dispatcher::Options options = FastOptions();
  options.protection.circuit = {7, 90s};
  options.protection.disable_after = 5min;
  options.protection.default_max_in_flight = 999;  // the dispatcher's own wins
  Dispatcher dispatcher(store, sender.async, clock, random, kPolicy, options, &metrics);
  Running run(dispatcher);
  ASSERT_TRUE(store.WaitForRecords(1));
  run.Stop();

  std::lock_guard lock(store.mu);
  EXPECT_EQ(store.protection.circuit.threshold, 7);
  EXPECT_EQ(store.protection.circuit.cooldown, Duration(90s));
  EXPECT_EQ(store.protection.disable_after, Duration(5min));
  EXPECT_EQ(store.protection.default_max_in_flight, 3);
  EXPECT_GE(metrics.rate_limited.value(), 2u);
  EXPECT_EQ(metrics.circuit_transitions[static_cast<int>(CircuitState::kOpen)].value(), 1u);
  EXPECT_EQ(metrics.circuit_transitions[static_cast<int>(CircuitState::kClosed)].value(), 3u);
}

}  // namespace
}  // namespace webhookd::dispatcher_test
