#include "core/inbound_verify.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/encoding.h"

namespace webhookd::inbound_verify_test {
namespace {

// The signatures below are made here with OpenSSL and each provider's documented formula;
// tests/inbound/vectors.json holds requests signed by the providers' own SDKs.

constexpr int64_t kNow = 1765100000;

Timestamp At(int64_t unix_seconds) { return Timestamp(std::chrono::seconds(unix_seconds)); }

std::string Mac(const EVP_MD* digest, std::string_view key, std::string_view message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(digest, key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  return {reinterpret_cast<const char*>(mac), length};
}
std::string HexMac(std::string_view key, std::string_view message) {
  return HexEncode(Mac(EVP_sha256(), key, message));
}
std::string Base64Mac(std::string_view key, std::string_view message) {
  return Base64Encode(Mac(EVP_sha256(), key, message));
}

SourceSettings Settings(InboundProvider provider) {
  SourceSettings settings;
  settings.provider = provider;
  return settings;
}

std::string Flip(std::string text, size_t at) {
  text[at] ^= 1;
  return text;
}

struct Request {
  HeaderLookup headers;
  std::string body;
  std::string query;
};

VerifyResult Check(const SourceSettings& settings, const std::vector<std::string>& secrets,
                   const Request& request, int64_t now = kNow) {
  return Verify(settings, secrets, request.headers, request.query, request.body, At(now));
}

testing::AssertionResult FailsWith(const VerifyResult& result, InboundFailure failure) {
  if (result.has_value())
    return testing::AssertionFailure() << "verified as " << result->event_type;
  if (result.error() != failure) {
    return testing::AssertionFailure() << "failed with " << static_cast<int>(result.error());
  }
  return testing::AssertionSuccess();
}
#define EXPECT_FAILS(result, failure) EXPECT_TRUE(FailsWith((result), InboundFailure::failure))

TEST(InboundProviderTest, NamesParseBack) {
  for (const InboundProvider provider :
       {InboundProvider::kStripe, InboundProvider::kGithub, InboundProvider::kShopify,
        InboundProvider::kSlack, InboundProvider::kTwilio, InboundProvider::kStandardWebhooks,
        InboundProvider::kHmac}) {
    EXPECT_EQ(ParseInboundProvider(InboundProviderName(provider)), provider);
  }
  EXPECT_EQ(InboundProviderName(InboundProvider::kStandardWebhooks), "standard-webhooks");
  EXPECT_FALSE(ParseInboundProvider("Stripe").has_value());
  EXPECT_FALSE(ParseInboundProvider("svix").has_value());
  EXPECT_EQ(ParseHmacAlgorithm("sha512"), HmacAlgorithm::kSha512);
  EXPECT_FALSE(ParseHmacAlgorithm("md5").has_value());
  EXPECT_EQ(ParseSignatureEncoding("base64"), SignatureEncoding::kBase64);
  EXPECT_FALSE(ParseSignatureEncoding("base64url").has_value());
  SourceSettings settings = Settings(InboundProvider::kShopify);
  EXPECT_EQ(TypePrefix(settings), "shopify");
  settings.type_prefix = "shop";
  EXPECT_EQ(TypePrefix(settings), "shop");
}

// ---- Stripe

constexpr std::string_view kStripeSecret = "whsec_stripe_current";
constexpr std::string_view kStripeBody =
    R"({"id":"evt_1","object":"event","type":"invoice.paid","data":{"object":{}}})";

Request StripeRequest(std::string_view secret, int64_t t,
                      std::string body = std::string(kStripeBody)) {
  const std::string v1 = HexMac(secret, std::to_string(t) + "." + body);
  return {{{"Stripe-Signature", "t=" + std::to_string(t) + ",v1=" + v1}}, std::move(body), ""};
}

TEST(StripeVerifyTest, ItsSignatureMakesTheBodysTypeAndId) {
  const VerifyResult result =
      Check(Settings(InboundProvider::kStripe), {std::string(kStripeSecret)},
            StripeRequest(kStripeSecret, kNow - 10));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "stripe.invoice.paid");
  EXPECT_EQ(result->dedupe_key, "evt_1");
  EXPECT_EQ(result->payload, kStripeBody);
  EXPECT_FALSE(result->challenge.has_value());
  EXPECT_EQ(result->secret_index, 0u);
}

TEST(StripeVerifyTest, WrongSecretTamperedBodyOrNoHeaderIsUnverified) {
  const SourceSettings settings = Settings(InboundProvider::kStripe);
  const std::vector<std::string> secrets = {std::string(kStripeSecret)};
  EXPECT_FAILS(Check(settings, secrets, StripeRequest("whsec_other", kNow)), kUnverified);
  Request tampered = StripeRequest(kStripeSecret, kNow);
  tampered.body = Flip(tampered.body, 20);
  EXPECT_FAILS(Check(settings, secrets, tampered), kUnverified);
  Request unsigned_request = StripeRequest(kStripeSecret, kNow);
  unsigned_request.headers = {};
  EXPECT_FAILS(Check(settings, secrets, unsigned_request), kUnverified);
  EXPECT_FAILS(Check(settings, {}, StripeRequest(kStripeSecret, kNow)), kUnverified);
}

TEST(StripeVerifyTest, TimestampHeldToTheToleranceBothWays) {
  SourceSettings settings = Settings(InboundProvider::kStripe);
  const std::vector<std::string> secrets = {std::string(kStripeSecret)};
  EXPECT_TRUE(Check(settings, secrets, StripeRequest(kStripeSecret, kNow - 300)).has_value());
  EXPECT_TRUE(Check(settings, secrets, StripeRequest(kStripeSecret, kNow + 300)).has_value());
  EXPECT_FAILS(Check(settings, secrets, StripeRequest(kStripeSecret, kNow - 301)), kUnverified);
  EXPECT_FAILS(Check(settings, secrets, StripeRequest(kStripeSecret, kNow + 301)), kUnverified);
  settings.tolerance = std::chrono::hours(1);
  EXPECT_TRUE(Check(settings, secrets, StripeRequest(kStripeSecret, kNow - 3600)).has_value());
  settings.tolerance = Duration(0);
  EXPECT_TRUE(Check(settings, secrets, StripeRequest(kStripeSecret, kNow)).has_value());
  EXPECT_FAILS(Check(settings, secrets, StripeRequest(kStripeSecret, kNow - 1)), kUnverified);
}

TEST(StripeVerifyTest, AnyV1MatchesWhitespaceAndCaseAside) {
  const SourceSettings settings = Settings(InboundProvider::kStripe);
  const std::vector<std::string> secrets = {std::string(kStripeSecret)};
  const std::string t = std::to_string(kNow);
  std::string v1 = HexMac(kStripeSecret, t + "." + std::string(kStripeBody));
  const std::string other = HexMac("whsec_other", t + "." + std::string(kStripeBody));
  std::string upper = v1;
  for (char& c : upper) c = static_cast<char>(toupper(c));
  for (const std::string& header :
       {"t=" + t + ",v1=" + other + ",v1=" + v1, "t=" + t + ",v0=" + other + ",v1=" + v1,
        " t=" + t + " , v1=" + v1 + " ", "v1=" + v1 + ",t=" + t, "t=" + t + ",v1=" + upper}) {
    const Request request{{{"Stripe-Signature", header}}, std::string(kStripeBody), ""};
    EXPECT_TRUE(Check(settings, secrets, request).has_value()) << header;
  }
  for (const std::string& header :
       {"t=" + t + ",v1=" + other, "t=" + t + ",v0=" + v1, "v1=" + v1,
        "t=" + t + ",t=" + t + ",v1=" + v1, "t=" + t + ",v1=" + v1.substr(1),
        "t=+" + t + ",v1=" + v1, "t=" + t + ";v1=" + v1}) {
    const Request request{{{"Stripe-Signature", header}}, std::string(kStripeBody), ""};
    EXPECT_FAILS(Check(settings, secrets, request), kUnverified);
  }
  // The header sent twice is ambiguous, even when both copies are the same.
  const Request twice{
      {{"Stripe-Signature", "t=" + t + ",v1=" + v1}, {"stripe-signature", "t=" + t + ",v1=" + v1}},
      std::string(kStripeBody),
      ""};
  EXPECT_FAILS(Check(settings, secrets, twice), kUnverified);
}

TEST(StripeVerifyTest, PreviousSecretVerifiesDuringItsGrace) {
  const std::vector<std::string> secrets = {"whsec_stripe_new", std::string(kStripeSecret)};
  const VerifyResult result =
      Check(Settings(InboundProvider::kStripe), secrets, StripeRequest(kStripeSecret, kNow));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->secret_index, 1u);
  const VerifyResult current =
      Check(Settings(InboundProvider::kStripe), secrets, StripeRequest("whsec_stripe_new", kNow));
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->secret_index, 0u);
}

