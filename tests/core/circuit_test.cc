#include "core/circuit.h"

#include <gtest/gtest.h>

namespace webhookd::circuit_test {
namespace {

TEST(CircuitStateTest, NamesMatchTheApiAndTheDatabase) {
  EXPECT_EQ(CircuitStateName(CircuitState::kClosed), "closed");
  EXPECT_EQ(CircuitStateName(CircuitState::kOpen), "open");
  EXPECT_EQ(CircuitStateName(CircuitState::kHalfOpen), "half_open");
  for (CircuitState s : {CircuitState::kClosed, CircuitState::kOpen, CircuitState::kHalfOpen}) {
    EXPECT_EQ(ParseCircuitState(CircuitStateName(s)), s);
  }
  EXPECT_EQ(ParseCircuitState("half-open"), std::nullopt);
  EXPECT_EQ(ParseCircuitState(""), std::nullopt);
}

}  // namespace
}  // namespace webhookd::circuit_test
