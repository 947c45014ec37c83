#pragma once

// Reads a JSON Schema (draft 7) into a SchemaNode tree: every keyword's value checked
// against the draft-7 meta-schema, every pattern compiled with RE2 (linear time; a
// pattern RE2 cannot take is refused), every local $ref resolved (a remote one is
// refused).

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/schema_tree.h"

namespace webhookd::schema {

// What is wrong with a schema: the JSON Pointer of the keyword at fault, relative to the
// schema ("/properties/amount/type"), and why.
struct Problem {
  std::string pointer;
  std::string message;
};

// The tree, its nodes linked ($refs included) but not yet checked for cycles or cost
// (schema_graph.h); or the first problem found.
std::unique_ptr<CompiledTree> BuildTree(const nlohmann::json& schema, Problem& problem);

// The most distinct regular expressions (pattern, patternProperties) one schema may hold,
// and the memory RE2 may use for each: together they bound a schema's regex memory.
inline constexpr size_t kMaxPatterns = 64;
inline constexpr int64_t kPatternMemory = 128 << 10;

// The JSON Pointer of `target`, a value within `doc` ("" when it is `doc` or not in it).
// A walk of `doc`: for naming a problem, not for every node.
std::string PointerTo(const nlohmann::json& doc, const nlohmann::json* target);

// The most instructions a pattern may compile to, forwards and backwards. A larger
// program leaves no room in kPatternMemory for 20 of RE2's DFA states, the least RE2 will
// start its DFA with; a smaller one is also probed, as its byte classes count too.
inline constexpr int kMaxPatternProgram = 200;

// The most pattern work (bytes scanned times the pattern's instructions, summed over the
// scans) one validation may do. RE2 falls back from its DFA to its NFA when a text makes
// the DFA build a state every few bytes; then a scan costs about 8 ns per byte and
// instruction on this project's 2-core test machine (Release), up to 24 ns under load:
// this bound keeps a validation's pattern work within 8 to 25 ms, beside kMaxWork's
// checks (docs/security.md has the measures). A payload that
// would need more is refused, unchecked further. A format (schema_formats.h) costs none
// of it.
inline constexpr size_t kMaxPatternWork = 1'000'000;

// A JSON Pointer token, escaped (~0, ~1).
std::string PointerToken(std::string_view token);

}  // namespace webhookd::schema
