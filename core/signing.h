#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace webhookd {

// A destination's signing secret: "whsec_" + base64 of 24..64 raw bytes.
inline constexpr std::string_view kSecretPrefix = "whsec_";

// A new secret: "whsec_" + base64 of 32 bytes from RAND_bytes.
std::string GenerateSecret();

// The raw key bytes of a secret; kInvalid unless it is "whsec_" + base64 of 24..64 bytes.
Result<std::string> DecodeSecret(std::string_view secret);

// Returns "v1,<base64 HMAC-SHA256>" keyed with `key` (raw bytes, see DecodeSecret) over
// "<id>.<timestamp>.<body>" (Standard Webhooks).
std::string Sign(std::string_view key, std::string_view id, int64_t unix_seconds,
                 std::string_view body);

// The webhook-signature header: one "v1,<signature>" per secret, in the order given,
// separated by single spaces (Standard Webhooks). kInvalid when the first (current)
// secret is unusable; an unusable earlier one is left out.
Result<std::string> SignatureHeader(const std::vector<std::string>& secrets, std::string_view id,
                                    int64_t unix_seconds, std::string_view body);

}  // namespace webhookd
