#pragma once

// A source as stored and managed (docs/inbound.md); what verification reads of it is
// SourceSettings (core/inbound_source.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/inbound_source.h"

namespace webhookd {

struct Source {
  int64_t id = 0;
  std::optional<std::string> tenant_id;
  std::string description;
  SourceSettings settings;
  // Opened only where verification needs them (the ingest cache); API reads leave them
  // empty, as no answer shows them.
  std::string secret;
  // The secret a rotation replaced, verifying until `previous_valid_until`.
  std::optional<std::string> previous_secret;
  std::optional<Timestamp> previous_valid_until;
  Timestamp created_at;
  Timestamp updated_at;
};

struct SourceFilter {
  std::optional<std::string> tenant_id;
};

// Every live source, with the generation it was read at: the ingest cache's copy.
struct SourceSnapshot {
  int64_t generation = 0;
  std::vector<Source> sources;
};

// An event a source's verified request makes.
struct InboundEvent {
  int64_t source_id = 0;
  InboundProvider provider = InboundProvider::kHmac;
  std::optional<std::string> tenant_id;
  std::string type;
  std::string payload;
  std::optional<std::string> dedupe_key;
  // The SourceSnapshot generation it was verified against: nothing is written once the
  // sources have changed since (kStale), and the caller verifies again.
  int64_t generation = 0;
  // The request's span (a root: providers send no traceparent): the event keeps it, so
  // its attempts are the span's children. None: a fresh one in SQL.
  std::optional<std::string> traceparent;
};

struct InboundReceipt {
  int64_t event_id = 0;
  bool duplicate = false;  // the key named an earlier event; nothing was written
};

}  // namespace webhookd
