#include "core/header_lookup.h"

#include "base/strings.h"

namespace webhookd {

std::vector<std::string_view> HeaderLookup::Values(std::string_view name) const {
  std::vector<std::string_view> values;
  for (const auto& [header, value] : headers_) {
    if (EqualsIgnoreCase(header, name)) values.emplace_back(value);
  }
  return values;
}

}  // namespace webhookd
