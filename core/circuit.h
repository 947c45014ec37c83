#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "base/clock.h"

namespace webhookd {

// A destination's circuit breaker state, as its row stores it and the API shows it. The
// breaker itself runs in SQL: the claim (`webhookd.claim_due`, store/pg/schema/claim_due.sql)
// and store/pg/sql/record_outcomes.sql;
// tests/store/pg/protection_rules_pgtest.cc holds its rules as tables of scenarios.
enum class CircuitState { kClosed, kOpen, kHalfOpen };
std::string_view CircuitStateName(CircuitState state);
std::optional<CircuitState> ParseCircuitState(std::string_view name);

// What the operator sets (WEBHOOKD_CIRCUIT_THRESHOLD, WEBHOOKD_CIRCUIT_COOLDOWN) and the
// constants the outcome statement is given with them.
struct CircuitSettings {
  // The longest wait before a probe: a failed probe doubles the cooldown up to this.
  static constexpr Duration kMaxCooldown = std::chrono::hours(1);
  // A probe is due after the cooldown times a uniform factor in [1 - kJitter, 1 + kJitter],
  // so destinations that failed together are not all probed in the same instant.
  static constexpr double kJitter = 0.2;

  int threshold = 10;                            // consecutive failures that open it
  Duration cooldown = std::chrono::seconds(30);  // the first wait before a probe
};

}  // namespace webhookd
