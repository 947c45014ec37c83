#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace webhookd {

// Public ids are a kind prefix and the row key: "evt_42". The prefix tells a reader what
// an id names and makes an id of one kind useless as another.
inline constexpr std::string_view kDestinationPrefix = "dst_";
inline constexpr std::string_view kEventPrefix = "evt_";
inline constexpr std::string_view kDeliveryPrefix = "dlv_";
inline constexpr std::string_view kDeadLetterPrefix = "dlq_";
inline constexpr std::string_view kApiKeyPrefix = "key_";
inline constexpr std::string_view kErasurePrefix = "era_";
inline constexpr std::string_view kSourcePrefix = "src_";

std::string FormatId(std::string_view prefix, int64_t id);
// nullopt unless `text` is `prefix` followed by a positive decimal without leading zeros
// that fits in int64.
std::optional<int64_t> ParseId(std::string_view prefix, std::string_view text);

}  // namespace webhookd
