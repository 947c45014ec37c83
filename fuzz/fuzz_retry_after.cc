// Fuzzes the Retry-After parser against a few fixed "now"s: a result is never negative,
// delta-seconds read as themselves (capped), and a date is at most its distance from now.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/retry_after.h"
#include "fuzz/fuzz_check.h"

namespace {

using namespace std::chrono;
using webhookd::Duration;
using webhookd::Timestamp;

Timestamp At(int y, unsigned m, unsigned d, int hh, int mm, int ss) {
  return Timestamp(sys_days(year_month_day{year(y), month(m), day(d)}) + hours(hh) + minutes(mm) +
                   seconds(ss));
}

// The Unix epoch, a recent instant, and one late in a century (two-digit years).
const Timestamp kNows[] = {Timestamp{}, At(2024, 2, 29, 12, 30, 15) + microseconds(123456),
                           At(2096, 12, 31, 23, 59, 59)};

bool IsDeltaSeconds(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return !value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  const bool delta = IsDeltaSeconds(value);
  for (const Timestamp now : kNows) {
    const std::optional<Duration> wait = webhookd::ParseRetryAfter(value, now);
    if (delta) FUZZ_CHECK(wait.has_value());
    if (!wait) continue;
    FUZZ_CHECK(*wait >= Duration::zero());
    if (delta) {
      // Whole seconds, capped at 10^9 s.
      FUZZ_CHECK(*wait <= seconds(1'000'000'000));
      FUZZ_CHECK(*wait % seconds(1) == Duration::zero());
    } else {
      // An HTTP-date: a year of four digits at most, and never before now.
      FUZZ_CHECK(now + *wait <= At(9999, 12, 31, 23, 59, 60));
      FUZZ_CHECK(*wait == Duration::zero() || now + *wait > now);
    }
    // The answer depends on the value and now only.
    FUZZ_CHECK(webhookd::ParseRetryAfter(value, now) == wait);
  }
  return 0;
}
