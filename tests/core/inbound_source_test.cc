#include "core/inbound_source.h"

#include <gtest/gtest.h>

#include "base/encoding.h"

namespace webhookd::inbound_source_test {
namespace {

std::vector<std::string> Fields(const SourceSettings& settings) {
  std::vector<std::string> fields;
  for (const FieldError& error : SourceSettingsErrors(settings)) fields.push_back(error.field);
  return fields;
}

using Strings = std::vector<std::string>;

TEST(SourceSettingsTest, EachProvidersDefaultsAreValid) {
  for (const InboundProvider provider :
       {InboundProvider::kStripe, InboundProvider::kGithub, InboundProvider::kShopify,
        InboundProvider::kSlack, InboundProvider::kStandardWebhooks}) {
    SourceSettings settings;
    settings.provider = provider;
    EXPECT_EQ(Fields(settings), Strings{}) << InboundProviderName(provider);
  }
}

TEST(SourceSettingsTest, PrefixAndTolerance) {
  SourceSettings settings;
  settings.provider = InboundProvider::kStripe;
  settings.type_prefix = "billing.stripe";
  settings.tolerance = kMaxInboundTolerance;
  EXPECT_EQ(Fields(settings), Strings{});
  settings.tolerance = Duration::zero();
  EXPECT_EQ(Fields(settings), Strings{});
  settings.type_prefix = "webhookd";
  settings.tolerance = kMaxInboundTolerance + Duration(1);
  EXPECT_EQ(Fields(settings), (Strings{"type_prefix", "tolerance"}));
  settings.type_prefix = "has space";
  settings.tolerance = Duration(-1);
  EXPECT_EQ(Fields(settings), (Strings{"type_prefix", "tolerance"}));
}

TEST(SourceSettingsTest, TwilioNeedsItsUrlAndOnlyTwilioHasOne) {
  SourceSettings settings;
  settings.provider = InboundProvider::kTwilio;
  EXPECT_EQ(Fields(settings), Strings{"url"});
  for (const std::string url :
       {"https://hooks.example.com/in/src_1", "http://127.0.0.1:8080/in/src_1?x=1"}) {
    settings.url = url;
    EXPECT_EQ(Fields(settings), Strings{}) << url;
  }
  for (const char* url : {"ftp://hooks.example.com/", "https:///in", "https://", "https://a b/",
                          "https://a/#frag", "/in/src_1"}) {
    settings.url = url;
    EXPECT_EQ(Fields(settings), Strings{"url"}) << url;
  }
  settings.provider = InboundProvider::kGithub;
  settings.url = "https://hooks.example.com/in/src_1";
  EXPECT_EQ(Fields(settings), Strings{"url"});
}

TEST(SourceSettingsTest, HmacNeedsAHeaderAndATypeAndOnlyHmacHasThem) {
  SourceSettings settings;
  settings.provider = InboundProvider::kHmac;
  EXPECT_EQ(Fields(settings), (Strings{"hmac.header", "event_type"}));
  settings.hmac = {"X-Signature", HmacAlgorithm::kSha512, SignatureEncoding::kBase64, "v1="};
  settings.event_type = "partner.update";
  settings.dedupe_header = "X-Delivery";
  EXPECT_EQ(Fields(settings), Strings{});
  settings.hmac.header = "X Signature";
  settings.hmac.prefix = " v1=";
  settings.event_type = "partner update";
  settings.dedupe_header = "X:Delivery";
  EXPECT_EQ(Fields(settings),
            (Strings{"hmac.header", "hmac.prefix", "event_type", "dedupe_header"}));

  settings.provider = InboundProvider::kShopify;
  settings.hmac.header = "X-Signature";
  settings.hmac.prefix.clear();
  EXPECT_EQ(Fields(settings), (Strings{"hmac", "event_type", "dedupe_header"}));
}

TEST(SourceSecretTest, AnyPrintableTextAndStandardWebhooksBase64) {
  EXPECT_EQ(SourceSecretError(InboundProvider::kGithub, "my github secret ✓"), std::nullopt);
  EXPECT_EQ(SourceSecretError(InboundProvider::kStripe, "whsec_abc"), std::nullopt);
  EXPECT_EQ(SourceSecretError(InboundProvider::kHmac, std::string(1024, 'k')), std::nullopt);
  for (const std::string& bad : {std::string(), std::string(1025, 'k'), std::string("a\nb"),
                                 std::string("a\0b", 3), std::string("\xff")}) {
    EXPECT_NE(SourceSecretError(InboundProvider::kSlack, bad), std::nullopt);
  }
  const std::string key24 = Base64Encode(std::string(24, 'k'));
  EXPECT_EQ(SourceSecretError(InboundProvider::kStandardWebhooks, "whsec_" + key24), std::nullopt);
  EXPECT_EQ(SourceSecretError(InboundProvider::kStandardWebhooks, key24), std::nullopt);
  EXPECT_NE(SourceSecretError(InboundProvider::kStandardWebhooks, "whsec_not base64"),
            std::nullopt);
  EXPECT_NE(SourceSecretError(InboundProvider::kStandardWebhooks,
                              "whsec_" + Base64Encode(std::string(23, 'k'))),
            std::nullopt);
}

}  // namespace
}  // namespace webhookd::inbound_source_test
