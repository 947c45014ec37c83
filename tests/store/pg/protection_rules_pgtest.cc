// The rules of receiver protection, stated as tables of scenarios and run against the SQL
// that executes them: the outcome statement (store/pg/sql/record_outcomes.sql: the circuit
// breaker, the adaptive cap, disabling) and the claim (webhookd.claim_due,
// store/pg/schema/claim_due.sql: what a circuit lets through, the cap in
// force, the token bucket). These statements are the only implementation of the rules;
// each row below is one rule with literal expectations, so a change to the SQL that
// changes a rule fails here by name. (protection_pgtest.cc covers the paths around them:
// operational events, concurrency, the plain statement, gauges.)
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "store/pg/pg_store.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::protection_rules_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

// A column expression of the destination's row and the text PostgreSQL prints for it.
using Expectations = std::vector<std::pair<std::string, std::string>>;

// The row of a destination that has failed 3 times and is waiting for its probe.
constexpr const char* kOpen =
    "circuit = 'open', consecutive_failures = 3, failing_since = now() - interval '1 minute',"
    " cooldown_us = 10000000, next_probe_at = now() + interval '10 seconds'";
// The same, its probe due (a claim will send it).
constexpr const char* kProbeDue =
    "circuit = 'open', consecutive_failures = 3, failing_since = now() - interval '1 minute',"
    " cooldown_us = 10000000, next_probe_at = now() - interval '1 millisecond'";
// The same with the probe out.
constexpr const char* kHalfOpen =
    "circuit = 'half_open', consecutive_failures = 3, failing_since = now() - interval '1 "
    "minute', cooldown_us = 10000000, next_probe_at = now() - interval '1 millisecond'";

// One scenario of the outcome statement. The destination's deliveries are claimed as
// plain sends, then its row is set to `before` and `max_in_flight`, then each entry of
// `writes` is one outcome statement of the answers it lists, in order:
//   "200", "500", "429", ...  the receiver's status
//   "conn"                    no answer (connection refused): retryable
//   "skip"                    a skipped attempt (the circuit was open at the claim)
//   "probe:<answer>"          the half-open circuit's probe, answered so
// Then every expectation is checked; "probe_in_us" is next_probe_at minus the statement's
// now(), in microseconds.
struct OutcomeCase {
  std::string rule;
  std::string before;
  int max_in_flight = 4;
  std::vector<std::vector<std::string>> writes;
  Expectations expect;
  double draw = 0.5;  // the record's uniform draw: 0.5 makes the probe wait the cooldown
  Duration cooldown = 10s;
  Duration disable_after = Duration::zero();
};

