#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "store/pg/pg_store.h"
#include "tests/testing/test_database.h"

namespace webhookd::testing {

inline std::string N(int64_t n) { return std::to_string(n); }

// "3,2,1" -> {3, 2, 1}; "" -> {}.
inline std::vector<int64_t> Ids(const std::string& comma_separated) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start < comma_separated.size()) {
    const size_t comma = std::min(comma_separated.find(',', start), comma_separated.size());
    out.push_back(std::stoll(comma_separated.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

// A valid destination to https://example.com/hook with the specification's test secret.
inline Destination TestDestination(std::vector<std::string> event_types = {},
                                   std::optional<int> max_in_flight = std::nullopt,
                                   bool enabled = true) {
  Destination d;
  d.url = "https://example.com/hook";
  d.secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  d.event_types = std::move(event_types);
  d.max_in_flight = max_in_flight;
  d.enabled = enabled;
  return d;
}

// The record a worker writes after one attempt of `c`.
inline AttemptRecord RecordFor(const ClaimedDelivery& c, DeliveryStatus next,
                               std::optional<int> status_code, Outcome outcome) {
  AttemptRecord r;
  r.delivery_id = c.delivery_id;
  r.claim_token = c.claim_token;
  r.destination_id = c.destination_id;
  r.event_id = c.event_id;
  r.attempt_number = c.attempt_count + 1;
  r.started_at = SystemClock().Now();
  r.duration_ms = 12;
  r.status_code = status_code;
  r.outcome = outcome;
  r.next_status = next;
  r.delivery_created_at = c.created_at;
  return r;
}

// What the *_pgtests share: a fresh migrated database and a store on it.
class PgTest : public ::testing::Test {
 protected:
  int64_t CreateDestination(Destination d) {
    auto r = store_.CreateDestination(d, 1000000);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->id : 0;
  }

  std::vector<ClaimedDelivery> Claim(int limit, Duration lease = std::chrono::hours(1),
                                     int default_cap = 16) {
    auto r = store_.ClaimDue(limit, lease, default_cap);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->deliveries : std::vector<ClaimedDelivery>{};
  }

  // Returns the delivery ids of the records applied.
  std::vector<int64_t> Record(std::vector<AttemptRecord> records,
                              const ProtectionSettings& protection = {}) {
    auto r = store_.RecordOutcomes(records, protection);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->applied : std::vector<int64_t>{};
  }

  TestDatabase db_;
  pg::PgStore store_{db_.url(), pg::PgStore::Options{.api_connections = 8}};
};

}  // namespace webhookd::testing
