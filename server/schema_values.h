#pragma once

// JSON values compared by value, as JSON Schema compares them (enum, const, uniqueItems):
// 1 and 1.0 are equal, whatever nlohmann stored them as, and integers beyond int64 keep
// their exact value.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace webhookd::schema {

// -1, 0 or 1. Numbers compare exactly (long double holds every int64, uint64 and double on
// x86-64); else null < booleans < numbers < strings < arrays < objects, arrays element by
// element, objects by size, then member by member in key order.
int CompareValues(const nlohmann::json& a, const nlohmann::json& b);
int CompareNumbers(const nlohmann::json& a, const nlohmann::json& b);

// A number without a fractional part: 1, 1.0, 12345678901234567890 and 1e300 are integers.
bool IsIntegerValue(const nlohmann::json& number);

// `value` is a multiple of `divisor` (> 0): exactly for integers, within a rounding
// tolerance for others (0.3 is a multiple of 0.1).
bool IsMultipleOf(const nlohmann::json& value, const nlohmann::json& divisor);

// The number of Unicode code points in UTF-8 `text`.
size_t CodePoints(std::string_view text);

}  // namespace webhookd::schema
