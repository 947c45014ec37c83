#include "core/inbound_source.h"

#include <algorithm>

#include "base/encoding.h"
#include "core/validation.h"

namespace webhookd {

std::string_view InboundProviderName(InboundProvider provider) {
  switch (provider) {
    case InboundProvider::kStripe:
      return "stripe";
    case InboundProvider::kGithub:
      return "github";
    case InboundProvider::kShopify:
      return "shopify";
    case InboundProvider::kSlack:
      return "slack";
    case InboundProvider::kTwilio:
      return "twilio";
    case InboundProvider::kStandardWebhooks:
      return "standard-webhooks";
    case InboundProvider::kHmac:
      return "hmac";
  }
  return "hmac";
}

std::optional<InboundProvider> ParseInboundProvider(std::string_view name) {
  for (const InboundProvider provider :
       {InboundProvider::kStripe, InboundProvider::kGithub, InboundProvider::kShopify,
        InboundProvider::kSlack, InboundProvider::kTwilio, InboundProvider::kStandardWebhooks,
        InboundProvider::kHmac}) {
    if (name == InboundProviderName(provider)) return provider;
  }
  return std::nullopt;
}

std::string_view HmacAlgorithmName(HmacAlgorithm algorithm) {
  switch (algorithm) {
    case HmacAlgorithm::kSha1:
      return "sha1";
    case HmacAlgorithm::kSha256:
      return "sha256";
    case HmacAlgorithm::kSha512:
      return "sha512";
  }
  return "sha256";
}

std::optional<HmacAlgorithm> ParseHmacAlgorithm(std::string_view name) {
  if (name == "sha1") return HmacAlgorithm::kSha1;
  if (name == "sha256") return HmacAlgorithm::kSha256;
  if (name == "sha512") return HmacAlgorithm::kSha512;
  return std::nullopt;
}

std::string_view SignatureEncodingName(SignatureEncoding encoding) {
  switch (encoding) {
    case SignatureEncoding::kHex:
      return "hex";
    case SignatureEncoding::kBase64:
      return "base64";
  }
  return "hex";
}

std::optional<SignatureEncoding> ParseSignatureEncoding(std::string_view name) {
  if (name == "hex") return SignatureEncoding::kHex;
  if (name == "base64") return SignatureEncoding::kBase64;
  return std::nullopt;
}

std::string_view TypePrefix(const SourceSettings& settings) {
  if (!settings.type_prefix.empty()) return settings.type_prefix;
  return InboundProviderName(settings.provider);
}

std::vector<FieldError> SourceSettingsErrors(const SourceSettings& settings) {
  std::vector<FieldError> errors;
  const bool hmac = settings.provider == InboundProvider::kHmac;
  // The prefix is checked as the start of a type: "<prefix>.x" must be a valid type of
  // the producer's own (webhookd.* is webhookd's).
  if (!settings.type_prefix.empty()) {
    const std::string probe = settings.type_prefix + ".x";
    if (!IsValidEventType(probe) || IsReservedEventType(probe)) {
      errors.push_back(
          {"type_prefix", "must be characters of A-Z a-z 0-9 . _ : - and not webhookd"});
    }
  }
  if (settings.tolerance < Duration::zero() || settings.tolerance > kMaxInboundTolerance) {
    errors.push_back({"tolerance", "must be from 0s to 1h"});
  }
  if (settings.provider == InboundProvider::kTwilio) {
    const std::string_view url = settings.url;
    const bool web = url.starts_with("https://") || url.starts_with("http://");
    const size_t host = url.find("://") + 3;
    if (!web || url.size() <= host || url[host] == '/' || !IsValidHeaderValue(url) ||
        url.find_first_of(" \t#") != std::string_view::npos) {
      errors.push_back({"url", "must be the http(s) URL Twilio is configured to call"});
    }
  } else if (!settings.url.empty()) {
    errors.push_back({"url", "only for provider twilio"});
  }
  if (hmac) {
    if (!IsValidHeaderName(settings.hmac.header)) {
      errors.push_back({"hmac.header", "must be a header name"});
    }
    if (!IsValidHeaderValue(settings.hmac.prefix) || settings.hmac.prefix.starts_with(' ') ||
        settings.hmac.prefix.starts_with('\t')) {
      errors.push_back({"hmac.prefix", "must be visible ASCII, not starting with white space"});
    }
    if (settings.event_type.empty() ||
        !IsValidEventType(std::string(TypePrefix(settings)) + "." + settings.event_type)) {
      errors.push_back({"event_type", "must be an event type (A-Z a-z 0-9 . _ : -)"});
    }
    if (!settings.dedupe_header.empty() && !IsValidHeaderName(settings.dedupe_header)) {
      errors.push_back({"dedupe_header", "must be a header name"});
    }
  } else {
    if (!settings.hmac.header.empty() || !settings.hmac.prefix.empty()) {
      errors.push_back({"hmac", "only for provider hmac"});
    }
    if (!settings.event_type.empty()) errors.push_back({"event_type", "only for provider hmac"});
    if (!settings.dedupe_header.empty()) {
      errors.push_back({"dedupe_header", "only for provider hmac"});
    }
  }
  return errors;
}

std::optional<std::string> SourceSecretError(InboundProvider provider, std::string_view secret) {
  constexpr size_t kMaxSecretLength = 1024;
  // A provider's dashboard may let its user type any text (GitHub does), spaces included.
  const bool printable = std::none_of(secret.begin(), secret.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (secret.empty() || secret.size() > kMaxSecretLength || !printable || !IsValidUtf8(secret)) {
    return "must be 1-1024 bytes of UTF-8 without control characters";
  }
  if (provider == InboundProvider::kStandardWebhooks) {
    std::string_view text = secret;
    if (text.starts_with("whsec_")) text.remove_prefix(6);
    const std::optional<std::string> key = Base64Decode(text);
    if (!key || key->size() < 24 || key->size() > 64) {
      return "must be \"whsec_\" and the base64 of 24 to 64 bytes, as the sender shows it";
    }
  }
  return std::nullopt;
}

}  // namespace webhookd
