#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace webhookd {

// A validating JSON scanner that hands back where each top-level member's value lies in the
// input instead of building a tree: the bytes of a value can then be stored exactly as posted
// (integers of any size, key order, whitespace and escapes unchanged).

enum class JsonKind { kObject, kArray, kString, kNumber, kTrue, kFalse, kNull };

struct JsonMember {
  std::string key;       // decoded: escapes resolved, \uXXXX (surrogate pairs included) as UTF-8
  JsonKind kind;         // of the value
  std::string_view raw;  // the value's exact bytes in the input, without surrounding whitespace
};

// Validates `text` as exactly one RFC 8259 JSON text and returns the members of its top-level
// object in input order, every one of a duplicated key included (callers decide what a
// duplicate means). Strict beyond the grammar in the ways a stored payload needs: strings must
// be valid UTF-8 (no overlong forms, no UTF-8-encoded surrogates, nothing above U+10FFFF), and a
// \uXXXX surrogate must be one half of a pair, so every decoded string is valid UTF-8. A UTF-8
// byte order mark before the value is skipped (RFC 8259 section 8.1 allows that, and the parser
// used before this one did it too). Numbers are checked against the grammar only: 1e400 and
// 123456789012345678901234567890 are valid.
//
// Nesting is counted without recursion, so a deeply nested input cannot exhaust the stack; the
// top-level object is level 1 and at most `max_depth` levels are allowed.
//
// Errors, the first that applies:
//   kMalformed "invalid JSON at byte N: <what>" (N counts from 0) when `text` is not JSON;
//   kInvalid   "JSON nested deeper than <max_depth> levels";
//   kInvalid   "the body must be a JSON object" when `text` is valid JSON of another type.
// Both kInvalid errors carry one FieldError for the field "body".
Result<std::vector<JsonMember>> ScanJsonObject(std::string_view text, int max_depth);

// Validates and decodes one JSON string value given with its quotes, e.g. the `raw` of a
// kString member. kMalformed "invalid JSON string at byte N: <what>" otherwise.
Result<std::string> DecodeJsonString(std::string_view raw);

}  // namespace webhookd
