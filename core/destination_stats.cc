#include "core/destination_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace webhookd {

int LatencyBin(int64_t ms) {
  // The last bin whose first millisecond is at or below ms.
  const auto after = std::upper_bound(kLatencyBinFloor.begin() + 1, kLatencyBinFloor.end(),
                                      std::max<int64_t>(ms, 0));
  return static_cast<int>(after - kLatencyBinFloor.begin()) - 1;
}

std::optional<int64_t> LatencyQuantile(const LatencyCounts& counts, double q) {
  int64_t total = 0;
  for (int64_t n : counts) total += n;
  if (total == 0) return std::nullopt;
  const auto rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(q * static_cast<double>(total))), 1, total);
  int64_t seen = 0;
  for (int i = 0; i < kLatencyBins; ++i) {
    seen += counts[i];
    if (seen < rank) continue;
    const int64_t lo = kLatencyBinFloor[i];
    const int64_t hi =
        i + 1 < kLatencyBins ? kLatencyBinFloor[i + 1] - 1 : std::numeric_limits<int64_t>::max();
    const auto middle = std::llround(std::exp2((i + 0.5) / 2.0)) - 1;
    return std::clamp<int64_t>(middle, lo, std::max(lo, hi));
  }
  return std::nullopt;  // not reached: the ranks end at total
}

std::optional<Duration> ParseStatsStep(std::string_view text) {
  if (text == "1m") return kStatsSteps[0];
  if (text == "5m") return kStatsSteps[1];
  if (text == "1h") return kStatsSteps[2];
  if (text == "1d") return kStatsSteps[3];
  return std::nullopt;
}

Timestamp StatsBucketStart(Timestamp t, Duration step) {
  const int64_t us = t.time_since_epoch().count();
  const int64_t s = step.count();
  // Floor, not truncation, for a time before the epoch.
  const int64_t start = (us >= 0 ? us / s : -((-us + s - 1) / s)) * s;
  return Timestamp(Duration(start));
}

int64_t StatsBucketCount(Timestamp since, Timestamp until, Duration step) {
  const Timestamp from = StatsBucketStart(since, step);
  if (until <= from) return 0;
  return ((until - from).count() + step.count() - 1) / step.count();
}

Duration DefaultStatsStep(Timestamp since, Timestamp until) {
  for (Duration step : kStatsSteps) {
    if (StatsBucketCount(since, until, step) <= kMaxStatsBuckets) return step;
  }
  return kStatsSteps.back();
}

bool UsesHourRollups(const DestinationStatsWindow& window) {
  constexpr Duration hour = std::chrono::hours(1);
  return window.step >= hour && window.step % hour == Duration::zero() &&
         StatsBucketStart(window.since, hour) == window.since;
}

}  // namespace webhookd