TEST(StripeVerifyTest, AVerifiedBodyThatIsNotAnEventIsMalformed) {
  const SourceSettings settings = Settings(InboundProvider::kStripe);
  const std::vector<std::string> secrets = {std::string(kStripeSecret)};
  for (const std::string body :
       {"not json", "[]", R"({"id":"evt_1"})", R"({"type":"invoice.paid"})",
        R"({"id":1,"type":"invoice.paid"})", R"({"id":"evt_1","type":"bad type"})",
        R"({"id":"evt_1","id":"evt_2","type":"invoice.paid"})", R"({"id":"","type":"a"})"}) {
    EXPECT_FAILS(Check(settings, secrets, StripeRequest(kStripeSecret, kNow, body)), kMalformed)
        << body;
  }
  // Verification comes first: an unsigned malformed body is unverified, not malformed.
  Request forged = StripeRequest("whsec_other", kNow, "not json");
  EXPECT_FAILS(Check(settings, secrets, forged), kUnverified);
}

// ---- GitHub

constexpr std::string_view kGithubSecret = "github secret";

Request GithubRequest(std::string body, std::string_view secret = kGithubSecret) {
  return {{{"X-GitHub-Event", "issues"},
           {"X-GitHub-Delivery", "d-1"},
           {"X-Hub-Signature-256", "sha256=" + HexMac(secret, body)}},
          std::move(body),
          ""};
}

