#pragma once

// The recovery of a destination's dead letters of a time window (docs/operations.md):
// its durable record, which the server processes carry out a page at a time.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"

namespace webhookd {

// A recovery's public id: "rec_7" (core/ids.h).
inline constexpr std::string_view kRecoveryPrefix = "rec_";

enum class RecoveryStatus { kRunning, kDone };

struct Recovery {
  int64_t id = 0;
  int64_t destination_id = 0;
  std::optional<std::string> tenant_id;  // its destination's
  RecoveryStatus status = RecoveryStatus::kRunning;
  int64_t replayed = 0;
  Timestamp since;  // dead_lettered_at >= since
  Timestamp until;  // dead_lettered_at < until
  Timestamp created_at;
  std::optional<Timestamp> finished_at;
};

inline const char* RecoveryStatusName(RecoveryStatus s) {
  return s == RecoveryStatus::kDone ? "done" : "running";
}

}  // namespace webhookd
