#include "core/circuit_breaker.h"

#include <algorithm>
#include <cmath>

namespace webhookd {

std::string_view CircuitStateName(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

std::optional<CircuitState> ParseCircuitState(std::string_view name) {
  for (CircuitState s : {CircuitState::kClosed, CircuitState::kOpen, CircuitState::kHalfOpen}) {
    if (CircuitStateName(s) == name) return s;
  }
  return std::nullopt;
}

bool IsCircuitFailure(Outcome outcome, std::optional<int> status_code) {
  return outcome == Outcome::kRetryable && status_code != 429;
}

bool IsThrottle(std::optional<int> status_code) { return status_code == 429 || status_code == 503; }

bool IsFailedAttempt(Outcome outcome) {
  return outcome == Outcome::kRetryable || outcome == Outcome::kPermanent;
}

CircuitBreaker::CircuitBreaker(CircuitSettings settings) : settings_(settings) {
  settings_.threshold = std::max(1, settings_.threshold);
  settings_.cooldown = std::clamp(settings_.cooldown, Duration(1), kMaxCooldown);
}

Timestamp CircuitBreaker::ProbeTime(Duration cooldown, Timestamp now, Random& random) {
  const double factor = 1.0 - kJitter + 2.0 * kJitter * random.Unit();
  return now + Duration(static_cast<Duration::rep>(
                   std::round(static_cast<double>(cooldown.count()) * factor)));
}

void CircuitBreaker::Open(Circuit& circuit, Duration cooldown, Timestamp now,
                          Random& random) const {
  circuit.state = CircuitState::kOpen;
  circuit.cooldown = std::min(cooldown, kMaxCooldown);
  circuit.next_probe_at = ProbeTime(circuit.cooldown, now, random);
}

Admission CircuitBreaker::Admit(Circuit& circuit, Timestamp now, int in_flight) const {
  switch (circuit.state) {
    case CircuitState::kClosed:
      return Admission::kSend;
    case CircuitState::kOpen:
      if (circuit.next_probe_at && now < *circuit.next_probe_at) return Admission::kSkip;
      break;
    case CircuitState::kHalfOpen:
      break;
  }
  // Due for a probe. It goes out alone: while anything else is in flight (the probe, or
  // attempts sent before the circuit opened) the rest wait without using an attempt.
  if (in_flight > 0) return Admission::kWait;
  circuit.state = CircuitState::kHalfOpen;
  return Admission::kProbe;
}

CircuitChange CircuitBreaker::Record(Circuit& circuit, Outcome outcome,
                                     std::optional<int> status_code, bool probe,
                                     Timestamp started_at, Timestamp now, Random& random) const {
  if (outcome == Outcome::kSkipped) return CircuitChange::kNone;  // nothing was sent
  if (outcome == Outcome::kSuccess) {
    circuit.consecutive_failures = 0;
    circuit.failing_since.reset();
  } else {
    if (IsCircuitFailure(outcome, status_code)) ++circuit.consecutive_failures;
    if (!circuit.failing_since) circuit.failing_since = started_at;
  }
  if (probe && circuit.state == CircuitState::kHalfOpen) {
    if (outcome == Outcome::kSuccess) {
      circuit.state = CircuitState::kClosed;
      circuit.next_probe_at.reset();
      circuit.cooldown = Duration::zero();
      return CircuitChange::kRecovered;
    }
    // Any answer but a success keeps the receiver on probation, a 429 included.
    Open(circuit, std::max(settings_.cooldown, circuit.cooldown * 2), now, random);
    return CircuitChange::kReopened;
  }
  if (circuit.state == CircuitState::kClosed &&
      circuit.consecutive_failures >= settings_.threshold) {
    Open(circuit, settings_.cooldown, now, random);
    return CircuitChange::kOpened;
  }
  return CircuitChange::kNone;
}

bool FailingTooLong(const Circuit& circuit, Timestamp now, Duration disable_after) {
  return disable_after > Duration::zero() && circuit.failing_since &&
         now - *circuit.failing_since > disable_after;
}

}  // namespace webhookd