TEST(GithubVerifyTest, EventHeaderThenActionMakeTheType) {
  const SourceSettings settings = Settings(InboundProvider::kGithub);
  const std::vector<std::string> secrets = {std::string(kGithubSecret)};
  VerifyResult result = Check(settings, secrets, GithubRequest(R"({"action":"opened"})"));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "github.issues.opened");
  EXPECT_EQ(result->dedupe_key, "d-1");
  result = Check(settings, secrets, GithubRequest(R"({"zen":"x"})"));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "github.issues");
}

TEST(GithubVerifyTest, RefusesForgeriesAndMalformedDeliveries) {
  const SourceSettings settings = Settings(InboundProvider::kGithub);
  const std::vector<std::string> secrets = {std::string(kGithubSecret)};
  const std::string body = R"({"action":"opened"})";
  EXPECT_FAILS(Check(settings, secrets, GithubRequest(body, "other")), kUnverified);
  Request tampered = GithubRequest(body);
  tampered.body = Flip(tampered.body, 3);
  EXPECT_FAILS(Check(settings, secrets, tampered), kUnverified);
  // The SHA-1 header alone is not enough.
  Request sha1{{{"X-GitHub-Event", "issues"},
                {"X-GitHub-Delivery", "d-1"},
                {"X-Hub-Signature", "sha1=" + HexEncode(Mac(EVP_sha1(), kGithubSecret, body))}},
               body,
               ""};
  EXPECT_FAILS(Check(settings, secrets, sha1), kUnverified);
  Request no_event{{{"X-GitHub-Delivery", "d-1"},
                    {"X-Hub-Signature-256", "sha256=" + HexMac(kGithubSecret, body)}},
                   body,
                   ""};
  EXPECT_FAILS(Check(settings, secrets, no_event), kMalformed);
  Request no_delivery{{{"X-GitHub-Event", "issues"},
                       {"X-Hub-Signature-256", "sha256=" + HexMac(kGithubSecret, body)}},
                      body,
                      ""};
  EXPECT_FAILS(Check(settings, secrets, no_delivery), kMalformed);
  EXPECT_FAILS(Check(settings, secrets, GithubRequest(R"({"action":7})")), kMalformed);
  EXPECT_FAILS(Check(settings, secrets, GithubRequest("payload=%7B%7D")), kMalformed);
}

// ---- Shopify

constexpr std::string_view kShopifySecret = "shopify secret";

TEST(ShopifyVerifyTest, TopicWithDotsAndTheEventIdElseTheWebhookId) {
  const SourceSettings settings = Settings(InboundProvider::kShopify);
  const std::vector<std::string> secrets = {"new", std::string(kShopifySecret)};
  const std::string body = R"({"id":1})";
  Request request{{{"X-Shopify-Topic", "orders/create"},
                   {"X-Shopify-Hmac-Sha256", Base64Mac(kShopifySecret, body)},
                   {"X-Shopify-Webhook-Id", "w-1"},
                   {"X-Shopify-Event-Id", "e-1"}},
                  body,
                  ""};
  VerifyResult result = Check(settings, secrets, request);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "shopify.orders.create");
  EXPECT_EQ(result->dedupe_key, "e-1");
  EXPECT_EQ(result->secret_index, 1u);

  Request older{{{"X-Shopify-Topic", "app/uninstalled"},
                 {"x-shopify-hmac-sha256", Base64Mac(kShopifySecret, body)},
                 {"X-Shopify-Webhook-Id", "w-1"}},
                body,
                ""};
  result = Check(settings, secrets, older);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "shopify.app.uninstalled");
  EXPECT_EQ(result->dedupe_key, "w-1");

  // The unprefixed headers of Shopify's event deliveries, but not a mix of both families.
  Request events{{{"Shopify-Topic", "orders/paid"},
                  {"shopify-hmac-sha256", Base64Mac(kShopifySecret, body)},
                  {"Shopify-Webhook-Id", "w-2"},
                  {"Shopify-Event-Id", "e-2"}},
                 body,
                 ""};
  result = Check(settings, secrets, events);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "shopify.orders.paid");
  EXPECT_EQ(result->dedupe_key, "e-2");
  Request mixed{{{"Shopify-Topic", "orders/paid"},
                 {"X-Shopify-Hmac-Sha256", Base64Mac(kShopifySecret, body)},
                 {"Shopify-Webhook-Id", "w-2"}},
                body,
                ""};
  EXPECT_FAILS(Check(settings, secrets, mixed), kMalformed);

  Request no_id{{{"X-Shopify-Topic", "orders/create"},
                 {"X-Shopify-Hmac-Sha256", Base64Mac(kShopifySecret, body)}},
                body,
                ""};
  EXPECT_FAILS(Check(settings, secrets, no_id), kMalformed);
}

