#pragma once

// The door of an inbound source (docs/inbound.md): whether a request is the provider's
// own, checked its way on the exact bytes received, and if so what event it makes.
// Pure: the caller brings the source's secrets, the request and the time.

#include <cstddef>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "core/header_lookup.h"
#include "core/inbound_source.h"

namespace webhookd {

struct VerifiedRequest {
  std::string event_type;  // the source's type prefix, ".", then the provider's type
  // What names this request once at its provider; nullopt: nothing does (an hmac source
  // without a dedupe_header), every request is new.
  std::optional<std::string> dedupe_key;
  // The event's payload, a JSON object: the body exactly as received, or for a Twilio
  // form body the object of its parameters.
  std::string payload;
  // A Slack url_verification: answer {"challenge": …} and store nothing.
  std::optional<std::string> challenge;
  size_t secret_index = 0;  // which of the secrets given verified it
};

enum class InboundFailure {
  // No signature, a wrong one, a timestamp outside the tolerance: one answer (401)
  // whatever the cause, so a forger learns nothing from it.
  kUnverified,
  // The signature holds but the request is not what the provider sends (400): a body
  // that is not a JSON object, a missing type or duplicate key.
  kMalformed,
};

using VerifyResult = std::expected<VerifiedRequest, InboundFailure>;

// Verifies a request to a source with any of `secrets` (the current one and, during a
// rotation's grace period, the previous), and reads its event only once a signature has
// matched. `query` is the request's query string without "?" (Twilio signs it), `now`
// the time a timestamp is held to. Signatures are compared in constant time.
VerifyResult Verify(const SourceSettings& settings, std::span<const std::string> secrets,
                    const HeaderLookup& headers, std::string_view query, std::string_view body,
                    Timestamp now);

}  // namespace webhookd
