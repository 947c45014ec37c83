#include "core/destination.h"

#include <array>

namespace webhookd {
namespace {
constexpr std::array<std::string_view, 3> kDisabledReasonNames = {"manual", "gone", "failing"};
}  // namespace

std::string_view DisabledReasonName(DisabledReason reason) {
  return kDisabledReasonNames[static_cast<size_t>(reason)];
}

std::optional<DisabledReason> ParseDisabledReason(std::string_view name) {
  for (size_t i = 0; i < kDisabledReasonNames.size(); ++i) {
    if (kDisabledReasonNames[i] == name) return static_cast<DisabledReason>(i);
  }
  return std::nullopt;
}

}  // namespace webhookd