TEST(ShopifyVerifyTest, RefusesForgeries) {
  const SourceSettings settings = Settings(InboundProvider::kShopify);
  const std::vector<std::string> secrets = {std::string(kShopifySecret)};
  const std::string body = R"({"id":1})";
  const std::string good = Base64Mac(kShopifySecret, body);
  for (const std::string& header : {Base64Mac("other", body), good.substr(0, good.size() - 1),
                                    HexMac(kShopifySecret, body), std::string()}) {
    Request request{{{"X-Shopify-Topic", "orders/create"},
                     {"X-Shopify-Hmac-Sha256", header},
                     {"X-Shopify-Webhook-Id", "w-1"}},
                    body,
                    ""};
    EXPECT_FAILS(Check(settings, secrets, request), kUnverified) << header;
  }
  Request tampered{{{"X-Shopify-Topic", "orders/create"},
                    {"X-Shopify-Hmac-Sha256", good},
                    {"X-Shopify-Webhook-Id", "w-1"}},
                   R"({"id":2})",
                   ""};
  EXPECT_FAILS(Check(settings, secrets, tampered), kUnverified);
}

// ---- Slack

constexpr std::string_view kSlackSecret = "slack signing secret";

Request SlackRequest(std::string body, int64_t t, std::string_view secret = kSlackSecret) {
  const std::string ts = std::to_string(t);
  return {{{"X-Slack-Request-Timestamp", ts},
           {"X-Slack-Signature", "v0=" + HexMac(secret, "v0:" + ts + ":" + body)}},
          std::move(body),
          ""};
}

TEST(SlackVerifyTest, EventTypeAndEventIdElseTheEnvelopesTypeAndTheSignature) {
  const SourceSettings settings = Settings(InboundProvider::kSlack);
  const std::vector<std::string> secrets = {std::string(kSlackSecret)};
  VerifyResult result =
      Check(settings, secrets,
            SlackRequest(R"({"type":"event_callback","event_id":"Ev1","event":{"type":"message"}})",
                         kNow - 60));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "slack.message");
  EXPECT_EQ(result->dedupe_key, "Ev1");

  const std::string body = R"({"type":"app_rate_limited","minute_rate_limited":1})";
  const Request request = SlackRequest(body, kNow);
  result = Check(settings, secrets, request);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->event_type, "slack.app_rate_limited");
  EXPECT_EQ(result->dedupe_key, HexMac(kSlackSecret, "v0:" + std::to_string(kNow) + ":" + body));
  EXPECT_FAILS(Check(settings, secrets, SlackRequest(R"({"event":{}})", kNow)), kMalformed);
  EXPECT_FAILS(Check(settings, secrets, SlackRequest(R"({"type":"x","event":"y"})", kNow)),
               kMalformed);
}

TEST(SlackVerifyTest, UrlVerificationIsAnsweredWithItsChallenge) {
  const VerifyResult result = Check(
      Settings(InboundProvider::kSlack), {std::string(kSlackSecret)},
      SlackRequest(R"({"token":"t","challenge":"3eZbrw1aB","type":"url_verification"})", kNow));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->challenge, "3eZbrw1aB");
  EXPECT_EQ(result->event_type, "slack.url_verification");
  // Unsigned, the challenge is not answered.
  EXPECT_FAILS(Check(Settings(InboundProvider::kSlack), {std::string(kSlackSecret)},
                     SlackRequest(R"({"challenge":"c","type":"url_verification"})", kNow, "x")),
               kUnverified);
  EXPECT_FAILS(Check(Settings(InboundProvider::kSlack), {std::string(kSlackSecret)},
                     SlackRequest(R"({"type":"url_verification"})", kNow)),
               kMalformed);
}

