#pragma once

// A source (docs/inbound.md): an address a third party sends its webhooks to, and what
// webhookd needs to know to verify them the provider's own way.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"

namespace webhookd {

enum class InboundProvider {
  kStripe,
  kGithub,
  kShopify,
  kSlack,
  kTwilio,
  kStandardWebhooks,  // and Svix, whose headers are read the same way
  kHmac,              // any sender of an HMAC of the body in one header
};

// "stripe", "github", "shopify", "slack", "twilio", "standard-webhooks", "hmac".
std::string_view InboundProviderName(InboundProvider provider);
std::optional<InboundProvider> ParseInboundProvider(std::string_view name);

enum class HmacAlgorithm { kSha1, kSha256, kSha512 };
std::string_view HmacAlgorithmName(HmacAlgorithm algorithm);  // "sha1", "sha256", "sha512"
std::optional<HmacAlgorithm> ParseHmacAlgorithm(std::string_view name);

enum class SignatureEncoding { kHex, kBase64 };
std::string_view SignatureEncodingName(SignatureEncoding encoding);  // "hex", "base64"
std::optional<SignatureEncoding> ParseSignatureEncoding(std::string_view name);

// How a kHmac source's sender signs: `header` carries `prefix` followed by the HMAC of
// the body, encoded.
struct HmacScheme {
  std::string header;
  HmacAlgorithm algorithm = HmacAlgorithm::kSha256;
  SignatureEncoding encoding = SignatureEncoding::kHex;
  std::string prefix;  // e.g. "sha256="; empty: the header is the encoded HMAC alone
};

inline constexpr Duration kDefaultInboundTolerance = std::chrono::minutes(5);
inline constexpr Duration kMaxInboundTolerance = std::chrono::hours(1);

// What verification reads of a source; its secrets travel beside it (a source has a
// current one and, during a rotation's grace period, the previous one).
struct SourceSettings {
  InboundProvider provider = InboundProvider::kHmac;
  // Every event type starts with this and "."; empty: the provider's name.
  std::string type_prefix;
  // Timestamped schemes (stripe, slack, standard-webhooks) refuse a request whose
  // timestamp is further than this from now, in either direction.
  Duration tolerance = kDefaultInboundTolerance;
  // twilio: the URL Twilio is configured to call, which it signs.
  std::string url;
  // hmac: the scheme, the type of every event, and the header naming a request once
  // (empty: none, every request is new).
  HmacScheme hmac;
  std::string event_type;
  std::string dedupe_header;
};

// The type prefix in force: the source's own, else the provider's name.
std::string_view TypePrefix(const SourceSettings& settings);

// What a source's settings break, one FieldError per field ("type_prefix", "tolerance",
// "url", "hmac.header", "hmac.prefix", "event_type", "dedupe_header"); empty when none.
// A field that belongs to another provider (url beside twilio, the hmac fields beside
// hmac) is refused rather than ignored, as an unknown member is.
std::vector<FieldError> SourceSettingsErrors(const SourceSettings& settings);

// Why `secret` cannot verify `provider`'s requests, or nullopt. Every provider takes
// 1-1024 bytes of UTF-8 without control characters, used as is as its HMAC key;
// standard-webhooks takes "whsec_" (optional) and the base64 of 24-64 bytes, its key.
std::optional<std::string> SourceSecretError(InboundProvider provider, std::string_view secret);

}  // namespace webhookd
