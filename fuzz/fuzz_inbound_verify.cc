// Fuzzes the inbound verifiers (core/inbound_verify.cc): the signature-header parsers on
// any bytes, and, with the request signed here by the provider's formula, what is read
// of a verified request (bodies, forms, types, duplicate keys).
//
// Input: a provider byte, a mode byte, then fields separated by 0x1f: the provider's
// header values in the order of kHeaders below, then the query, then the body (a missing
// field is empty). In signed mode the target replaces the signature header with the right
// one for the secret, so fuzzing reaches past the signature check.
//
// Invariants: unsigned, nothing verifies; signed and verified, the event type is the
// prefix's and valid, the duplicate key valid, the payload a JSON object, the answer the
// same twice, and the body changed by one bit verifies no more.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/encoding.h"
#include "core/inbound_verify.h"
#include "core/json_scan.h"
#include "core/validation.h"
#include "fuzz/fuzz_check.h"

namespace {

using webhookd::InboundProvider;

constexpr int64_t kNow = 1765100000;
const std::string kSecret = "fuzz secret";
// Standard Webhooks keys with the base64 after "whsec_".
const std::string kSwSecret = "whsec_" + webhookd::Base64Encode("fuzz secret of 24 bytes!");
const std::string kUrl = "https://hooks.example.com/in/src_fuzz";

struct Provider {
  InboundProvider provider;
  std::vector<std::string> headers;  // the first is the signature header
};

const Provider kProviders[] = {
    {InboundProvider::kStripe, {"Stripe-Signature"}},
    {InboundProvider::kGithub, {"X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery"}},
    {InboundProvider::kShopify,
     {"X-Shopify-Hmac-Sha256", "X-Shopify-Topic", "X-Shopify-Event-Id", "X-Shopify-Webhook-Id"}},
    {InboundProvider::kSlack, {"X-Slack-Signature", "X-Slack-Request-Timestamp"}},
    {InboundProvider::kTwilio, {"X-Twilio-Signature", "I-Twilio-Idempotency-Token"}},
    {InboundProvider::kStandardWebhooks, {"webhook-signature", "webhook-id", "webhook-timestamp"}},
    {InboundProvider::kHmac, {"X-Sig", "X-Delivery"}},
};

std::string Mac(const EVP_MD* digest, std::string_view key, std::string_view message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(digest, key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  return {reinterpret_cast<const char*>(mac), length};
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Twilio's form, decoded as its validator reads it; a bad escape is left as is (the
// verifier refuses it before the signature matters).
std::vector<std::pair<std::string, std::string>> Form(std::string_view text) {
  const auto decode = [](std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '+') {
        out += ' ';
      } else if (s[i] == '%' && i + 2 < s.size() && Hex(s[i + 1]) >= 0 && Hex(s[i + 2]) >= 0) {
        out += static_cast<char>(Hex(s[i + 1]) * 16 + Hex(s[i + 2]));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  };
  std::vector<std::pair<std::string, std::string>> params;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view pair = text.substr(start, end - start);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      params.emplace_back(decode(pair.substr(0, eq)),
                          eq == std::string_view::npos ? "" : decode(pair.substr(eq + 1)));
    }
    start = end + 1;
  }
  std::sort(params.begin(), params.end());
  params.erase(std::unique(params.begin(), params.end()), params.end());
  return params;
}

// The signature header the provider would send for this request.
std::string Signature(InboundProvider provider, const std::vector<std::string>& fields,
                      std::string_view query, std::string_view body) {
  const auto field = [&](size_t i) { return i < fields.size() ? fields[i] : std::string(); };
  switch (provider) {
    case InboundProvider::kStripe: {
      // The timestamp comes from the signature field itself: "t" followed by digits.
      const std::string t = std::to_string(kNow - static_cast<int64_t>(field(0).size() % 300));
      return "t=" + t +
             ",v1=" + webhookd::HexEncode(Mac(EVP_sha256(), kSecret, t + "." + std::string(body)));
    }
    case InboundProvider::kGithub:
      return "sha256=" + webhookd::HexEncode(Mac(EVP_sha256(), kSecret, body));
    case InboundProvider::kShopify:
      return webhookd::Base64Encode(Mac(EVP_sha256(), kSecret, body));
    case InboundProvider::kSlack:
      return "v0=" + webhookd::HexEncode(
                         Mac(EVP_sha256(), kSecret, "v0:" + field(1) + ":" + std::string(body)));
    case InboundProvider::kTwilio: {
      std::string data = kUrl;
      if (!query.empty()) data += "?" + std::string(query);
      if (query.find("bodySHA256") == std::string_view::npos) {
        for (const auto& [name, value] : Form(body)) data += name + value;
      }
      return webhookd::Base64Encode(Mac(EVP_sha1(), kSecret, data));
    }
    case InboundProvider::kStandardWebhooks:
      return "v1," +
             webhookd::Base64Encode(Mac(EVP_sha256(), "fuzz secret of 24 bytes!",
                                        field(1) + "." + field(2) + "." + std::string(body)));
    case InboundProvider::kHmac:
      return "s=" + webhookd::HexEncode(Mac(EVP_sha256(), kSecret, body));
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Provider& p = kProviders[data[0] % std::size(kProviders)];
  const bool sign = (data[1] & 1) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);

  std::vector<std::string> fields;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t end = rest.find('\x1f', start);
    if (end == std::string_view::npos) end = rest.size();
    fields.emplace_back(rest.substr(start, end - start));
    start = end + 1;
  }
  fields.resize(std::max(fields.size(), p.headers.size() + 2));
  std::string query = fields[p.headers.size()];
  std::string body = fields[p.headers.size() + 1];
  // A query of "bodySHA256" alone, signed, asks for Twilio's JSON form: the body's hash.
  if (sign && query == "bodySHA256") query += "=" + webhookd::HexEncode(webhookd::Sha256(body));

