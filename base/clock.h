#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace webhookd {

// PostgreSQL keeps microseconds, so the domain does too.
using Duration = std::chrono::microseconds;
using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() = 0;
};

class SystemClock final : public Clock {
 public:
  Timestamp Now() override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }
};

// "2026-11-21T12:34:56.789012Z": RFC 3339 in UTC with microseconds.
std::string FormatRfc3339(Timestamp t);

// Accepts RFC 3339 with 'Z' or a numeric offset and 0-9 fraction digits.
std::optional<Timestamp> ParseRfc3339(std::string_view text);

inline int64_t UnixSeconds(Timestamp t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

inline double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace webhookd