// Threshold 3 throughout.
const std::vector<OutcomeCase>& OutcomeCases() {
  static const std::vector<OutcomeCase> cases = {
      // The circuit breaker.
      {"failures below the threshold are counted and start failing_since",
       "",
       4,
       {{"500", "conn"}},
       {{"circuit", "closed"}, {"consecutive_failures", "2"}, {"failing_since IS NULL", "f"}}},
      {"the threshold of consecutive failures opens it: 500, no answer and 408 all count",
       "",
       4,
       {{"500"}, {"conn"}, {"408"}},
       {{"circuit", "open"},
        {"consecutive_failures", "3"},
        {"cooldown_us", "10000000"},
        {"probe_in_us", "10000000"}}},
      {"a 429 neither counts toward the circuit nor resets it",
       "consecutive_failures = 2, failing_since = now() - interval '1 minute'",
       4,
       {{"429"}},
       {{"circuit", "closed"}, {"consecutive_failures", "2"}, {"failing_since IS NULL", "f"}}},
      {"a 503 counts (and throttles)",
       "consecutive_failures = 2, failing_since = now() - interval '1 minute'",
       4,
       {{"503"}},
       {{"circuit", "open"}, {"consecutive_failures", "3"}}},
      {"a permanent failure neither counts nor resets, but starts failing_since",
       "consecutive_failures = 2",
       4,
       {{"404"}},
       {{"circuit", "closed"}, {"consecutive_failures", "2"}, {"failing_since IS NULL", "f"}}},
      {"a success resets the count and failing_since",
       "consecutive_failures = 2, failing_since = now() - interval '1 minute'",
       4,
       {{"200"}},
       {{"consecutive_failures", "0"}, {"failing_since IS NULL", "t"}}},
      {"in one statement only the failures after the last success count",
       "",
       4,
       {{"500", "500", "200", "502"}},
       {{"circuit", "closed"}, {"consecutive_failures", "1"}, {"failing_since IS NULL", "f"}}},
      {"skips change nothing",
       kOpen,
       4,
       {{"skip", "skip"}},
       {{"circuit", "open"},
        {"consecutive_failures", "3"},
        {"cooldown_us", "10000000"},
        {"next_probe_at > now() + interval '9 seconds'", "t"}}},
      {"a successful probe closes the circuit and clears its state",
       kHalfOpen,
       4,
       {{"probe:200"}},
       {{"circuit", "closed"},
        {"consecutive_failures", "0"},
        {"failing_since IS NULL", "t"},
        {"next_probe_at IS NULL", "t"},
        {"cooldown_us IS NULL", "t"}}},
      {"a failed probe reopens with the cooldown doubled",
       kHalfOpen,
       4,
       {{"probe:500"}},
       {{"circuit", "open"},
        {"cooldown_us", "20000000"},
        {"probe_in_us", "20000000"},
        {"consecutive_failures", "4"}}},
      {"the doubling stops at an hour",
       "circuit = 'half_open', consecutive_failures = 3, cooldown_us = 3000000000",
       4,
       {{"probe:503"}},
       {{"circuit", "open"}, {"cooldown_us", "3600000000"}}},
      {"a probe answered 429 reopens",
       kHalfOpen,
       4,
       {{"probe:429"}},
       {{"circuit", "open"}, {"cooldown_us", "20000000"}}},
      {"a probe answered 404 reopens",
       kHalfOpen,
       4,
       {{"probe:404"}},
       {{"circuit", "open"}, {"cooldown_us", "20000000"}}},
      {"a probe not answered reopens",
       kHalfOpen,
       4,
       {{"probe:conn"}},
       {{"circuit", "open"}, {"cooldown_us", "20000000"}}},
      {"a success of another attempt does not close a half-open circuit",
       kHalfOpen,
       4,
       {{"200"}},
       {{"circuit", "half_open"}, {"consecutive_failures", "0"}}},
      {"a failure of another attempt does not reopen a half-open circuit",
       kHalfOpen,
       4,
       {{"500"}},
       {{"circuit", "half_open"}, {"consecutive_failures", "4"}}},
      {"the first cooldown is at most an hour",
       "",
       4,
       {{"500", "500", "500"}},
       {{"circuit", "open"}, {"cooldown_us", "3600000000"}, {"probe_in_us", "3600000000"}},
       0.5,
       2h},
      {"the lowest draw probes after 0.8 x the cooldown",
       "",
       4,
       {{"500", "500", "500"}},
       {{"probe_in_us", "8000000"}},
       0.0},
      {"the highest draw probes after 1.2 x the cooldown",
       "",
       4,
       {{"500", "500", "500"}},
       {{"probe_in_us", "11999996"}},
       0.999999},

      // The adaptive cap (effective_max_in_flight; NULL: max_in_flight).
      {"each 429 or 503 halves the cap",
       "",
       8,
       {{"429"}, {"503"}},
       {{"effective_max_in_flight", "2"}, {"success_run", "0"}}},
      {"the cap never falls below one",
       "",
       8,
       {{"429", "429", "429", "429", "429"}},
       {{"effective_max_in_flight", "1"}}},
      {"a run of `effective` successes raises it by one",
       "effective_max_in_flight = 2",
       4,
       {{"200"}, {"200"}},
       {{"effective_max_in_flight", "3"}, {"success_run", "0"}}},
      {"successes short of a run are remembered",
       "effective_max_in_flight = 3",
       4,
       {{"200"}, {"200"}},
       {{"effective_max_in_flight", "3"}, {"success_run", "2"}}},
      {"it recovers to the max and no further",
       "effective_max_in_flight = 3, success_run = 2",
       4,
       {{"200"}, {"200"}, {"200"}},
       {{"effective_max_in_flight IS NULL", "t"}, {"success_run", "0"}}},
      {"after a recovery the cap restarts at one and ramps",
       kHalfOpen,
       8,
       {{"probe:200"}},
       {{"effective_max_in_flight", "1"}, {"ramping", "t"}}},
      {"while ramping each success doubles it",
       kHalfOpen,
       8,
       {{"probe:200"}, {"200"}, {"200"}},
       {{"effective_max_in_flight", "4"}, {"ramping", "t"}}},
      {"the ramp ends at the max",
       kHalfOpen,
       8,
       {{"probe:200"}, {"200"}, {"200"}, {"200"}},
       {{"effective_max_in_flight IS NULL", "t"}, {"ramping", "f"}}},
      {"a max of one never ramps",
       kHalfOpen,
       1,
       {{"probe:200"}},
       {{"effective_max_in_flight IS NULL", "t"}, {"ramping", "f"}}},
      {"a throttle ends the ramp",
       "effective_max_in_flight = 4, ramping = true",
       8,
       {{"429"}, {"200"}, {"200"}},
       {{"effective_max_in_flight", "3"}, {"ramping", "f"}}},
      {"a cap stored above a lowered max counts as the max",
       "effective_max_in_flight = 10",
       4,
       {{"429"}},
       {{"effective_max_in_flight", "2"}}},

      // Disabling.
      {"failing longer than WEBHOOKD_DISABLE_AFTER disables it",
       "consecutive_failures = 1, failing_since = now() - interval '2 hours'",
       4,
       {{"500"}},
       {{"enabled", "f"}, {"disabled_reason", "failing"}},
       0.5,
       10s,
       1h},
      {"failing for less keeps it",
       "consecutive_failures = 1, failing_since = now() - interval '59 minutes'",
       4,
       {{"500"}},
       {{"enabled", "t"}, {"disabled_reason IS NULL", "t"}},
       0.5,
       10s,
       1h},
      {"a success ends the failing",
       "consecutive_failures = 1, failing_since = now() - interval '2 hours'",
       4,
       {{"200"}},
       {{"enabled", "t"}, {"failing_since IS NULL", "t"}},
       0.5,
       10s,
       1h},
      {"WEBHOOKD_DISABLE_AFTER zero never disables",
       "consecutive_failures = 1, failing_since = now() - interval '10000 hours'",
       4,
       {{"500"}},
       {{"enabled", "t"}}},
      {"a 410 disables it as gone",
       "",
       4,
       {{"410"}},
       {{"enabled", "f"}, {"disabled_reason", "gone"}}},
      {"skips of an open circuit failing too long disable it",
       "circuit = 'open', consecutive_failures = 3, failing_since = now() - interval '2 hours',"
       " cooldown_us = 10000000, next_probe_at = now() + interval '10 seconds'",
       4,
       {{"skip"}},
       {{"enabled", "f"}, {"disabled_reason", "failing"}},
       0.5,
       10s,
       1h},
  };
  return cases;
}

