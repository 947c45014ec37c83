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

// `value` is a multiple of `divisor` (> 0), exactly, each read as the decimal it was
// written as: 0.3 is a multiple of 0.1, 12391239123 of 1e-8, and 1e308 is not one of
// 0.123456789. Bounded: a few hundred steps at most, whatever the exponents.
bool IsMultipleOf(const nlohmann::json& value, const nlohmann::json& divisor);

// The number of Unicode code points in UTF-8 `text`.
size_t CodePoints(std::string_view text);

}  // namespace webhookd::schema