TEST(SlackVerifyTest, RefusesStaleFutureTamperedAndUnsigned) {
  const SourceSettings settings = Settings(InboundProvider::kSlack);
  const std::vector<std::string> secrets = {std::string(kSlackSecret)};
  const std::string body = R"({"type":"event_callback","event":{"type":"message"}})";
  EXPECT_TRUE(Check(settings, secrets, SlackRequest(body, kNow - 300)).has_value());
  EXPECT_FAILS(Check(settings, secrets, SlackRequest(body, kNow - 301)), kUnverified);
  EXPECT_FAILS(Check(settings, secrets, SlackRequest(body, kNow + 301)), kUnverified);
  EXPECT_FAILS(Check(settings, secrets, SlackRequest(body, kNow, "other")), kUnverified);
  Request tampered = SlackRequest(body, kNow);
  tampered.body = Flip(tampered.body, 10);
  EXPECT_FAILS(Check(settings, secrets, tampered), kUnverified);
  // The timestamp is signed: moving it into the tolerance breaks the signature.
  Request moved = SlackRequest(body, kNow - 1000);
  const std::string old_signature(moved.headers.Values("X-Slack-Signature").front());
  moved.headers = {{"X-Slack-Request-Timestamp", std::to_string(kNow)},
                   {"X-Slack-Signature", old_signature}};
  EXPECT_FAILS(Check(settings, secrets, moved), kUnverified);
  Request no_timestamp{{{"X-Slack-Signature",
                         "v0=" + HexMac(kSlackSecret, "v0:" + std::to_string(kNow) + ":" + body)}},
                       body,
                       ""};
  EXPECT_FAILS(Check(settings, secrets, no_timestamp), kUnverified);
}

// ---- Twilio

constexpr std::string_view kTwilioToken = "12345678901234567890123456789012";
constexpr std::string_view kTwilioUrl = "https://hooks.example.com/in/src_tw";

SourceSettings TwilioSettings() {
  SourceSettings settings = Settings(InboundProvider::kTwilio);
  settings.url = kTwilioUrl;
  return settings;
}

std::string TwilioSignature(std::string_view signed_text, std::string_view token = kTwilioToken) {
  return Base64Encode(Mac(EVP_sha1(), token, signed_text));
}

TEST(TwilioVerifyTest, AFormBodyBecomesAnObjectOfItsParameters) {
  const std::string body = "To=%2B1555&From=%2B1666&Body=Hi+there%21&EventType=message.sent";
  const std::string signature = TwilioSignature(
      std::string(kTwilioUrl) + "BodyHi there!EventTypemessage.sentFrom+1666To+1555");
  Request request{
      {{"X-Twilio-Signature", signature}, {"I-Twilio-Idempotency-Token", "tok-1"}}, body, ""};
  VerifyResult result = Check(TwilioSettings(), {std::string(kTwilioToken)}, request);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->payload,
            R"({"To":"+1555","From":"+1666","Body":"Hi there!","EventType":"message.sent"})");
  EXPECT_EQ(result->event_type, "twilio.message.sent");
  EXPECT_EQ(result->dedupe_key, "tok-1");

  request.headers = {{"X-Twilio-Signature", signature}};
  result = Check(TwilioSettings(), {std::string(kTwilioToken)}, request);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->dedupe_key, signature);
}

TEST(TwilioVerifyTest, RepeatedParametersSignedOnceEachInOrderAndKeptAsAnArray) {
  const std::string body = "Tag=b&Tag=a&Tag=b&A=1";
  const std::string signature = TwilioSignature(std::string(kTwilioUrl) + "A1TagaTagb");
  const Request request{{{"X-Twilio-Signature", signature}}, body, ""};
  const VerifyResult result = Check(TwilioSettings(), {std::string(kTwilioToken)}, request);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->payload, R"({"Tag":["b","a","b"],"A":"1"})");
  EXPECT_EQ(result->event_type, "twilio.request");
}

TEST(TwilioVerifyTest, RefusesAnotherUrlTokenOrBody) {
  const std::string body = "CallSid=CA1&CallStatus=completed";
  const std::string signed_text = "CallSidCA1CallStatuscompleted";
  const std::vector<std::string> tokens = {std::string(kTwilioToken)};
  const auto request = [&](std::string signature, std::string b) {
    return Request{{{"X-Twilio-Signature", std::move(signature)}}, std::move(b), ""};
  };
  const std::string good = TwilioSignature(std::string(kTwilioUrl) + signed_text);
  EXPECT_TRUE(Check(TwilioSettings(), tokens, request(good, body)).has_value());
  EXPECT_FAILS(
      Check(TwilioSettings(), tokens,
            request(TwilioSignature("https://evil.example/in/src_tw" + signed_text), body)),
      kUnverified);
  EXPECT_FAILS(
      Check(TwilioSettings(), tokens,
            request(TwilioSignature(std::string(kTwilioUrl) + signed_text, "other"), body)),
      kUnverified);
  EXPECT_FAILS(Check(TwilioSettings(), tokens, request(good, body + "&Extra=1")), kUnverified);
  EXPECT_FAILS(Check(TwilioSettings(), tokens, request(good, "CallSid=CA1&CallStatus=complete")),
               kUnverified);
  EXPECT_FAILS(Check(TwilioSettings(), tokens, request(good, body + "&Bad=%G1")), kUnverified);
  EXPECT_FAILS(Check(TwilioSettings(), tokens, Request{{}, body, ""}), kUnverified);
  SourceSettings no_url = TwilioSettings();
  no_url.url.clear();
  EXPECT_FAILS(Check(no_url, tokens, request(TwilioSignature(signed_text), body)), kUnverified);
  // The default port, added or dropped on the way, does not matter.
  EXPECT_TRUE(
      Check(TwilioSettings(), tokens,
            request(TwilioSignature("https://hooks.example.com:443/in/src_tw" + signed_text), body))
          .has_value());
  SourceSettings with_port = TwilioSettings();
  with_port.url = "https://hooks.example.com:443/in/src_tw";
  EXPECT_TRUE(Check(with_port, tokens, request(good, body)).has_value());
  // A NUL in a verified form has no place in a payload.
  const std::string nul_body = "A=%00";
  EXPECT_FAILS(
      Check(TwilioSettings(), tokens,
            request(TwilioSignature(std::string(kTwilioUrl) + std::string("A\0", 2)), nul_body)),
      kMalformed);
}

