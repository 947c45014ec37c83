// The operator's routes: stats, the tenants list and portal links.
#include "base/duration.h"
#include "base/log.h"
#include "core/api_key.h"
#include "core/validation.h"
#include "server/admin_codec.h"
#include "server/api.h"
#include "server/api_request.h"

namespace webhookd {

using namespace api;

namespace {

constexpr Duration kDefaultPortalLinkTtl = std::chrono::hours(1);

// ?window= of the stats routes: a duration up to 31 days, 1h when absent.
Result<Duration> StatsWindow(const ApiRequest& req) {
  Duration window = std::chrono::hours(1);
  if (auto text = QueryValue(req, "window"); text && !text->empty()) {
    auto parsed = ParseDuration(*text);
    if (!parsed || *parsed <= Duration::zero() || *parsed > std::chrono::hours(24 * 31)) {
      return Invalid({{"window", "must be a duration such as 15m, 1h or 24h, at most 744h"}});
    }
    window = *parsed;
  }
  return window;
}

}  // namespace

Result<Reply> Api::GetStatsSeries(const ApiRequest& req) {
  constexpr int64_t kMaxPoints = 1440;
  WEBHOOKD_ASSIGN_OR_RETURN(Duration window, StatsWindow(req));
  Duration step = std::chrono::minutes(1);
  if (auto text = QueryValue(req, "step"); text && !text->empty()) {
    auto parsed = ParseDuration(*text);
    if (!parsed || *parsed < std::chrono::seconds(1)) {
      return Invalid({{"step", "must be a duration of at least 1s, such as 1m"}});
    }
    step = *parsed;
  }
  if (window.count() % step.count() != 0 || window.count() / step.count() > kMaxPoints) {
    return Invalid({{"step", "must divide the window into at most 1440 whole steps"}});
  }
  WEBHOOKD_ASSIGN_OR_RETURN(auto points, stores_.operations.StatsSeries(window, step));
  return JsonReply(200, StatsSeriesJson(window, step, points));
}

Result<Reply> Api::GetFailingDestinations(const ApiRequest& req) {
  // Read from the rollups by minute of each failing destination: a day at most keeps the
  // read to the last two days' partitions.
  constexpr Duration kMaxWindow = std::chrono::hours(24);
  std::vector<FieldError> errors;
  Duration window = std::chrono::hours(1);
  if (auto text = QueryValue(req, "window"); text && !text->empty()) {
    auto parsed = ParseDuration(*text);
    if (!parsed || *parsed < std::chrono::minutes(1) || *parsed > kMaxWindow) {
      errors.push_back({"window", "must be a duration from 1m to 24h, such as 15m or 1h"});
    } else {
      window = *parsed;
    }
  }
  const int limit = ParseLimit(req, errors, 10);
  if (!errors.empty()) return Invalid(std::move(errors));
  WEBHOOKD_ASSIGN_OR_RETURN(auto failing, stores_.operations.FailingDestinations(window, limit));
  return JsonReply(200, FailingDestinationsJson(window, failing));
}

Result<Reply> Api::GetStats(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Duration window, StatsWindow(req));
  WEBHOOKD_ASSIGN_OR_RETURN(HealthStats stats, stores_.operations.Stats(window));
  return JsonReply(200, StatsJson(window, stats));
}

Result<Reply> Api::ListTenants(const ApiRequest& req) {
  std::vector<FieldError> errors;
  TenantPage page;
  page.limit = ParseLimit(req, errors);
  // The cursor is the last tenant_id of the previous page: tenants have no other order.
  if (auto cursor = QueryValue(req, "cursor"); cursor && !cursor->empty()) {
    if (IsValidTenantId(*cursor)) {
      page.after_id = *cursor;
    } else {
      errors.push_back({"cursor", "is not a cursor from this list"});
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  WEBHOOKD_ASSIGN_OR_RETURN(TenantListing listing, stores_.tenants.ListTenants(page));
  return JsonReply(200, TenantListJson(listing));
}

Result<Reply> Api::CreatePortalLink(const ApiRequest& req) {
  const std::string tenant = req.path_args.empty() ? "" : req.path_args[0];
  std::vector<FieldError> errors;
  if (!IsValidTenantId(tenant)) errors.push_back({"tenant_id", kTenantIdRule});
  auto ttl = ParsePortalLinkTtl(req.body, kDefaultPortalLinkTtl);
  if (!ttl) {
    // A body that is no JSON object is answered alone; a bad ttl joins the tenant's error.
    const auto& fields = ttl.error().fields;
    if (fields.empty() || fields.front().field == "body") return Propagate(ttl);
    errors.insert(errors.end(), fields.begin(), fields.end());
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  const std::string key = GenerateApiKey();
  WEBHOOKD_ASSIGN_OR_RETURN(ApiKeyInfo created,
                            stores_.keys.CreateApiKey(NewApiKey{"portal link", Role::kTenant,
                                                                HashApiKey(key), tenant, *ttl}));
  // The key itself is in the answer only, never in a log line.
  Log(LogLevel::kInfo, "portal link created",
      {{"tenant_id", tenant}, {"key_id", FormatId(kApiKeyPrefix, created.id)}});
  return JsonReply(
      201, PortalLinkJson(options_.public_url + "/ui/#key=" + key, key, created.expires_at));
}

}  // namespace webhookd