// One scenario of the claim: `in_flight` deliveries are claimed first (and stay out), then
// the row is set to `before` and `max_in_flight`, then one claim of up to 100 runs over
// `due` more due deliveries.
struct ClaimCase {
  std::string rule;
  std::string before;
  int max_in_flight = 4;
  int in_flight = 0;
  int due = 10;
  int sends = 0, probes = 0, skips = 0;
  bool held = false;  // the rate limit held due deliveries back
  Expectations expect = {};
};

const std::vector<ClaimCase>& ClaimCases() {
  static const std::vector<ClaimCase> cases = {
      {"a closed circuit sends up to the cap", "", 4, 0, 10, 4},
      {"attempts in flight count against the cap", "", 4, 3, 10, 1},
      {"the adaptive cap is in force", "effective_max_in_flight = 2", 4, 0, 10, 2},
      {"a cap stored above a lowered max counts as the max", "effective_max_in_flight = 10", 4, 0,
       10, 4},
      {"an open circuit's due deliveries are all skipped, beyond the cap",
       kOpen,
       4,
       0,
       10,
       0,
       0,
       10,
       false,
       {{"circuit", "open"}}},
      {"at next_probe_at one probe goes out and the circuit is half-open",
       kProbeDue,
       4,
       0,
       10,
       0,
       1,
       0,
       false,
       {{"circuit", "half_open"}}},
      {"the probe waits for attempts still in flight",
       kProbeDue,
       4,
       1,
       10,
       0,
       0,
       0,
       false,
       {{"circuit", "open"}}},
      {"a half-open circuit with nothing in flight lost its probe: another goes", kHalfOpen, 4, 0,
       10, 0, 1, 0},
      {"a half-open circuit with its probe out sends nothing", kHalfOpen, 4, 1, 10, 0, 0, 0},
      {"a full bucket starts `rate_limit` attempts and holds the rest",
       "rate_limit = 5",
       16,
       0,
       10,
       5,
       0,
       0,
       true,
       {{"tokens", "0"}}},
      {"fractions of a token carry over",
       "rate_limit = 5, tokens = 2.5, tokens_at = now()",
       16,
       0,
       10,
       2,
       0,
       0,
       true,
       {{"tokens BETWEEN 0.5 AND 0.75", "t"}}},
      {"the bucket refills at the rate",
       "rate_limit = 5, tokens = 0, tokens_at = now() - "
       "interval '600 milliseconds'",
       16, 0, 10, 3, 0, 0, true},
      {"the bucket holds at most `rate_limit`",
       "rate_limit = 5, tokens = 0, tokens_at = now() - interval '1 hour'", 16, 0, 10, 5, 0, 0,
       true},
      {"nothing held when the bucket covers every due delivery",
       "rate_limit = 50",
       16,
       0,
       10,
       10,
       0,
       0,
       false,
       {{"tokens", "40"}}},
      {"skips spend no tokens",
       std::string(kOpen) + ", rate_limit = 5, tokens = 1, tokens_at = now()",
       16,
       0,
       10,
       0,
       0,
       10,
       false,
       {{"tokens", "1"}}},
  };
  return cases;
}

