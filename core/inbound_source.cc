#include "core/inbound_source.h"

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

}  // namespace webhookd
