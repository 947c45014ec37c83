#pragma once

// What a schema may cost, checked on its JSON before any of it is compiled: a cheap walk
// that stops as soon as a bound is passed, so that a hostile schema costs no more than
// reading it.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>

#include "server/schema_compile.h"

namespace webhookd::schema {

// The largest schema, as compact JSON, and the most subschemas it may hold (the root not
// counted). Together they bound the nodes, and so the memory and time, of a compile.
inline constexpr size_t kMaxSchemaBytes = 64 << 10;
inline constexpr size_t kMaxSubschemas = 10'000;

// The problem (at the schema itself) when `schema` passes either bound.
std::optional<Problem> CheckBounds(const nlohmann::json& schema);

// The length of `value` as compact JSON, or any number above `limit` once it passes it.
size_t SerializedSize(const nlohmann::json& value, size_t limit);

// The subschemas below `schema`, or any number above `limit` once it passes it.
size_t CountSubschemas(const nlohmann::json& schema, size_t limit);

}  // namespace webhookd::schema
