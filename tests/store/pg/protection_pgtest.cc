// Protecting a struggling receiver, on a real PostgreSQL: the claim and the outcome
// statement keep each destination's circuit, adaptive cap, rate limit and disabling in its
// row, and publish the operational events those changes cause in the same statement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <latch>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/circuit.h"
#include "store/pg/pg_store.h"
#include "tests/testing/fakes.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::protection_pgtest {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using testing::N;
using testing::RecordFor;

// Threshold 3, cooldown 10 s, never disabled, default cap 16.
ProtectionSettings Settings(Duration disable_after = Duration::zero()) {
  ProtectionSettings s;
  s.circuit = {3, 10s};
  s.disable_after = disable_after;
  s.default_max_in_flight = 16;
  return s;
}

class ProtectionPgTest : public testing::PgTest {
 protected:
  int64_t Destination(std::optional<int> max_in_flight = std::nullopt,
                      std::vector<std::string> event_types = {"order.*"},
                      std::optional<int> rate_limit = std::nullopt) {
    webhookd::Destination d = testing::TestDestination(std::move(event_types), max_in_flight);
    d.rate_limit = rate_limit;
    return CreateDestination(d);
  }

  void Ingest(int n, const std::string& type = "order.created") {
    for (int i = 0; i < n; ++i) {
      auto r =
          store_.InsertEvent(NewEvent{type, R"({"i":)" + N(i) + "}", std::nullopt}, std::nullopt);
      ASSERT_TRUE(r) << r.error().message;
    }
  }

  ClaimedBatch ClaimBatch(int limit = 100, int default_cap = 16) {
    auto r = store_.ClaimDue(limit, 1h, default_cap);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : ClaimedBatch{};
  }

  RecordedOutcomes Write(const std::vector<AttemptRecord>& records,
                         const ProtectionSettings& settings = Settings()) {
    auto r = store_.RecordOutcomes(records, settings);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : RecordedOutcomes{};
  }

  // Each claimed delivery ends with `status` (a retryable failure is due again at once).
  RecordedOutcomes Answer(const std::vector<ClaimedDelivery>& claimed, int status,
                          const ProtectionSettings& settings = Settings()) {
    std::vector<AttemptRecord> records;
    for (const auto& c : claimed) records.push_back(Ended(c, status));
    return Write(records, settings);
  }

  static AttemptRecord Ended(const ClaimedDelivery& c, int status) {
    const Outcome outcome = ClassifyStatus(status);
    const DeliveryStatus next = outcome == Outcome::kSuccess     ? DeliveryStatus::kSucceeded
                                : outcome == Outcome::kRetryable ? DeliveryStatus::kPending
                                                                 : DeliveryStatus::kDeadLettered;
    AttemptRecord r = RecordFor(c, next, status, outcome);
    if (next == DeliveryStatus::kDeadLettered) {
      r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
      r.disable_destination = status == 410;
    }
    r.probe = c.kind == ClaimKind::kProbe;
    return r;
  }

  std::string Col(int64_t dst, const std::string& expr) {
    return db_.Scalar("SELECT " + expr + " FROM destinations WHERE id = " + N(dst));
  }

  // Microseconds from the statement that recorded `delivery`'s attempt (its updated_at is
  // that statement's now()) to its destination's probe time. Measured against a later
  // now() instead, it shrinks by however long the test took in between.
  int64_t ProbeWaitUs(int64_t delivery) {
    return std::stoll(db_.Scalar(
        "SELECT (extract(epoch FROM t.next_probe_at - d.updated_at) * 1000000)::bigint"
        " FROM destinations t JOIN deliveries d ON d.destination_id = t.id WHERE d.id = " +
        N(delivery)));
  }

  // The payloads of the operational events of `type`, oldest first.
  std::vector<Json> Events(const std::string& type) {
    std::vector<Json> out;
    const std::string all = db_.Scalar(
        "SELECT coalesce(json_agg(payload::json ORDER BY id), '[]') FROM events WHERE type = '" +
        type + "'");
    for (const Json& j : Json::parse(all)) out.push_back(j);
    return out;
  }

  // Opens `dst`'s circuit with three failures of its claimed deliveries.
  void OpenCircuit(int64_t dst) {
    auto batch = ClaimBatch(3);
    ASSERT_EQ(batch.deliveries.size(), 3u);
    for (const auto& c : batch.deliveries) ASSERT_EQ(c.destination_id, dst);
    const RecordedOutcomes r = Answer(batch.deliveries, 500);
    ASSERT_EQ(r.circuits_opened, 1);
    ASSERT_EQ(Col(dst, "circuit"), "open");
  }

