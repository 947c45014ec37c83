#pragma once

#include <vector>

#include "base/result.h"
#include "core/destination.h"

namespace webhookd {

// The write-only values of a destination (its custom header values, `tls.client_key`,
// `auth.client_secret`, `broker.username`, `broker.password`) were given for one receiver.
// A PATCH that moves `url` to another origin (scheme, hosts or ports; a new path is the
// same receiver), or `auth.token_url` anywhere else, while keeping such a value it did not
// send again would hand the value to whoever the new address belongs to: a key that may
// PATCH is not a key that knows them.
//
// One error per value `patch` would carry over from `stored` that way ("headers.<name>",
// "tls.client_key", "auth.client_secret", "broker.username", "broker.password"); none when
// nothing moves or every kept value is sent again (or removed). A value is kept when the
// patch leaves its field out, or sends "set" for it.
std::vector<FieldError> CarriedCredentials(const Destination& stored,
                                           const DestinationFields& patch);

}  // namespace webhookd
