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

namespace {
constexpr std::array<std::string_view, 2> kOrderingNames = {"none", "fifo"};
constexpr std::array<std::string_view, 2> kOnDeadLetterNames = {"continue", "block"};
}  // namespace

std::string_view OrderingName(Ordering ordering) {
  return kOrderingNames[static_cast<size_t>(ordering)];
}

std::optional<Ordering> ParseOrdering(std::string_view name) {
  for (size_t i = 0; i < kOrderingNames.size(); ++i) {
    if (kOrderingNames[i] == name) return static_cast<Ordering>(i);
  }
  return std::nullopt;
}

std::string_view OnDeadLetterName(OnDeadLetter on_dead_letter) {
  return kOnDeadLetterNames[static_cast<size_t>(on_dead_letter)];
}

std::optional<OnDeadLetter> ParseOnDeadLetter(std::string_view name) {
  for (size_t i = 0; i < kOnDeadLetterNames.size(); ++i) {
    if (kOnDeadLetterNames[i] == name) return static_cast<OnDeadLetter>(i);
  }
  return std::nullopt;
}

}  // namespace webhookd