  // Makes `dst`'s open circuit due for its probe now.
  void ProbeTimeReached(int64_t dst) {
    db_.Exec("UPDATE destinations SET next_probe_at = now() - interval '1 ms' WHERE id = " +
             N(dst));
  }
};

TEST_F(ProtectionPgTest, ThresholdFailuresOpenTheCircuitAndPublishItOnce) {
  const int64_t dst = Destination();
  const int64_t watcher = Destination(std::nullopt, {"webhookd.*"});
  Ingest(5);
  auto first = ClaimBatch(2);
  ASSERT_EQ(first.deliveries.size(), 2u);
  EXPECT_EQ(Answer(first.deliveries, 503).circuits_opened, 0);
  EXPECT_EQ(Col(dst, "circuit"), "closed");
  EXPECT_EQ(Col(dst, "consecutive_failures"), "2");
  EXPECT_EQ(Col(dst, "failing_since IS NOT NULL"), "t");

  auto third = ClaimBatch(1);
  ASSERT_EQ(third.deliveries.size(), 1u);
  AttemptRecord r =
      RecordFor(third.deliveries[0], DeliveryStatus::kPending, std::nullopt, Outcome::kRetryable);
  r.error = "connection refused";
  const RecordedOutcomes opened = Write({r});
  EXPECT_EQ(opened.circuits_opened, 1);
  EXPECT_EQ(opened.applied.size(), 1u);
  EXPECT_EQ(Col(dst, "circuit"), "open");
  EXPECT_EQ(Col(dst, "consecutive_failures"), "3");
  EXPECT_EQ(Col(dst, "cooldown_us"), "10000000");
  // The record's draw is 0: the cooldown times 0.8.
  EXPECT_EQ(ProbeWaitUs(third.deliveries[0].delivery_id), 8'000'000);

  auto got = store_.GetDestination(dst, Scope::All());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->health.circuit, CircuitState::kOpen);
  EXPECT_EQ(got->health.consecutive_failures, 3);
  EXPECT_TRUE(got->health.failing_since);
  EXPECT_TRUE(got->health.next_probe_at);

  const auto events = Events("webhookd.destination.circuit_opened");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["destination_id"], "dst_" + N(dst));
  EXPECT_TRUE(events[0]["tenant_id"].is_null());
  EXPECT_EQ(events[0]["consecutive_failures"], 3);
  EXPECT_EQ(events[0]["last_error"], "connection refused");
  // Fanned out to the destination that asked for webhookd.* only, due now.
  EXPECT_EQ(db_.Scalar("SELECT string_agg(d.destination_id::text, ',') FROM delivery_rows d"
                       " JOIN events e ON e.id = d.event_id WHERE e.type LIKE 'webhookd.%'"),
            N(watcher));
}

TEST_F(ProtectionPgTest, A429NeitherCountsTowardTheCircuitNorResetsIt) {
  const int64_t dst = Destination();
  Ingest(6);
  Answer(ClaimBatch(2).deliveries, 500);
  Answer(ClaimBatch(4).deliveries, 429);
  EXPECT_EQ(Col(dst, "consecutive_failures"), "2");
  EXPECT_EQ(Col(dst, "circuit"), "closed");
}

TEST_F(ProtectionPgTest, ASuccessResetsTheCountAndFailingSince) {
  const int64_t dst = Destination();
  Ingest(4);
  auto batch = ClaimBatch(4).deliveries;
  ASSERT_EQ(batch.size(), 4u);
  // In one batch: fail, fail, succeed, fail. Only the failure after the success counts.
  Write({Ended(batch[0], 500), Ended(batch[1], 500), Ended(batch[2], 200), Ended(batch[3], 502)});
  EXPECT_EQ(Col(dst, "consecutive_failures"), "1");
  EXPECT_EQ(Col(dst, "failing_since IS NOT NULL"), "t");
  auto again = ClaimBatch(1).deliveries;
  ASSERT_EQ(again.size(), 1u);
  Answer(again, 204);
  EXPECT_EQ(Col(dst, "consecutive_failures"), "0");
  EXPECT_EQ(Col(dst, "failing_since IS NULL"), "t");
}

