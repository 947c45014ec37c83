#pragma once

#include <optional>
#include <string_view>

#include "base/clock.h"
#include "base/random.h"
#include "core/outcome.h"

namespace webhookd {

enum class CircuitState { kClosed, kOpen, kHalfOpen };
std::string_view CircuitStateName(CircuitState state);
std::optional<CircuitState> ParseCircuitState(std::string_view name);

// An outcome that counts toward opening a circuit: retryable (408, 5xx, connection, TLS,
// DNS, timeout) but not 429, which says the receiver is up and wants less.
bool IsCircuitFailure(Outcome outcome, std::optional<int> status_code);
// 429 and 503: the receiver asks for less concurrency.
bool IsThrottle(std::optional<int> status_code);
// Any attempt that did not succeed, skipped ones aside: what starts `failing_since`.
bool IsFailedAttempt(Outcome outcome);

struct CircuitSettings {
  int threshold = 10;                            // consecutive failures that open it
  Duration cooldown = std::chrono::seconds(30);  // the first wait before a probe
};

// One destination's breaker, as its database row holds it.
struct Circuit {
  CircuitState state = CircuitState::kClosed;
  int consecutive_failures = 0;
  std::optional<Timestamp> failing_since;  // the first failed attempt since the last success
  std::optional<Timestamp> next_probe_at;  // while open or half-open
  Duration cooldown{0};                    // while open or half-open: the wait before the probe
};

// What a claim does with a due delivery.
enum class Admission {
  kSend,   // closed: an ordinary attempt
  kProbe,  // the one attempt of a half-open circuit
  kSkip,   // open: recorded as skipped, rescheduled, never sent
  kWait,   // half-open with its probe out: left pending, no attempt used
};

// What recording an attempt did to the circuit.
enum class CircuitChange { kNone, kOpened, kReopened, kRecovered };

// The circuit breaker's state machine. Pure: time and chance come in as arguments.
//
//   closed --threshold consecutive failures--> open
//   open --next_probe_at, nothing in flight--> half_open (one probe is sent)
//   half_open --probe succeeds--> closed          (kRecovered)
//   half_open --probe fails--> open, cooldown x2  (kReopened; at most kMaxCooldown)
//
// A half-open circuit whose probe was lost (its worker died and the lease ran out) has
// nothing in flight again and sends another probe.
class CircuitBreaker {
 public:
  static constexpr Duration kMaxCooldown = std::chrono::hours(1);
  // next_probe_at = now + cooldown x a uniform factor in [1 - kJitter, 1 + kJitter], so
  // destinations that failed together are not all probed in the same instant.
  static constexpr double kJitter = 0.2;

  explicit CircuitBreaker(CircuitSettings settings);

  const CircuitSettings& settings() const { return settings_; }

  // What to do with a due delivery at `now`, with `in_flight` attempts to the destination
  // out. A probe turns the circuit half-open.
  Admission Admit(Circuit& circuit, Timestamp now, int in_flight) const;

  // Applies the end of one attempt that started at `started_at`; `probe` says whether it
  // was the half-open probe. Outcomes of other attempts (sent before the circuit opened)
  // move the counters but not the state.
  CircuitChange Record(Circuit& circuit, Outcome outcome, std::optional<int> status_code,
                       bool probe, Timestamp started_at, Timestamp now, Random& random) const;

  // now + cooldown x U[0.8, 1.2].
  static Timestamp ProbeTime(Duration cooldown, Timestamp now, Random& random);

 private:
  void Open(Circuit& circuit, Duration cooldown, Timestamp now, Random& random) const;

  CircuitSettings settings_;
};

// True when the destination has failed for longer than `disable_after` with no success;
// `disable_after` zero never disables.
bool FailingTooLong(const Circuit& circuit, Timestamp now, Duration disable_after);

}  // namespace webhookd