  webhookd::SourceSettings settings;
  settings.provider = p.provider;
  settings.url = kUrl;
  settings.hmac = {"X-Sig", webhookd::HmacAlgorithm::kSha256, webhookd::SignatureEncoding::kHex,
                   "s="};
  settings.event_type = "fuzz.event";
  settings.dedupe_header = "X-Delivery";
  const std::vector<std::string> secrets = {
      p.provider == InboundProvider::kStandardWebhooks ? kSwSecret : kSecret};

  std::vector<std::string> values(fields.begin(), fields.begin() + p.headers.size());
  if (sign) values[0] = Signature(p.provider, fields, query, body);
  webhookd::HeaderLookup headers;
  for (size_t i = 0; i < p.headers.size(); ++i) headers.Add(p.headers[i], values[i]);

  const webhookd::Timestamp now{std::chrono::seconds(kNow)};
  const webhookd::VerifyResult result =
      webhookd::Verify(settings, secrets, headers, query, body, now);
  if (!sign) {
    FUZZ_CHECK(!result.has_value());
    return 0;
  }
  const webhookd::VerifyResult again =
      webhookd::Verify(settings, secrets, headers, query, body, now);
  FUZZ_CHECK(again.has_value() == result.has_value());
  if (!result) {
    FUZZ_CHECK(again.error() == result.error());
    return 0;
  }
  FUZZ_CHECK(again->event_type == result->event_type && again->payload == result->payload &&
             again->dedupe_key == result->dedupe_key && again->challenge == result->challenge);

  const std::string prefix = std::string(webhookd::InboundProviderName(p.provider)) + ".";
  FUZZ_CHECK(result->event_type.starts_with(prefix));
  FUZZ_CHECK(webhookd::IsValidEventType(result->event_type));
  if (result->dedupe_key) FUZZ_CHECK(webhookd::IsValidOrderingKey(*result->dedupe_key));
  if (!result->challenge) {
    FUZZ_CHECK(webhookd::ScanJsonObject(result->payload, webhookd::kMaxJsonDepth).has_value());
  }

  // Signed over the exact bytes: one bit changed, nothing verifies. A Twilio form is
  // signed over its decoded parameters, which "%4a" and "%4A" share, so it is left out
  // (a form's payload is the object made of it, never the body itself).
  const bool form = p.provider == InboundProvider::kTwilio && result->payload != body;
  if (!body.empty() && !form) {
    body[body.size() / 2] ^= 1;
    const webhookd::VerifyResult tampered =
        webhookd::Verify(settings, secrets, headers, query, body, now);
    FUZZ_CHECK(!tampered.has_value() && tampered.error() == webhookd::InboundFailure::kUnverified);
  }
  return 0;
}
