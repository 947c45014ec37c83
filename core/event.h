#pragma once

// An event as published, stored and read back.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/delivery.h"

namespace webhookd {

struct NewEvent {
  std::string type;
  std::string payload;  // a JSON object: the bytes of the posted value, exactly
  std::optional<int64_t> destination_id;
  // When not empty: the SHA-256 of the API key that sent it, not yet looked up. The store
  // ingests only if that key is live, in the ingest's own transaction, and answers
  // kUnauthorized otherwise.
  std::string verify_key_hash = {};
  // Fans out to this tenant's destinations alone; nullopt: to destinations without one.
  std::optional<std::string> tenant_id = std::nullopt;
  // Orders it after the earlier events of this key on fifo destinations (docs/ordering.md).
  std::optional<std::string> ordering_key = std::nullopt;
  // The event catalog generation its payload was checked against (0: unchecked): the
  // store refuses it with kStale if the catalog has changed since.
  int64_t catalog_generation = 0;
  // The W3C trace context its attempts continue (docs/tracing.md): a traceparent naming
  // the ingest span, and the producer's tracestate. nullopt: the database makes a fresh
  // trace.
  std::optional<std::string> traceparent = std::nullopt;
  std::optional<std::string> tracestate = std::nullopt;
  // The people or things it is about (docs/privacy.md): each once, never sent to a
  // receiver.
  std::vector<std::string> subjects = {};
};

struct IdempotencyKey {
  std::string key;
  std::string request_hash;  // hex SHA-256 of the request body
};

// The source an inbound event came through (docs/inbound.md).
struct EventSource {
  int64_t id = 0;
  std::string provider;  // InboundProviderName's
  std::optional<std::string> dedupe_key;
};

struct Event {
  int64_t id = 0;
  std::string type;
  std::string payload;
  Timestamp created_at;
  std::vector<Delivery> deliveries;  // filled by reads that say so
  std::optional<std::string> tenant_id = std::nullopt;
  std::optional<std::string> ordering_key = std::nullopt;
  std::vector<std::string> subjects = {};
  // Set once an erasure took its payload (then empty) and the erased subject.
  std::optional<Timestamp> erased_at = std::nullopt;
  std::optional<EventSource> source = std::nullopt;  // nullopt: published, not received
};

struct IngestReceipt {
  Event event;            // with its deliveries as created (all pending)
  bool replayed = false;  // an Idempotency-Key matched an earlier request
};

struct EventFilter {
  std::optional<std::string> type;
  std::optional<Timestamp> after;   // created_at >= after
  std::optional<Timestamp> before;  // created_at < before
  std::optional<std::string> tenant_id = std::nullopt;
  // The events naming this subject (their tenant's, for a tenant's key).
  std::optional<std::string> subject = std::nullopt;
  std::optional<int64_t> source_id = std::nullopt;  // the events this source made
};

}  // namespace webhookd
