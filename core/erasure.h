#pragma once

// The erasure of everything about one subject (docs/privacy.md): its record, which keeps
// the subject's SHA-256 and never the subject.

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"

namespace webhookd {

enum class ErasureStatus { kRunning, kDone };

struct Erasure {
  int64_t id = 0;
  ErasureStatus status = ErasureStatus::kRunning;
  int events = 0;                // the events erased
  int cancelled_deliveries = 0;  // their unfinished deliveries, cancelled
  Timestamp created_at;
  std::optional<Timestamp> finished_at;
  std::optional<std::string> tenant_id;  // erased within this tenant; nullopt: all
};

inline const char* ErasureStatusName(ErasureStatus s) {
  return s == ErasureStatus::kDone ? "done" : "running";
}

}  // namespace webhookd