class ProtectionRulesPgTest : public testing::PgTest {
 protected:
  // A destination whose claims are not limited until its row is set.
  int64_t Destination() { return CreateDestination(testing::TestDestination({"order.*"}, 1000)); }

  void Ingest(int n) {
    for (int i = 0; i < n; ++i) {
      auto r = store_.InsertEvent(NewEvent{"order.created", R"({"i":)" + N(i) + "}", std::nullopt},
                                  std::nullopt);
      ASSERT_TRUE(r) << r.error().message;
    }
  }

  void Set(int64_t dst, int max_in_flight, const std::string& before) {
    db_.Exec("UPDATE destinations SET max_in_flight = " + N(max_in_flight) +
             (before.empty() ? "" : ", " + before) + " WHERE id = " + N(dst));
  }

  std::string Col(int64_t dst, const std::string& expr) {
    return db_.Scalar("SELECT " + expr + " FROM destinations WHERE id = " + N(dst));
  }

  static AttemptRecord Answered(const ClaimedDelivery& c, std::string answer, double draw) {
    const bool probe = answer.starts_with("probe:");
    if (probe) answer = answer.substr(6);
    AttemptRecord r;
    if (answer == "skip") {
      r = RecordFor(c, DeliveryStatus::kPending, std::nullopt, Outcome::kSkipped);
      r.error = "circuit open";
    } else if (answer == "conn") {
      r = RecordFor(c, DeliveryStatus::kPending, std::nullopt, Outcome::kRetryable);
      r.error = "connection refused";
    } else {
      const int status = std::stoi(answer);
      const Outcome outcome = ClassifyStatus(status);
      const DeliveryStatus next = outcome == Outcome::kSuccess     ? DeliveryStatus::kSucceeded
                                  : outcome == Outcome::kRetryable ? DeliveryStatus::kPending
                                                                   : DeliveryStatus::kDeadLettered;
      r = RecordFor(c, next, status, outcome);
      if (next == DeliveryStatus::kDeadLettered) {
        r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
        r.disable_destination = status == 410;
      }
    }
    r.probe = probe;
    r.jitter = draw;
    return r;
  }
};

