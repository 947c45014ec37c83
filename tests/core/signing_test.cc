#include "core/signing.h"

#include <gtest/gtest.h>

#include "base/encoding.h"

namespace webhookd::signing_test {
namespace {

constexpr std::string_view kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

TEST(SigningTest, MatchesTheStandardWebhooksVector) {
  const Result<std::string> key = DecodeSecret(kSecret);
  ASSERT_TRUE(key.has_value()) << key.error().message;
  EXPECT_EQ(key->size(), 24u);
  EXPECT_EQ(Sign(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232314})"),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST(SigningTest, EveryInputChangesTheSignature) {
  const std::string key = DecodeSecret(kSecret).value();
  const std::string base = Sign(key, "msg_1", 1614265330, "{}");
  EXPECT_NE(Sign(key, "msg_2", 1614265330, "{}"), base);
  EXPECT_NE(Sign(key, "msg_1", 1614265331, "{}"), base);
  EXPECT_NE(Sign(key, "msg_1", 1614265330, "{ }"), base);
  std::string other_key = key;
  other_key[0] ^= 1;
  EXPECT_NE(Sign(other_key, "msg_1", 1614265330, "{}"), base);
  EXPECT_EQ(Sign(key, "msg_1", 1614265330, "{}"), base);
}

TEST(SigningTest, DecodeSecretRefusesBadSecrets) {
  const std::string b64_23 = Base64Encode(std::string(23, 'a'));
  const std::string b64_65 = Base64Encode(std::string(65, 'a'));
  for (const std::string& bad :
       {std::string("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), std::string("whsec_"),
        std::string("WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        std::string("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS"),   // bad length
        std::string("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!w"),  // bad character
        "whsec_" + b64_23, "whsec_" + b64_65}) {
    const Result<std::string> key = DecodeSecret(bad);
    ASSERT_FALSE(key.has_value()) << bad;
    EXPECT_EQ(key.error().kind, ErrorKind::kInvalid);
  }
  EXPECT_EQ(DecodeSecret("whsec_" + Base64Encode(std::string(64, 'a'))).value().size(), 64u);
}

TEST(SigningTest, GeneratedSecretsDecodeToThirtyTwoFreshBytes) {
  const std::string a = GenerateSecret();
  const std::string b = GenerateSecret();
  EXPECT_TRUE(a.starts_with("whsec_"));
  EXPECT_EQ(DecodeSecret(a).value().size(), 32u);
  EXPECT_NE(a, b);
}

TEST(SigningTest, SignatureHeaderSignsWithEverySecretInOrderSpaceSeparated) {
  const std::string current = GenerateSecret();
  const std::string older = GenerateSecret();
  const std::string sign_current = Sign(DecodeSecret(current).value(), "msg_1", 1614265330, "{}");
  const std::string sign_older = Sign(DecodeSecret(older).value(), "msg_1", 1614265330, "{}");
  EXPECT_EQ(SignatureHeader({current}, "msg_1", 1614265330, "{}").value(), sign_current);
  EXPECT_EQ(SignatureHeader({current, older}, "msg_1", 1614265330, "{}").value(),
            sign_current + " " + sign_older);
  EXPECT_EQ(SignatureHeader({std::string(kSecret)}, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                            R"({"test": 2432232314})")
                .value(),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST(SigningTest, SignatureHeaderNeedsAUsableCurrentSecretAndSkipsBadOlderOnes) {
  const std::string current = GenerateSecret();
  EXPECT_FALSE(SignatureHeader({}, "msg_1", 1, "{}").has_value());
  EXPECT_FALSE(SignatureHeader({"whsec_short", current}, "msg_1", 1, "{}").has_value());
  EXPECT_EQ(SignatureHeader({current, "whsec_short"}, "msg_1", 1, "{}").value(),
            Sign(DecodeSecret(current).value(), "msg_1", 1, "{}"));
}

}  // namespace
}  // namespace webhookd::signing_test