TEST_F(ProtectionPgTest, AnOpenCircuitsDueDeliveriesAreClaimedAsSkipsBeyondTheCap) {
  const int64_t dst = Destination(3);
  Ingest(8);
  OpenCircuit(dst);
  const auto batch = ClaimBatch(100);
  ASSERT_EQ(batch.deliveries.size(), 8u);  // the 5 never tried and the 3 failed, all due
  std::vector<AttemptRecord> skips;
  for (const auto& c : batch.deliveries) {
    EXPECT_EQ(c.kind, ClaimKind::kSkip);
    AttemptRecord r = RecordFor(c, DeliveryStatus::kPending, std::nullopt, Outcome::kSkipped);
    r.error = "circuit open";
    r.wait = 1h;
    skips.push_back(r);
  }
  const std::string row = Col(dst, "xmin::text || ctid::text");
  const RecordedOutcomes recorded = Write(skips);
  EXPECT_EQ(recorded.applied.size(), 8u);
  EXPECT_EQ(Col(dst, "xmin::text || ctid::text"), row) << "skips alone write no row";
  EXPECT_EQ(recorded.circuits_opened, 0);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts WHERE outcome = 'skipped'"
                       " AND error = 'circuit open' AND status_code IS NULL"),
            "8");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'pending'"
                       " AND next_attempt_at > now() + interval '50 minutes'"),
            "8");
  EXPECT_EQ(Col(dst, "consecutive_failures"), "3");  // skips are no attempt at the receiver
  EXPECT_EQ(Col(dst, "circuit"), "open");
  auto attempts = store_.ListAttempts(batch.deliveries[0].delivery_id, AttemptPage{}, Scope::All());
  ASSERT_TRUE(attempts);
  EXPECT_EQ(attempts->items.back().outcome, Outcome::kSkipped);
}

TEST_F(ProtectionPgTest, AtNextProbeAtExactlyOneDeliveryIsProbedAndTheRestWait) {
  const int64_t dst = Destination();
  Ingest(10);
  OpenCircuit(dst);
  ProbeTimeReached(dst);
  auto got = store_.GetDestination(dst, Scope::All());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->health.circuit, CircuitState::kHalfOpen);  // shown so from next_probe_at on

  const auto probe = ClaimBatch(100);
  ASSERT_EQ(probe.deliveries.size(), 1u);
  EXPECT_EQ(probe.deliveries[0].kind, ClaimKind::kProbe);
  EXPECT_EQ(Col(dst, "circuit"), "half_open");
  // While it is out, nothing else of the destination is claimed, skip or send.
  EXPECT_TRUE(ClaimBatch(100).deliveries.empty());
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'pending'"), "9");
}

TEST_F(ProtectionPgTest, ASuccessfulProbeClosesTheCircuitAndRampsTheCapFromOne) {
  const int64_t dst = Destination(8);
  const int64_t watcher = Destination(std::nullopt, {"webhookd.destination.recovered"});
  Ingest(40);
  OpenCircuit(dst);
  const std::string failing_since =
      Col(dst, "to_char(failing_since, 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')");
  ProbeTimeReached(dst);
  const auto probe = ClaimBatch(100).deliveries;
  ASSERT_EQ(probe.size(), 1u);
  const RecordedOutcomes closed = Answer(probe, 200);
  EXPECT_EQ(closed.circuits_closed, 1);
  EXPECT_EQ(Col(dst, "circuit"), "closed");
  EXPECT_EQ(Col(dst, "consecutive_failures"), "0");
  EXPECT_EQ(Col(dst, "next_probe_at IS NULL AND failing_since IS NULL"), "t");
  EXPECT_EQ(Col(dst, "effective_max_in_flight"), "1");

  const auto recovered = Events("webhookd.destination.recovered");
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0]["destination_id"], "dst_" + N(dst));
  EXPECT_EQ(recovered[0]["failing_since"], failing_since);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE destination_id = " + N(watcher)),
            "1");

  // The ramp: each claim takes what the cap allows; all succeed; the cap doubles per success.
  std::vector<size_t> sizes;
  for (int round = 0; round < 5; ++round) {
    auto batch = ClaimBatch(100).deliveries;
    size_t mine = 0;
    for (const auto& c : batch) {
      ASSERT_EQ(c.kind, ClaimKind::kSend);
      mine += c.destination_id == dst;
    }
    sizes.push_back(mine);
    Answer(batch, 200);
  }
  // 1 -> 2; 2 -> 8 (two successes: x4, capped at 8); then the full 8.
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 2, 8, 8, 8}));
  EXPECT_EQ(Col(dst, "effective_max_in_flight IS NULL AND NOT ramping"), "t");
  auto got = store_.GetDestination(dst, Scope::All());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->health.effective_max_in_flight, std::nullopt);
}

