#include "server/admin_codec.h"

#include "base/duration.h"
#include "core/ids.h"

namespace webhookd {

Result<Duration> ParsePortalLinkTtl(std::string_view body, Duration default_ttl) {
  constexpr Duration kMaxPortalLinkTtl = std::chrono::hours(24 * 7);
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  Duration ttl = default_ttl;
  std::vector<FieldError> errors;
  CheckMembers(json, {{"ttl"}}, "", errors);
  DurationField(json, "ttl", /*zero_ok=*/false, kMaxPortalLinkTtl,
                "must be a duration above zero up to 7d, such as 1h", ttl, errors);
  if (!errors.empty()) return Invalid(std::move(errors));
  return ttl;
}

Json TenantJson(const TenantSummary& t) {
  return {{"tenant_id", t.tenant_id},
          {"destinations", t.destinations},
          {"pending", t.pending},
          {"dead_letters", t.dead_letters}};
}

Json TenantListJson(const TenantListing& listing) {
  Json data = Json::array();
  for (const TenantSummary& t : listing.items) data.push_back(TenantJson(t));
  return Json{{"data", std::move(data)}, {"next_cursor", OrNull(listing.next_after_id)}};
}

Json StatsJson(Duration window, const HealthStats& stats) {
  return Json{{"window", FormatDuration(window)},
              {"attempts", stats.attempts},
              {"retry_rate", stats.retry_rate},
              {"dead_letter_rate", stats.dead_letter_rate},
              {"avg_attempts_to_success", stats.avg_attempts_to_success},
              {"second_attempt_success_rate", stats.second_attempt_success_rate},
              {"retrying_over_24h", stats.retrying_over_24h},
              {"pending", stats.pending},
              {"in_flight", stats.in_flight}};
}

Json StatsSeriesJson(Duration window, Duration step, const std::vector<StatsPoint>& points) {
  Json data = Json::array();
  for (const StatsPoint& p : points) {
    data.push_back(Json{{"at", FormatRfc3339(p.at)},
                        {"attempts", p.attempts},
                        {"successes", p.successes},
                        {"failures", p.failures},
                        {"dead_letters", p.dead_letters}});
  }
  return Json{{"window", FormatDuration(window)},
              {"step", FormatDuration(step)},
              {"points", std::move(data)}};
}

Json FailingDestinationsJson(Duration window, const std::vector<FailingDestination>& failing) {
  Json data = Json::array();
  for (const FailingDestination& d : failing) {
    data.push_back(Json{{"id", FormatId(kDestinationPrefix, d.id)},
                        {"tenant_id", d.tenant_id ? Json(*d.tenant_id) : Json(nullptr)},
                        {"url", d.url},
                        {"description", d.description},
                        {"failed", d.failed},
                        {"succeeded", d.succeeded},
                        {"dead_lettered", d.dead_lettered}});
  }
  return Json{{"window", FormatDuration(window)}, {"destinations", std::move(data)}};
}

Json PortalLinkJson(const std::string& url, const std::string& key,
                    const std::optional<Timestamp>& expires_at) {
  return Json{{"url", url}, {"key", key}, {"expires_at", TimeOrNull(expires_at)}};
}

}  // namespace webhookd
