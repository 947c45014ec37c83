#pragma once

// A destination's outcomes over time (GET /v1/destinations/{id}/stats), as its rollups
// hold them (migrations/0044_destination_stats.sql).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/clock.h"

namespace webhookd {

// The latency bins of the rollups: bin i holds a duration d (ms) with
// 2^(i/2) <= d + 1 < 2^((i+1)/2), the last one every d from kLatencyBinFloor.back() on.
// Each entry is the first whole millisecond of its bin (the same table is in
// store/pg/schema/latency_histogram.sql); a bin with no whole millisecond repeats the
// next one's.
inline constexpr int kLatencyBins = 32;
inline constexpr std::array<int64_t, kLatencyBins> kLatencyBinFloor = {
    0,    1,    1,    2,    3,    5,     7,     11,    15,    22,   31,
    45,   63,   90,   127,  181,  255,   362,   511,   724,   1023, 1448,
    2047, 2896, 4095, 5792, 8191, 11585, 16383, 23170, 32767, 46340};

using LatencyCounts = std::array<int64_t, kLatencyBins>;

// The bin of a duration of `ms` milliseconds (negative counts as 0).
int LatencyBin(int64_t ms);

// The q-quantile (0 < q <= 1) of the durations `counts` holds, in ms: the attempt of rank
// ceil(q * n) falls in one bin, and the answer is that bin's geometric middle
// (2^((i + 0.5) / 2) - 1, kept within the bin's whole milliseconds), so it is within a
// factor 2^(1/4) (19 %) of the true value, or 2 ms of it (exact below 3 ms), up to 46 s.
// nullopt when there is no attempt.
std::optional<int64_t> LatencyQuantile(const LatencyCounts& counts, double q);

// One bucket of the answer.
struct DestinationStatsBucket {
  Timestamp start;
  int64_t succeeded = 0;
  int64_t retryable = 0;
  int64_t permanent = 0;
  int64_t dead_lettered = 0;  // counted too in retryable or permanent, as its last attempt
  LatencyCounts latency{};    // the attempts (succeeded, retryable, permanent) by bin
};

// The window asked for: buckets of `step` from `since` (a multiple of the step since the
// Unix epoch) while before `until`.
struct DestinationStatsWindow {
  Timestamp since;
  Timestamp until;
  Duration step;
};

// The steps a window may have, and at most how many buckets it may hold.
inline constexpr std::array<Duration, 4> kStatsSteps = {
    std::chrono::minutes(1), std::chrono::minutes(5), std::chrono::hours(1),
    std::chrono::hours(24)};
inline constexpr int64_t kMaxStatsBuckets = 1000;

// "1m", "5m", "1h" or "1d" as its step; nullopt for anything else.
std::optional<Duration> ParseStatsStep(std::string_view text);

// The start of the bucket of `step` that holds `t` (buckets are counted from the Unix
// epoch, so a day's is midnight UTC).
Timestamp StatsBucketStart(Timestamp t, Duration step);

// How many buckets of `step` a window from StatsBucketStart(since) to `until` holds.
int64_t StatsBucketCount(Timestamp since, Timestamp until, Duration step);

// Whether a window is read from the hours' rollups (migrations/0045_destination_stats_hours.sql):
// a step of whole hours from a whole hour, so that every bucket but the last, partial one
// is whole hours (that one is read from its minutes).
bool UsesHourRollups(const DestinationStatsWindow& window);

// The smallest step whose buckets cover since..until in at most kMaxStatsBuckets (1d when
// none does).
Duration DefaultStatsStep(Timestamp since, Timestamp until);

}  // namespace webhookd
