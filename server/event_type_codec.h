#pragma once

// The JSON of the event catalog's routes and of the filter test (docs/catalog.md).

#include <string>
#include <string_view>

#include "base/result.h"
#include "core/event_type.h"
#include "server/json_codec.h"

namespace webhookd {

// A create (`creating`: name required) or patch body, whose schema and examples are kept
// as the text they have in it. A schema is compiled and every
// example checked against the schema that will hold: the body's, or for a patch without
// one, `current`'s (nullopt: none). A patch may carry the type's own name, `patched`, as
// a body read with GET does; any other name is refused.
struct EventTypeBody {
  std::string name;  // creating only
  EventTypeFields fields;
};
Result<EventTypeBody> ParseEventTypeBody(std::string_view body, bool creating,
                                         const std::optional<std::string>& current_schema,
                                         const std::string& current_examples,
                                         std::string_view patched = {});

// The JSON text of a type (its schema and examples as written) and of a page of them.
std::string EventTypeText(const EventType& t);
std::string EventTypeListText(const EventTypeListing& listing);

// {"filter": "...", "payload": {...}}: the filter and the payload's text.
struct FilterTest {
  std::string filter;
  std::string payload;
};
Result<FilterTest> ParseFilterTest(std::string_view body);

}  // namespace webhookd