TEST_F(ProtectionRulesPgTest, TheOutcomeStatementFollowsEveryRule) {
  for (const OutcomeCase& c : OutcomeCases()) {
    SCOPED_TRACE(c.rule);
    const int64_t dst = Destination();
    size_t total = 0;
    for (const auto& w : c.writes) total += w.size();
    Ingest(static_cast<int>(total));
    const std::vector<ClaimedDelivery> claimed = Claim(static_cast<int>(total));
    ASSERT_EQ(claimed.size(), total);
    Set(dst, c.max_in_flight, c.before);

    ProtectionSettings settings;
    settings.circuit = {3, c.cooldown};
    settings.disable_after = c.disable_after;
    size_t next = 0;
    int64_t last = 0;
    for (const auto& write : c.writes) {
      std::vector<AttemptRecord> records;
      for (const std::string& answer : write) {
        last = claimed[next].delivery_id;
        records.push_back(Answered(claimed[next++], answer, c.draw));
      }
      auto r = store_.RecordOutcomes(records, settings);
      ASSERT_TRUE(r) << r.error().message;
      ASSERT_EQ(r->applied.size(), records.size());
    }
    for (const auto& [expr, want] : c.expect) {
      if (expr == "probe_in_us") {
        // The last delivery's updated_at is the opening statement's now().
        EXPECT_EQ(db_.Scalar("SELECT (extract(epoch FROM t.next_probe_at - d.updated_at)"
                             " * 1000000)::bigint FROM destinations t, deliveries d"
                             " WHERE t.id = " +
                             N(dst) + " AND d.id = " + N(last)),
                  want);
      } else {
        EXPECT_EQ(Col(dst, expr), want) << expr;
      }
    }
    // Out of the next scenario's claims.
    db_.Exec("UPDATE destinations SET deleted_at = now() WHERE id = " + N(dst));
  }
}

TEST_F(ProtectionRulesPgTest, TheClaimFollowsEveryRule) {
  for (const ClaimCase& c : ClaimCases()) {
    SCOPED_TRACE(c.rule);
    const int64_t dst = Destination();
    Ingest(c.in_flight + c.due);
    if (c.in_flight > 0) {
      ASSERT_EQ(Claim(c.in_flight).size(), static_cast<size_t>(c.in_flight));
    }
    Set(dst, c.max_in_flight, c.before);

    auto batch = store_.ClaimDue(100, 1h, 16);
    ASSERT_TRUE(batch) << batch.error().message;
    int sends = 0, probes = 0, skips = 0;
    for (const ClaimedDelivery& d : batch->deliveries) {
      ASSERT_EQ(d.destination_id, dst);
      sends += d.kind == ClaimKind::kSend;
      probes += d.kind == ClaimKind::kProbe;
      skips += d.kind == ClaimKind::kSkip;
    }
    EXPECT_EQ(sends, c.sends);
    EXPECT_EQ(probes, c.probes);
    EXPECT_EQ(skips, c.skips);
    EXPECT_EQ(batch->rate_limited, c.held ? 1 : 0);
    for (const auto& [expr, want] : c.expect) EXPECT_EQ(Col(dst, expr), want) << expr;
    db_.Exec("UPDATE destinations SET deleted_at = now() WHERE id = " + N(dst));
  }
}

}  // namespace
}  // namespace webhookd::protection_rules_pgtest