// The probe time is the statement's now() plus the cooldown times 0.8 + 0.4 u, where u is
// the worker's draw carried by the record that opens the circuit: exact to the microsecond
// at both ends of [0, 1).
TEST_F(ProtectionPgTest, TheProbeTimeIsTheCooldownJitteredByTheRecordsDraw) {
  for (const double u : {0.0, 0.5, 0.999999}) {
    const int64_t dst = Destination();
    Ingest(3);
    auto batch = ClaimBatch(3);
    ASSERT_EQ(batch.deliveries.size(), 3u);
    std::vector<AttemptRecord> records;
    for (const auto& c : batch.deliveries) {
      AttemptRecord r = Ended(c, 500);
      r.jitter = u;
      records.push_back(r);
    }
    ASSERT_EQ(Write(records).circuits_opened, 1);
    EXPECT_EQ(ProbeWaitUs(batch.deliveries[0].delivery_id),
              std::llround(10'000'000 * (0.8 + 0.4 * u)))
        << u;
    db_.Exec("UPDATE destinations SET enabled = false WHERE id = " +
             N(dst));  // out of the next round
  }
}

TEST_F(ProtectionPgTest, AFailedProbeReopensWithTheCooldownDoubledUpToAnHour) {
  const int64_t dst = Destination();
  Ingest(20);
  OpenCircuit(dst);
  for (int64_t cooldown_s : {20, 40, 80, 160}) {
    ProbeTimeReached(dst);
    const auto probe = ClaimBatch(100).deliveries;
    ASSERT_EQ(probe.size(), 1u);
    ASSERT_EQ(probe[0].kind, ClaimKind::kProbe);
    EXPECT_EQ(Answer(probe, 500).circuits_opened, 1);
    EXPECT_EQ(Col(dst, "circuit"), "open");
    EXPECT_EQ(Col(dst, "cooldown_us"), N(cooldown_s * 1'000'000));
    // The record's draw is 0: the doubled cooldown times 0.8.
    EXPECT_EQ(ProbeWaitUs(probe[0].delivery_id), cooldown_s * 800'000) << cooldown_s;
  }
  // Near the hour, the doubling stops at it.
  db_.Exec("UPDATE destinations SET cooldown_us = 3000000000 WHERE id = " + N(dst));
  ProbeTimeReached(dst);
  Answer(ClaimBatch(100).deliveries, 503);
  EXPECT_EQ(Col(dst, "cooldown_us"), "3600000000");
  // Reopening is not a new opening: one circuit_opened event in all.
  EXPECT_EQ(Events("webhookd.destination.circuit_opened").size(), 1u);
}

TEST_F(ProtectionPgTest, ALostProbeIsProbedAgain) {
  const int64_t dst = Destination();
  Ingest(5);
  OpenCircuit(dst);
  ProbeTimeReached(dst);
  auto lost = store_.ClaimDue(100, 1ms, 16);
  ASSERT_TRUE(lost);
  ASSERT_EQ(lost->deliveries.size(), 1u);
  std::this_thread::sleep_for(20ms);
  ASSERT_EQ(store_.RequeueExpiredLeases().value_or(0), 1);
  const auto again = ClaimBatch(100).deliveries;
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].kind, ClaimKind::kProbe);
  // The stale worker's record of the first probe changes nothing.
  const RecordedOutcomes stale = Answer(lost->deliveries, 200);
  EXPECT_TRUE(stale.applied.empty());
  EXPECT_EQ(Col(dst, "circuit"), "half_open");
}

TEST_F(ProtectionPgTest, TwoConcurrentClaimersNeverProbeTwice) {
  const int64_t dst = Destination();
  Ingest(30);
  OpenCircuit(dst);
  for (int round = 0; round < 10; ++round) {
    ProbeTimeReached(dst);
    std::latch start(2);
    ClaimedBatch got[2];
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        auto r = store_.ClaimDue(100, 1h, 16);
        ASSERT_TRUE(r) << r.error().message;
        got[t] = *r;
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_EQ(got[0].deliveries.size() + got[1].deliveries.size(), 1u) << "round " << round;
    const ClaimedDelivery& probe =
        got[0].deliveries.empty() ? got[1].deliveries[0] : got[0].deliveries[0];
    EXPECT_EQ(probe.kind, ClaimKind::kProbe);
    ASSERT_EQ(Answer({probe}, 500).circuits_opened, 1);  // reopen for the next round
  }
}

