#pragma once

// The checks that make validation cost linear in the payload: no cycle through $ref (so
// the tree is a DAG), and a bound on how many nodes one payload value can be checked
// against.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>

#include "server/schema_compile.h"
#include "server/schema_tree.h"

namespace webhookd::schema {

// The most nodes any one payload value (or member name) may be checked against; a schema
// over it is refused as too complex. Validation then visits at most kMaxCost nodes per
// value of the payload.
inline constexpr size_t kMaxCost = 256;

// The most checks one validation may make: a payload holding more values than
// kMaxWork / cost is refused before it is checked, so that no check takes more than a
// few tens of milliseconds. With a typical cost under 8, that is every payload of the
// default size.
inline constexpr size_t kMaxWork = 1'000'000;

// The values of `doc` and its member names, the units of kMaxWork.
size_t CountValues(const nlohmann::json& doc);

// How many nodes deep a chain of subschemas and $refs may go.
inline constexpr size_t kMaxDepth = 256;

// Sets tree.cost; or the problem: a $ref cycle (named at the $ref that closes it), a
// chain too deep, a cost over kMaxCost. `schema` is the JSON the tree was built from.
std::optional<Problem> CheckGraph(CompiledTree& tree, const nlohmann::json& schema);

}  // namespace webhookd::schema
