#include "core/circuit.h"

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

}  // namespace webhookd