TEST_F(ProtectionPgTest, ThrottlesHalveTheCapAndRunsOfSuccessesRaiseIt) {
  const int64_t dst = Destination(8);
  Ingest(60);
  auto batch = ClaimBatch(100).deliveries;
  ASSERT_EQ(batch.size(), 8u);
  // One 429 and one 503 among them: halved twice.
  std::vector<AttemptRecord> records;
  for (size_t i = 0; i < batch.size(); ++i) {
    records.push_back(Ended(batch[i], i == 0 ? 429 : i == 1 ? 503 : 200));
  }
  Write(records);
  EXPECT_EQ(Col(dst, "effective_max_in_flight"), "2");
  EXPECT_EQ(Col(dst, "circuit"), "closed");
  EXPECT_EQ(store_.GetDestination(dst, Scope::All())->health.effective_max_in_flight, 2);

  // The claim honours it.
  auto two = ClaimBatch(100).deliveries;
  EXPECT_EQ(two.size(), 2u);
  Answer(two, 200);  // a run of 2 -> 3
  EXPECT_EQ(Col(dst, "effective_max_in_flight"), "3");
  auto three = ClaimBatch(100).deliveries;
  EXPECT_EQ(three.size(), 3u);
  Answer({three[0]}, 200);
  Answer({three[1]}, 200);
  EXPECT_EQ(Col(dst, "effective_max_in_flight"), "3");
  EXPECT_EQ(Col(dst, "success_run"), "2");
  Answer({three[2]}, 200);
  EXPECT_EQ(Col(dst, "effective_max_in_flight"), "4");
  // Down to 1, never 0.
  for (int i = 0; i < 4; ++i) Answer(ClaimBatch(1).deliveries, 429);
  EXPECT_EQ(Col(dst, "effective_max_in_flight"), "1");
}

TEST_F(ProtectionPgTest, AHealthyDestinationsRowIsNotWrittenByItsSuccesses) {
  const int64_t dst = Destination();
  Ingest(10);
  const std::string before = Col(dst, "xmin::text || ctid::text");
  Answer(ClaimBatch(100).deliveries, 200);
  EXPECT_EQ(Col(dst, "xmin::text || ctid::text"), before);
}

// The claim says which deliveries' destinations had nothing to recover from; a batch of
// their successes takes the plain statement: applied, attempts written, the row alone.
TEST_F(ProtectionPgTest, CleanSuccessesTakeThePlainStatement) {
  const int64_t dst = Destination();
  Ingest(4);
  auto first = ClaimBatch(2).deliveries;
  ASSERT_EQ(first.size(), 2u);
  std::vector<AttemptRecord> records;
  for (const auto& c : first) {
    EXPECT_TRUE(c.clean);
    AttemptRecord r = Ended(c, 200);
    r.clean = c.clean;
    records.push_back(r);
  }
  const std::string before = Col(dst, "xmin::text || ctid::text");
  EXPECT_EQ(Write(records).applied.size(), 2u);
  EXPECT_EQ(Col(dst, "xmin::text || ctid::text"), before);
  EXPECT_EQ(
      db_.Scalar("SELECT string_agg(d.status || ':' || a.outcome || ':' || a.status_code, ',')"
                 " FROM delivery_rows d JOIN attempts a ON a.delivery_id = d.id"),
      "succeeded:success:200,succeeded:success:200");
  // A stale token changes nothing on this path either.
  EXPECT_TRUE(Write(records).applied.empty());

  // One failure makes the destination unclean: its next claims say so.
  auto second = ClaimBatch(1).deliveries;
  ASSERT_EQ(second.size(), 1u);
  Answer(second, 500);
  auto third = ClaimBatch(1).deliveries;
  ASSERT_EQ(third.size(), 1u);
  EXPECT_FALSE(third[0].clean);
}

