#include "base/duration.h"

#include <cstdint>
#include <limits>

namespace webhookd {

Result<Duration> ParseDuration(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) {
    return Fail(ErrorKind::kInvalid, "expected a whole number followed by ms, s, m, h or d");
  }
  const std::string_view unit = text.substr(digits);
  int64_t micros_per_unit = 0;
  if (unit == "ms") {
    micros_per_unit = 1'000;
  } else if (unit == "s") {
    micros_per_unit = 1'000'000;
  } else if (unit == "m") {
    micros_per_unit = 60'000'000;
  } else if (unit == "h") {
    micros_per_unit = 3'600'000'000;
  } else if (unit == "d") {
    micros_per_unit = 86'400'000'000;
  } else {
    return Fail(ErrorKind::kInvalid, "expected a whole number followed by ms, s, m, h or d");
  }
  const int64_t max_value = std::numeric_limits<int64_t>::max() / micros_per_unit;
  int64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    const int digit = text[i] - '0';
    if (value > (max_value - digit) / 10) return Fail(ErrorKind::kInvalid, "duration too large");
    value = value * 10 + digit;
  }
  return Duration(value * micros_per_unit);
}

std::string FormatDuration(Duration d) {
  int64_t count = d.count();
  std::string sign;
  if (count < 0) {
    sign = "-";
    // The most negative count cannot be negated; it is not a whole millisecond anyway.
    if (count == std::numeric_limits<int64_t>::min()) return std::to_string(count) + "us";
    count = -count;
  }
  if (count == 0) return "0s";
  if (count % 3'600'000'000 == 0) return sign + std::to_string(count / 3'600'000'000) + "h";
  if (count % 60'000'000 == 0) return sign + std::to_string(count / 60'000'000) + "m";
  if (count % 1'000'000 == 0) return sign + std::to_string(count / 1'000'000) + "s";
  if (count % 1'000 == 0) return sign + std::to_string(count / 1'000) + "ms";
  // Finer than any unit ParseDuration takes; only computed waits get here.
  return sign + std::to_string(count) + "us";
}

}  // namespace webhookd
