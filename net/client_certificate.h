#pragma once

// Client certificates for mutual TLS (docs/egress.md): what a destination's `tls` holds,
// checked when it is stored so that a delivery never finds it unusable.

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/result.h"

namespace webhookd {

// Parses PEM text: `client_certificate` (a certificate, possibly followed by its chain)
// with `client_key` (its private key, unencrypted), both or neither, and `ca_certificate`
// (one or more CA certificates), each if given. kInvalid naming the field at fault
// ("tls.client_key"): PEM that does not parse, one of the pair without the other, or a
// key that does not match the certificate. On success, when the client certificate
// expires (nullopt without one).
Result<std::optional<Timestamp>> CheckTlsSettings(
    const std::optional<std::string>& client_certificate,
    const std::optional<std::string>& client_key, const std::optional<std::string>& ca_certificate);

// When a PEM certificate expires; nullopt if it does not parse.
std::optional<Timestamp> CertificateExpiry(const std::string& pem);

}  // namespace webhookd