TEST_F(ProtectionPgTest, TheRateLimitHoldsAcrossClaimsAndSaysWhenItHeldBack) {
  const int64_t dst = Destination(100, {"order.*"}, 5);
  Ingest(30);
  const auto first = ClaimBatch(100);
  EXPECT_EQ(first.deliveries.size(), 5u);  // a full bucket
  EXPECT_EQ(first.rate_limited, 1);
  const auto second = ClaimBatch(100);
  EXPECT_EQ(second.deliveries.size(), 0u);
  EXPECT_EQ(second.rate_limited, 1);

  // An hour later the bucket is full again, and no fuller.
  db_.Exec("UPDATE destinations SET tokens_at = tokens_at - interval '1 hour' WHERE id = " +
           N(dst));
  EXPECT_EQ(ClaimBatch(100).deliveries.size(), 5u);
  // 400 ms later, two tokens.
  db_.Exec("UPDATE destinations SET tokens_at = tokens_at - interval '400 ms' WHERE id = " +
           N(dst));
  EXPECT_EQ(ClaimBatch(100).deliveries.size(), 2u);

  // Clearing the limit lets the cap decide again.
  DestinationFields clear;
  clear.rate_limit = std::optional<int>();
  auto updated = store_.UpdateDestination(dst, clear, Scope::All());
  ASSERT_TRUE(updated);
  EXPECT_FALSE(updated->rate_limit);
  const auto rest = ClaimBatch(100);
  EXPECT_EQ(rest.deliveries.size(), 18u);
  EXPECT_EQ(rest.rate_limited, 0);
}

TEST_F(ProtectionPgTest, InAnyWindowOfTSecondsAtMostRTimesTPlusOneStart) {
  const int64_t dst = Destination(100, {"order.*"}, 4);
  Ingest(60);
  std::vector<std::string> starts;  // claim times as the database saw them
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto batch = ClaimBatch(100);
    const std::string at = Col(dst, "to_char(tokens_at, 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')");
    for (size_t i = 0; i < batch.deliveries.size(); ++i) starts.push_back(at);
    std::this_thread::sleep_for(30ms);
  }
  ASSERT_GT(starts.size(), 8u);
  for (size_t i = 0; i < starts.size(); ++i) {
    for (size_t j = i; j < starts.size(); ++j) {
      const double t = Seconds(*ParseRfc3339(starts[j]) - *ParseRfc3339(starts[i]));
      ASSERT_LE(static_cast<double>(j - i + 1), 4 * (t + 1) + 1e-6) << i << ".." << j;
    }
  }
}

TEST_F(ProtectionPgTest, FailingLongerThanDisableAfterDisablesWithAnEvent) {
  const int64_t dst = Destination();
  const int64_t watcher = Destination(std::nullopt, {"webhookd.destination.disabled"});
  Ingest(4);
  Answer(ClaimBatch(1).deliveries, 500, Settings(1h));
  EXPECT_EQ(Col(dst, "enabled"), "t");
  db_.Exec("UPDATE destinations SET failing_since = now() - interval '61 minutes' WHERE id = " +
           N(dst));
  // WEBHOOKD_DISABLE_AFTER=0 never disables.
  Answer(ClaimBatch(1).deliveries, 500, Settings(Duration::zero()));
  EXPECT_EQ(Col(dst, "enabled"), "t");
  Answer(ClaimBatch(1).deliveries, 500, Settings(1h));
  EXPECT_EQ(Col(dst, "enabled"), "f");
  EXPECT_EQ(Col(dst, "disabled_reason"), "failing");
  auto got = store_.GetDestination(dst, Scope::All());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->disabled_reason, DisabledReason::kFailing);
  const auto events = Events("webhookd.destination.disabled");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["reason"], "failing");
  EXPECT_EQ(events[0]["destination_id"], "dst_" + N(dst));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE destination_id = " + N(watcher)),
            "1");
  // Its deliveries wait.
  for (const auto& c : ClaimBatch(100).deliveries) EXPECT_NE(c.destination_id, dst);
}

// An open circuit sends nothing, so its skips are what find it failing for too long.
TEST_F(ProtectionPgTest, SkipsOfAnOpenCircuitDisableItWhenItFailsTooLong) {
  const int64_t dst = Destination(3);
  Ingest(5);
  OpenCircuit(dst);
  db_.Exec("UPDATE destinations SET failing_since = now() - interval '61 minutes' WHERE id = " +
           N(dst));
  const auto skips = ClaimBatch(100).deliveries;
  ASSERT_FALSE(skips.empty());
  std::vector<AttemptRecord> records;
  for (const auto& c : skips) {
    ASSERT_EQ(c.kind, ClaimKind::kSkip);
    AttemptRecord r = RecordFor(c, DeliveryStatus::kPending, std::nullopt, Outcome::kSkipped);
    r.wait = 1h;
    records.push_back(r);
  }
  Write(records, Settings(1h));
  EXPECT_EQ(Col(dst, "enabled"), "f");
  EXPECT_EQ(Col(dst, "disabled_reason"), "failing");
  EXPECT_EQ(Events("webhookd.destination.disabled").size(), 1u);
}

