#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/result.h"

namespace webhookd {

// How many stored credentials (signing secrets, those still in a rotation's grace, custom
// header values) are sealed under each encryption key id; "" counts plaintext.
struct CredentialCensus {
  std::map<std::string, int64_t> by_key_id;
};

// The credentials at rest, as a whole (base/secret_box.h seals each one). Thread-safe;
// nothing here throws.
class SecretStore {
 public:
  virtual ~SecretStore() = default;
  virtual Result<CredentialCensus> CountCredentials() = 0;
  // Seals every stored credential that is not under the current key with it, in batches
  // (each a short transaction, so deliveries and the API go on meanwhile). Returns how
  // many values it rewrote. Fails without writing a batch that holds a value it cannot
  // open.
  virtual Result<int64_t> ReencryptCredentials() = 0;
};

}  // namespace webhookd
