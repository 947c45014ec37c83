#pragma once

// Tenants as the operator lists them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace webhookd {

// A tenant as GET /v1/admin/tenants shows it.
struct TenantSummary {
  std::string tenant_id;
  int64_t destinations = 0;  // live (not deleted)
  int64_t pending = 0;       // deliveries waiting for an attempt
  int64_t dead_letters = 0;  // not replayed yet
};

// Tenants in tenant_id order: a page holds ids after `after_id` (the cursor).
struct TenantPage {
  int limit = 50;
  std::optional<std::string> after_id;
};

struct TenantListing {
  std::vector<TenantSummary> items;
  std::optional<std::string> next_after_id;  // nullopt: this was the last page
};

}  // namespace webhookd
