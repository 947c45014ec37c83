#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "core/stats.h"
#include "core/tenant.h"
#include "server/json_codec.h"

namespace webhookd {

// The JSON of the admin routes (admin_api): tenants, stats, portal links.

// The optional body of POST /v1/admin/tenants/{tenant_id}/portal-links: {"ttl"?}.
Result<Duration> ParsePortalLinkTtl(std::string_view body, Duration default_ttl);

Json TenantJson(const TenantSummary& t);
Json TenantListJson(const TenantListing& listing);
Json StatsJson(Duration window, const HealthStats& stats);
Json StatsSeriesJson(Duration window, Duration step, const std::vector<StatsPoint>& points);
Json FailingDestinationsJson(Duration window, const std::vector<FailingDestination>& failing);
Json PortalLinkJson(const std::string& url, const std::string& key,
                    const std::optional<Timestamp>& expires_at);

}  // namespace webhookd