TEST(TwilioVerifyTest, AJsonBodyIsSignedThroughItsBodySha256) {
  const std::string body = R"({"Level":"ERROR"})";
  const std::string query = "bodySHA256=" + HexEncode(Sha256(body));
  const std::string signature = TwilioSignature(std::string(kTwilioUrl) + "?" + query);
  const std::vector<std::string> tokens = {std::string(kTwilioToken)};
  VerifyResult result =
      Check(TwilioSettings(), tokens, Request{{{"X-Twilio-Signature", signature}}, body, query});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->payload, body);
  EXPECT_EQ(result->event_type, "twilio.request");
  // The body's hash is checked: another body under the same signed URL is refused.
  EXPECT_FAILS(Check(TwilioSettings(), tokens,
                     Request{{{"X-Twilio-Signature", signature}}, R"({"Level":"WARN"})", query}),
               kUnverified);
  // And the URL with the hash is signed: another hash with the old signature is refused.
  const std::string other = R"({"Level":"WARN"})";
  EXPECT_FAILS(Check(TwilioSettings(), tokens,
                     Request{{{"X-Twilio-Signature", signature}},
                             other,
                             "bodySHA256=" + HexEncode(Sha256(other))}),
               kUnverified);
  const std::string not_json = "plain";
  const std::string plain_query = "bodySHA256=" + HexEncode(Sha256(not_json));
  EXPECT_FAILS(Check(TwilioSettings(), tokens,
                     Request{{{"X-Twilio-Signature",
                               TwilioSignature(std::string(kTwilioUrl) + "?" + plain_query)}},
                             not_json,
                             plain_query}),
               kMalformed);
}

// ---- Standard Webhooks and Svix

constexpr std::string_view kSwSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr std::string_view kSwBody = R"({"type":"user.created","data":{}})";

std::string SwSignature(std::string_view secret, std::string_view id, int64_t t,
                        std::string_view body) {
  const std::string key = *Base64Decode(secret.substr(6));
  return "v1," +
         Base64Encode(Mac(EVP_sha256(), key,
                          std::string(id) + "." + std::to_string(t) + "." + std::string(body)));
}

Request SwRequest(std::string_view family, int64_t t, std::string signature) {
  const std::string f(family);
  return {{{f + "id", "msg_1"}, {f + "timestamp", std::to_string(t)}, {f + "signature", signature}},
          std::string(kSwBody),
          ""};
}

TEST(StandardWebhooksVerifyTest, WebhookAndSvixHeadersAlike) {
  const SourceSettings settings = Settings(InboundProvider::kStandardWebhooks);
  const std::vector<std::string> secrets = {std::string(kSwSecret)};
  for (const std::string_view family : {"webhook-", "svix-", "Webhook-"}) {
    const VerifyResult result = Check(
        settings, secrets, SwRequest(family, kNow, SwSignature(kSwSecret, "msg_1", kNow, kSwBody)));
    ASSERT_TRUE(result.has_value()) << family;
    EXPECT_EQ(result->event_type, "standard-webhooks.user.created");
    EXPECT_EQ(result->dedupe_key, "msg_1");
  }
  // A mix of the two families is not one request's headers.
  const Request mixed{{{"webhook-id", "msg_1"},
                       {"svix-timestamp", std::to_string(kNow)},
                       {"svix-signature", SwSignature(kSwSecret, "msg_1", kNow, kSwBody)}},
                      std::string(kSwBody),
                      ""};
  EXPECT_FAILS(Check(settings, secrets, mixed), kUnverified);
}

