#pragma once

#include <string_view>

#include "core/api_key.h"
#include "core/store.h"

namespace webhookd {

// Bearer API keys: looked up by their SHA-256, compared in constant time.
class Authenticator {
 public:
  explicit Authenticator(Store& store) : store_(store) {}

  // kUnauthorized with one message for a missing, malformed, unknown or revoked key (so
  // an answer tells a caller nothing about which); kForbidden when the key's role is not
  // `needed` or above; kUnavailable when the database is down.
  Result<void> Check(std::string_view authorization_header, Role needed);

 private:
  Store& store_;
};

}  // namespace webhookd
