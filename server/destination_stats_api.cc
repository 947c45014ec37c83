// GET /v1/destinations/{id}/stats: a destination's outcomes and latency over time, read
// from its rollups (docs/api.md).
#include "core/destination_stats.h"
#include "server/api.h"
#include "server/api_request.h"

namespace webhookd {

using namespace api;

namespace {

constexpr Duration kDefaultStatsWindow = std::chrono::hours(24);

// ?since=&until=&step= as a window of at most kMaxStatsBuckets buckets, or 422 naming
// each field that is wrong. Absent: until now, since a day before until, and the smallest
// step that fits.
Result<DestinationStatsWindow> ParseStatsWindow(const ApiRequest& req, Timestamp now) {
  std::vector<FieldError> errors;
  auto since = QueryTime(req, "since");
  if (!since) errors.push_back({"since", "must be an RFC 3339 time such as 2026-01-02T03:04:05Z"});
  auto until = QueryTime(req, "until");
  if (!until) errors.push_back({"until", "must be an RFC 3339 time such as 2026-01-02T03:04:05Z"});
  std::optional<Duration> step;
  if (auto text = QueryValue(req, "step"); text && !text->empty()) {
    step = ParseStatsStep(*text);
    if (!step) errors.push_back({"step", "must be one of 1m, 5m, 1h, 1d"});
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  DestinationStatsWindow w;
  w.until = until->value_or(now);
  w.since = since->value_or(w.until - kDefaultStatsWindow);
  if (w.since >= w.until) return Invalid({{"since", "must be before until"}});
  w.step = step.value_or(DefaultStatsStep(w.since, w.until));
  const int64_t buckets = StatsBucketCount(w.since, w.until, w.step);
  if (buckets > kMaxStatsBuckets) {
    return Invalid({{"step", "the window holds " + std::to_string(buckets) +
                                 " buckets of this step; at most 1000: a longer step or a "
                                 "shorter window"}});
  }
  w.since = StatsBucketStart(w.since, w.step);
  return w;
}

}  // namespace

Result<Reply> Api::GetDestinationStats(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_ASSIGN_OR_RETURN(DestinationStatsWindow window,
                            ParseStatsWindow(req, SystemClock().Now()));
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<DestinationStatsBucket> buckets,
                            stores_.destinations.GetDestinationStats(id, window, req.scope));
  const auto millis = [](std::optional<int64_t> ms) { return ms ? Json(*ms) : Json(nullptr); };
  Json out = Json::array();
  for (const DestinationStatsBucket& b : buckets) {
    out.push_back({{"start", FormatRfc3339(b.start)},
                   {"succeeded", b.succeeded},
                   {"retryable", b.retryable},
                   {"permanent", b.permanent},
                   {"dead_lettered", b.dead_lettered},
                   {"p50_ms", millis(LatencyQuantile(b.latency, 0.5))},
                   {"p99_ms", millis(LatencyQuantile(b.latency, 0.99))}});
  }
  return JsonReply(200, {{"buckets", std::move(out)}});
}

}  // namespace webhookd