TEST(StandardWebhooksVerifyTest, AnySignatureOfTheListAndAnySecret) {
  const SourceSettings settings = Settings(InboundProvider::kStandardWebhooks);
  const std::string old_secret = "whsec_" + Base64Encode(std::string(32, 'o'));
  const std::string good = SwSignature(kSwSecret, "msg_1", kNow, kSwBody);
  const std::string other = SwSignature(old_secret, "msg_1", kNow, kSwBody);
  for (const std::string& header :
       {other + " " + good, "v2,abc " + good, good + "  " + other, "v1,!!! " + good}) {
    EXPECT_TRUE(
        Check(settings, {std::string(kSwSecret)}, SwRequest("webhook-", kNow, header)).has_value())
        << header;
  }
  EXPECT_FAILS(Check(settings, {std::string(kSwSecret)}, SwRequest("webhook-", kNow, other)),
               kUnverified);
  // Signed with the previous secret, during its grace period.
  const VerifyResult result =
      Check(settings, {"whsec_not base64", old_secret, std::string(kSwSecret)},
            SwRequest("webhook-", kNow, other));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->secret_index, 1u);
  // The secret's base64 alone, without "whsec_", is the same key.
  EXPECT_TRUE(Check(settings, {std::string(kSwSecret.substr(6))}, SwRequest("webhook-", kNow, good))
                  .has_value());
}

TEST(StandardWebhooksVerifyTest, RefusesStaleFutureTamperedAndIncomplete) {
  const SourceSettings settings = Settings(InboundProvider::kStandardWebhooks);
  const std::vector<std::string> secrets = {std::string(kSwSecret)};
  const auto signed_at = [&](int64_t t) {
    return SwRequest("webhook-", t, SwSignature(kSwSecret, "msg_1", t, kSwBody));
  };
  EXPECT_TRUE(Check(settings, secrets, signed_at(kNow - 300)).has_value());
  EXPECT_FAILS(Check(settings, secrets, signed_at(kNow - 301)), kUnverified);
  EXPECT_FAILS(Check(settings, secrets, signed_at(kNow + 301)), kUnverified);
  Request tampered = signed_at(kNow);
  tampered.body = Flip(tampered.body, 5);
  EXPECT_FAILS(Check(settings, secrets, tampered), kUnverified);
  Request no_id = signed_at(kNow);
  no_id.headers = {{"webhook-timestamp", std::to_string(kNow)},
                   {"webhook-signature", SwSignature(kSwSecret, "msg_1", kNow, kSwBody)}};
  EXPECT_FAILS(Check(settings, secrets, no_id), kUnverified);
  Request other_id = signed_at(kNow);
  other_id.headers = {{"webhook-id", "msg_2"},
                      {"webhook-timestamp", std::to_string(kNow)},
                      {"webhook-signature", SwSignature(kSwSecret, "msg_1", kNow, kSwBody)}};
  EXPECT_FAILS(Check(settings, secrets, other_id), kUnverified);
}

// ---- Any HMAC signer

SourceSettings HmacSettings(HmacAlgorithm algorithm, SignatureEncoding encoding,
                            std::string prefix) {
  SourceSettings settings = Settings(InboundProvider::kHmac);
  settings.hmac = {"X-Signature", algorithm, encoding, std::move(prefix)};
  settings.event_type = "partner.update";
  return settings;
}

TEST(HmacVerifyTest, EachAlgorithmAndEncoding) {
  const std::string body = R"({"a":1})";
  struct Case {
    HmacAlgorithm algorithm;
    const EVP_MD* digest;
    SignatureEncoding encoding;
  };
  for (const Case& c : {Case{HmacAlgorithm::kSha1, EVP_sha1(), SignatureEncoding::kHex},
                        Case{HmacAlgorithm::kSha256, EVP_sha256(), SignatureEncoding::kBase64},
                        Case{HmacAlgorithm::kSha512, EVP_sha512(), SignatureEncoding::kHex}}) {
    const SourceSettings settings = HmacSettings(c.algorithm, c.encoding, "sig=");
    const std::string mac = Mac(c.digest, "k", body);
    const std::string encoded =
        c.encoding == SignatureEncoding::kHex ? HexEncode(mac) : Base64Encode(mac);
    const VerifyResult result =
        Check(settings, {"k"}, Request{{{"x-signature", "sig=" + encoded}}, body, ""});
    ASSERT_TRUE(result.has_value()) << HmacAlgorithmName(c.algorithm);
    EXPECT_EQ(result->event_type, "hmac.partner.update");
    EXPECT_FALSE(result->dedupe_key.has_value());
    EXPECT_FAILS(Check(settings, {"k"}, Request{{{"X-Signature", encoded}}, body, ""}),
                 kUnverified);
    EXPECT_FAILS(Check(settings, {"other"}, Request{{{"X-Signature", "sig=" + encoded}}, body, ""}),
                 kUnverified);
    EXPECT_FAILS(
        Check(settings, {"k"}, Request{{{"X-Signature", "sig=" + encoded}}, R"({"a":2})", ""}),
        kUnverified);
  }
  // Another algorithm's MAC of the same body does not pass.
  EXPECT_FAILS(Check(HmacSettings(HmacAlgorithm::kSha256, SignatureEncoding::kHex, ""), {"k"},
                     Request{{{"X-Signature", HexEncode(Mac(EVP_sha1(), "k", body))}}, body, ""}),
               kUnverified);
}

