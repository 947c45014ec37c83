#pragma once

// The event catalog (docs/catalog.md): the types producers may send, with an optional
// JSON Schema for their payloads. JSON travels as text here; server/ parses it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"

namespace webhookd {

struct EventType {
  std::string name;
  std::string description;
  std::optional<std::string> schema;  // a JSON Schema (draft 7) object; nullopt: any object
  std::string examples = "[]";        // a JSON array of payloads the schema accepts
  bool deprecated = false;
  bool builtin = false;  // webhookd's own (webhookd.*): read-only
  Timestamp created_at;
  Timestamp updated_at;
};

// The fields a patch may set; nullopt = not given.
struct EventTypeFields {
  std::optional<std::string> description;
  std::optional<std::optional<std::string>> schema;  // set to nullopt: no schema
  std::optional<std::string> examples;
  std::optional<bool> deprecated;
};

// Names in order: a page holds names after `after`.
struct EventTypePage {
  int limit = 100;
  std::optional<std::string> after;
};

struct EventTypeListing {
  std::vector<EventType> items;
  std::optional<std::string> next_after;  // nullopt: this was the last page
};

// What ingest checks payloads against: every type's schema (nullopt: none) as of one
// generation of the catalog. The store refuses an event checked against an older one.
struct CatalogSnapshotRows {
  int64_t generation = 0;
  std::vector<std::pair<std::string, std::optional<std::string>>> schemas;  // by name
};

// WEBHOOKD_EVENT_TYPES: kOpen takes any well-formed type, kStrict only catalogued ones.
enum class EventTypesMode { kOpen, kStrict };

}  // namespace webhookd
