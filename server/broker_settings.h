#pragma once

// The `broker` member of a destination (docs/brokers.md): its JSON in and out, and which
// settings fit which transport.

#include <optional>
#include <vector>

#include "base/result.h"
#include "core/broker.h"
#include "core/destination.h"
#include "net/broker_url.h"
#include "server/json_codec.h"

namespace webhookd {

// `broker`: null (none) or an object of the settings, each checked for its own form; a
// username or password of "set" keeps the stored one (the caller checks there is one).
void ParseBrokerMember(const Json& value, DestinationFields& out, std::vector<FieldError>& errors);

// The view: the settings given, the username and password "set" when there are some.
Json BrokerSettingsJson(const std::optional<BrokerSettings>& broker);

// What of `broker` does not fit a url at `address`: a setting of another transport
// ("broker.topic is not a setting of a redis url"), a missing one a transport needs
// (redis: stream; kafka: topic), any settings at all on an http url, or a scheme this
// build cannot carry (rediss: Debian's hiredis 0.14 has no TLS). Empty: it fits.
std::vector<FieldError> BrokerSettingsProblems(const DestinationAddress& address,
                                               const std::optional<BrokerSettings>& broker);

}  // namespace webhookd