TEST_F(ProtectionPgTest, A410DisablesAsGoneWithAnEvent) {
  const int64_t dst = Destination();
  Destination(std::nullopt, {"webhookd.*"});
  Ingest(2);
  Answer(ClaimBatch(1).deliveries, 410);
  EXPECT_EQ(Col(dst, "enabled"), "f");
  EXPECT_EQ(Col(dst, "disabled_reason"), "gone");
  const auto disabled = Events("webhookd.destination.disabled");
  ASSERT_EQ(disabled.size(), 1u);
  EXPECT_EQ(disabled[0]["reason"], "gone");
  const auto dead = Events("webhookd.delivery.dead_lettered");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]["reason"], "permanent_failure");
  EXPECT_EQ(dead[0]["destination_id"], "dst_" + N(dst));
  EXPECT_EQ(dead[0]["dead_letter_id"], "dlq_" + db_.Scalar("SELECT max(id) FROM dead_letters"));
  EXPECT_EQ(dead[0]["delivery_id"],
            "dlv_" + db_.Scalar("SELECT max(delivery_id) FROM dead_letters"));
  EXPECT_EQ(dead[0]["event_id"], "evt_" + db_.Scalar("SELECT max(event_id) FROM dead_letters"));
  EXPECT_TRUE(dead[0]["tenant_id"].is_null());
}

TEST_F(ProtectionPgTest, EnablingClearsTheReasonAndResetsTheHealth) {
  const int64_t dst = Destination(4);
  Ingest(10);
  OpenCircuit(dst);
  db_.Exec("UPDATE destinations SET effective_max_in_flight = 1 WHERE id = " + N(dst));
  DestinationFields off, on;
  off.enabled = false;
  on.enabled = true;
  auto disabled = store_.UpdateDestination(dst, off, Scope::All());
  ASSERT_TRUE(disabled);
  EXPECT_EQ(disabled->disabled_reason, DisabledReason::kManual);
  EXPECT_EQ(disabled->health.circuit, CircuitState::kOpen);  // disabling keeps the health
  auto enabled = store_.UpdateDestination(dst, on, Scope::All());
  ASSERT_TRUE(enabled);
  EXPECT_TRUE(enabled->enabled);
  EXPECT_EQ(enabled->disabled_reason, std::nullopt);
  EXPECT_EQ(enabled->health.circuit, CircuitState::kClosed);
  EXPECT_EQ(enabled->health.consecutive_failures, 0);
  EXPECT_EQ(enabled->health.failing_since, std::nullopt);
  EXPECT_EQ(enabled->health.next_probe_at, std::nullopt);
  EXPECT_EQ(enabled->health.effective_max_in_flight, std::nullopt);
  EXPECT_EQ(ClaimBatch(100).deliveries.size(), 4u);

  // Created disabled: disabled by hand.
  webhookd::Destination d = testing::TestDestination();
  d.enabled = false;
  auto created = store_.CreateDestination(d, 1000000);
  ASSERT_TRUE(created);
  EXPECT_EQ(created->disabled_reason, DisabledReason::kManual);
}

TEST_F(ProtectionPgTest, NoEventAndNoChangeWhenTheOutcomeStatementFails) {
  const int64_t dst = Destination();
  Destination(std::nullopt, {"webhookd.*"});
  Ingest(4);
  auto one = ClaimBatch(1).deliveries;
  ASSERT_EQ(one.size(), 1u);
  Answer(one, 500);  // attempt 1 of that delivery is written; it is due again
  auto batch = ClaimBatch(100).deliveries;
  ASSERT_EQ(batch.size(), 4u);
  std::vector<AttemptRecord> records;
  for (const auto& c : batch) {
    AttemptRecord r = Ended(c, 500);
    if (c.delivery_id == one[0].delivery_id) {
      r.attempt_number = 1;  // already written: the statement fails as a whole
    } else if (records.empty() || records.back().delivery_id == one[0].delivery_id) {
      r.next_status = DeliveryStatus::kDeadLettered;
      r.dead_letter_reason = DeadLetterReason::kExhausted;
    }
    records.push_back(r);
  }
  // It would open the circuit and dead-letter a delivery, and does neither.
  auto failed = store_.RecordOutcomes(records, Settings());
  EXPECT_FALSE(failed);
  EXPECT_EQ(Col(dst, "circuit"), "closed");
  EXPECT_EQ(Col(dst, "consecutive_failures"), "1");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE type LIKE 'webhookd.%'"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters"), "0");

  // Written without the bad record, it all happens, events included.
  std::erase_if(records,
                [&](const AttemptRecord& r) { return r.delivery_id == one[0].delivery_id; });
  ASSERT_EQ(records.size(), 3u);
  const RecordedOutcomes ok = Write(records);
  EXPECT_EQ(ok.circuits_opened, 1);
  EXPECT_EQ(Events("webhookd.destination.circuit_opened").size(), 1u);
  EXPECT_EQ(Events("webhookd.delivery.dead_lettered").size(), 1u);
}

