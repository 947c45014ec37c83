#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"
#include "core/destination.h"
#include "server/json_codec.h"

namespace webhookd {

// The JSON of destinations (destinations_api): bodies in, views out.

// The fields of a destination body, type-checked and validated except for the URL's
// address (the API checks that with the resolver). `creating` makes url required.
Result<DestinationFields> ParseDestinationFields(const Json& body, bool creating);

// The optional body of POST /v1/destinations/{id}/secret/rotate: {"secret"?,
// "grace_period"?}; `grace` is `default_grace` when absent. An empty body is all defaults.
struct SecretRotation {
  std::optional<std::string> secret;
  Duration grace{0};
};
Result<SecretRotation> ParseSecretRotation(std::string_view body, Duration default_grace);

Json DestinationJson(const Destination& d, int default_max_in_flight, bool with_secret);
Json SecretJson(const std::string& secret);
Json RotatedSecretJson(const std::string& secret, Timestamp previous_valid_until);

}  // namespace webhookd
