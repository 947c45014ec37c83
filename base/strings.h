#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace webhookd {

// ASCII lower case; other bytes unchanged.
std::string Lower(std::string_view text);

// ASCII case-insensitive equality.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Whether `text` begins with `prefix`, ASCII case-insensitively (header names, schemes).
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix);

// `text` without the leading and trailing bytes that are in `chars`.
std::string_view Trim(std::string_view text, std::string_view chars = " \t");

// A decimal of digits alone (no sign, spaces or trailing characters) within [min, max].
std::optional<int64_t> ParseBoundedInt(std::string_view text, int64_t min, int64_t max);

}  // namespace webhookd
