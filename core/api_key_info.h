#pragma once

// An API key as stored and listed (the key itself is never kept).

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"
#include "core/role.h"

namespace webhookd {

struct ApiKeyInfo {
  int64_t id = 0;
  std::string name;
  Role role = Role::kPublisher;
  Timestamp created_at;
  std::optional<Timestamp> revoked_at;
  std::optional<std::string> tenant_id = std::nullopt;  // set exactly for Role::kTenant
  std::optional<Timestamp> expires_at = std::nullopt;   // nullopt: never
};

// A key to create: its role, its tenant (for Role::kTenant) and how long it lives.
struct NewApiKey {
  std::string name;
  Role role = Role::kPublisher;
  std::string key_hash;  // hex SHA-256; the key itself is never stored
  std::optional<std::string> tenant_id = std::nullopt;
  std::optional<Duration> ttl = std::nullopt;  // nullopt: never expires
};

}  // namespace webhookd
