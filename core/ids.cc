#include "core/ids.h"

#include <charconv>

namespace webhookd {

std::string FormatId(std::string_view prefix, int64_t id) {
  return std::string(prefix) + std::to_string(id);
}

std::optional<int64_t> ParseId(std::string_view prefix, std::string_view text) {
  if (!text.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = text.substr(prefix.size());
  if (digits.empty() || digits.size() > 19 || digits.front() == '0') return std::nullopt;
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size() || id <= 0) return std::nullopt;
  return id;
}

}  // namespace webhookd