TEST_F(ProtectionPgTest, OperationalEventsReachOnlyDestinationsThatNameThem) {
  const int64_t every = Destination(std::nullopt, {});
  const int64_t all_ops = Destination(std::nullopt, {"webhookd.*"});
  const int64_t narrow = Destination(std::nullopt, {"webhookd.delivery.*"});
  const int64_t exact = Destination(std::nullopt, {"webhookd.destination.disabled"});
  const int64_t web = Destination(std::nullopt, {"web.*", "webhook.*"});
  const int64_t gone = Destination(std::nullopt, {"order.*"});
  webhookd::Destination t = testing::TestDestination({"webhookd.*"}, std::nullopt);
  t.tenant_id = "acme";
  const int64_t tenants = CreateDestination(t);
  Ingest(1);  // to `every` and `gone`
  auto batch = ClaimBatch(100).deliveries;
  ASSERT_EQ(batch.size(), 2u);
  for (const auto& c : batch) Answer({c}, c.destination_id == gone ? 410 : 200);

  const auto receivers = [&](const std::string& type) {
    return db_.Scalar(
        "SELECT coalesce(string_agg(d.destination_id::text, ',' ORDER BY d.destination_id), '')"
        " FROM delivery_rows d JOIN events e ON e.id = d.event_id WHERE e.type = '" +
        type + "'");
  };
  EXPECT_EQ(receivers("webhookd.destination.disabled"), N(all_ops) + "," + N(exact));
  EXPECT_EQ(receivers("webhookd.delivery.dead_lettered"), N(all_ops) + "," + N(narrow));
  // "Every type", patterns outside "webhookd." and a tenant's destination get none.
  for (int64_t none : {every, web, tenants}) {
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows d JOIN events e ON e.id = d.event_id"
                         " WHERE e.type LIKE 'webhookd.%' AND d.destination_id = " +
                         N(none)),
              "0");
  }
  // The payload names the destination's tenant; the event itself has none.
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE type LIKE 'webhookd.%'"
                       " AND tenant_id IS NULL"),
            "2");
}

TEST_F(ProtectionPgTest, NoEventIsPublishedAboutTheDeliveryOfAnOperationalEvent) {
  const int64_t dst = Destination();
  const int64_t ops = Destination(std::nullopt, {"webhookd.*"});
  Ingest(1);
  Answer(ClaimBatch(100).deliveries, 404);  // dead-lettered: one operational event
  ASSERT_EQ(Events("webhookd.delivery.dead_lettered").size(), 1u);
  // Its delivery to `ops` is dead-lettered in turn: nothing more is published.
  const auto op = ClaimBatch(100).deliveries;
  ASSERT_EQ(op.size(), 1u);
  EXPECT_EQ(op[0].destination_id, ops);
  EXPECT_EQ(op[0].event_type, "webhookd.delivery.dead_lettered");
  Answer(op, 404);
  EXPECT_EQ(Events("webhookd.delivery.dead_lettered").size(), 1u);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters"), "2");
  (void)dst;
}

TEST_F(ProtectionPgTest, TheGaugeCountsOpenAndHalfOpenCircuitsOfEnabledDestinations) {
  const int64_t dst = Destination();
  Destination();
  Ingest(3);
  auto gauges = store_.CountDeliveries();
  ASSERT_TRUE(gauges);
  EXPECT_EQ(gauges->circuits_open, 0);
  auto batch = ClaimBatch(100).deliveries;
  std::vector<ClaimedDelivery> mine;
  for (const auto& c : batch)
    if (c.destination_id == dst) mine.push_back(c);
  ASSERT_EQ(mine.size(), 3u);
  Answer(mine, 500);
  gauges = store_.CountDeliveries();
  ASSERT_TRUE(gauges);
  EXPECT_EQ(gauges->circuits_open, 1);
}

}  // namespace
}  // namespace webhookd::protection_pgtest
