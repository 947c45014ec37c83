#include "core/delivery.h"

#include <array>

namespace webhookd {
namespace {
constexpr std::array<std::string_view, 5> kStatusNames = {"pending", "in_flight", "succeeded",
                                                          "dead_lettered", "cancelled"};
}  // namespace

std::string_view DeliveryStatusName(DeliveryStatus status) {
  return kStatusNames[static_cast<size_t>(status)];
}

std::optional<DeliveryStatus> ParseDeliveryStatus(std::string_view name) {
  for (size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == name) return static_cast<DeliveryStatus>(i);
  }
  return std::nullopt;
}

}  // namespace webhookd