TEST(HmacVerifyTest, TheDedupeHeaderWhenTheSourceNamesOne) {
  SourceSettings settings = HmacSettings(HmacAlgorithm::kSha256, SignatureEncoding::kHex, "");
  settings.dedupe_header = "X-Delivery";
  settings.type_prefix = "partner";
  const std::string body = R"({"a":1})";
  const std::string signature = HexMac("k", body);
  VerifyResult result = Check(
      settings, {"k"}, Request{{{"X-Signature", signature}, {"x-delivery", " d-9 "}}, body, ""});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->dedupe_key, "d-9");
  EXPECT_EQ(result->event_type, "partner.partner.update");
  EXPECT_FAILS(Check(settings, {"k"}, Request{{{"X-Signature", signature}}, body, ""}), kMalformed);
  EXPECT_FAILS(
      Check(settings, {"k"},
            Request{
                {{"X-Signature", signature}, {"X-Delivery", "a"}, {"X-Delivery", "b"}}, body, ""}),
      kMalformed);
  // An empty secret is no secret: anyone could sign with it.
  EXPECT_FAILS(Check(settings, {""}, Request{{{"X-Signature", HexMac("", body)}}, body, ""}),
               kUnverified);
}

// ---- The providers' own SDKs (tests/inbound/make_vectors.mjs)

TEST(InboundVectorsTest, EveryRequestSignedByItsProvidersSdkVerifies) {
  std::ifstream file(std::string(WEBHOOKD_SOURCE_DIR) + "/tests/inbound/vectors.json");
  ASSERT_TRUE(file.good());
  const nlohmann::json vectors = nlohmann::json::parse(file);
  ASSERT_GE(vectors.size(), 12u);
  for (const nlohmann::json& v : vectors) {
    SCOPED_TRACE(v.at("name").get<std::string>());
    const nlohmann::json& s = v.at("settings");
    SourceSettings settings;
    settings.provider = ParseInboundProvider(s.at("provider").get<std::string>()).value();
    settings.type_prefix = s.value("type_prefix", "");
    settings.url = s.value("url", "");
    settings.event_type = s.value("event_type", "");
    settings.dedupe_header = s.value("dedupe_header", "");
    if (s.contains("hmac")) {
      const nlohmann::json& h = s.at("hmac");
      settings.hmac.header = h.at("header").get<std::string>();
      settings.hmac.algorithm = ParseHmacAlgorithm(h.at("algorithm").get<std::string>()).value();
      settings.hmac.encoding = ParseSignatureEncoding(h.at("encoding").get<std::string>()).value();
      settings.hmac.prefix = h.at("prefix").get<std::string>();
    }
    const auto secrets = v.at("secrets").get<std::vector<std::string>>();
    HeaderLookup headers;
    for (const nlohmann::json& h : v.at("headers")) {
      headers.Add(h.at(0).get<std::string>(), h.at(1).get<std::string>());
    }
    const std::string body = v.at("body").get<std::string>();
    const std::string query = v.at("query").get<std::string>();
    const int64_t now = v.at("now").get<int64_t>();
    const nlohmann::json& expect = v.at("expect");

    const VerifyResult result = Verify(settings, secrets, headers, query, body, At(now));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->event_type, expect.at("event_type").get<std::string>());
    if (expect.contains("dedupe_key")) {
      EXPECT_EQ(result->dedupe_key, expect.at("dedupe_key").get<std::string>());
    }
    EXPECT_EQ(result->payload, expect.value("payload", body));
    if (expect.contains("challenge")) {
      EXPECT_EQ(result->challenge, expect.at("challenge").get<std::string>());
    }
    EXPECT_EQ(result->secret_index, expect.value("secret_index", 0u));

    // The same request is refused with its body changed by one byte, with another
    // secret, and (where a timestamp is signed) an hour later.
    std::string tampered = body;
    tampered[tampered.size() / 2] ^= 1;
    EXPECT_FAILS(Verify(settings, secrets, headers, query, tampered, At(now)), kUnverified);
    const std::vector<std::string> other = {"whsec_" + Base64Encode(std::string(32, 'x'))};
    EXPECT_FAILS(Verify(settings, other, headers, query, body, At(now)), kUnverified);
    if (settings.provider == InboundProvider::kStripe ||
        settings.provider == InboundProvider::kSlack ||
        settings.provider == InboundProvider::kStandardWebhooks) {
      EXPECT_FAILS(Verify(settings, secrets, headers, query, body, At(now + 3600)), kUnverified);
    }
  }
}

}  // namespace
}  // namespace webhookd::inbound_verify_test
