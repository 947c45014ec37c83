#pragma once

// The JSON of the event catalog's routes and of the filter test (docs/catalog.md).

#include <string>
#include <string_view>

#include "base/result.h"
#include "core/event_type.h"
#include "server/json_codec.h"

namespace webhookd {

// A create (`creating`: name required) or patch body. A schema is compiled and every
// example checked against the schema that will hold: the body's, or for a patch without
// one, `current`'s (nullopt: none).
struct EventTypeBody {
  std::string name;  // creating only
  EventTypeFields fields;
};
Result<EventTypeBody> ParseEventTypeBody(const Json& body, bool creating,
                                         const std::optional<std::string>& current_schema,
                                         const std::string& current_examples);

Json EventTypeJson(const EventType& t);
Json EventTypeListJson(const EventTypeListing& listing);

// {"filter": "...", "payload": {...}}: the filter and the payload's text.
struct FilterTest {
  std::string filter;
  std::string payload;
};
Result<FilterTest> ParseFilterTest(std::string_view body);

}  // namespace webhookd
