#include "base/secret_box.h"

#include <gtest/gtest.h>

#include "base/encoding.h"

namespace webhookd::secret_box_test {
namespace {

const std::string kKey(32, 'k');
const std::string kOther(32, 'o');

// Counts up, so every seal in a test is repeatable and two seals differ.
SecretBox::NonceSource Counting() {
  auto next = std::make_shared<int>(0);
  return [next](size_t n) { return std::string(n - 1, '\0') + static_cast<char>((*next)++); };
}

TEST(SecretBoxTest, WithoutAKeyValuesStayAsTheyAre) {
  const SecretBox box;
  EXPECT_FALSE(box.sealing());
  EXPECT_EQ(box.Seal("whsec_abc"), "whsec_abc");
  EXPECT_EQ(*box.Open("whsec_abc"), "whsec_abc");
}

// A client's value that reads like sealed data, stored without a key: it was taken as
// sealed under a key id no one had, so start-up refused to run and the value never
// opened. Now it is escaped, opens to the client's bytes, and names no key.
TEST(SecretBoxTest, WithoutAKeyAValueThatLooksSealedStaysTheClientsOwn) {
  const SecretBox box;
  const SecretBox keyed(kKey, std::nullopt);
  for (const std::string& value : std::vector<std::string>{
           "wse1:deadbeef:AAAA",
           "wse1:" + EncryptionKeyId(kKey) + ":" + Base64Encode(std::string(40, 'x')),
           "wsp1:", "wsp1:wse1:deadbeef:AAAA", "wse1:"}) {
    const std::string stored = box.Seal(value);
    EXPECT_FALSE(SecretBox::IsSealed(stored)) << value;
    EXPECT_FALSE(SecretBox::IsPlain(stored)) << value;
    EXPECT_EQ(SecretBox::KeyIdOf(stored), "") << value;
    EXPECT_EQ(box.Open(stored).value_or("(does not open)"), value);
    // A key set later opens it the same, and reencrypt seals the client's bytes.
    EXPECT_EQ(keyed.Open(stored).value_or("(does not open)"), value);
    EXPECT_FALSE(keyed.IsCurrent(stored));
    EXPECT_EQ(keyed.Open(keyed.Seal(value)).value_or("(does not open)"), value);
  }
  // Everything else is stored as it is.
  for (const std::string value : {"Bearer abc", "wse", "wse2:x", "WSE1:x", ""}) {
    EXPECT_EQ(box.Seal(value), value);
    EXPECT_TRUE(SecretBox::IsPlain(value)) << value;
  }
}

TEST(SecretBoxTest, SealsUnderTheCurrentKeyAndOpensBack) {
  const SecretBox box(kKey, std::nullopt, Counting());
  const std::string sealed = box.Seal("whsec_abc");
  EXPECT_TRUE(sealed.starts_with("wse1:" + EncryptionKeyId(kKey) + ":")) << sealed;
  EXPECT_EQ(sealed.find("whsec_abc"), std::string::npos);
  EXPECT_TRUE(SecretBox::IsSealed(sealed));
  EXPECT_TRUE(box.IsCurrent(sealed));
  EXPECT_EQ(*box.Open(sealed), "whsec_abc");
  // A fresh nonce each time: equal plaintexts do not show as equal values.
  EXPECT_NE(box.Seal("whsec_abc"), sealed);
  EXPECT_EQ(*box.Open(box.Seal("")), "");
}

TEST(SecretBoxTest, PlaintextFromBeforeTheKeyStillOpens) {
  const SecretBox box(kKey, std::nullopt);
  EXPECT_EQ(*box.Open("Bearer abc"), "Bearer abc");
  EXPECT_FALSE(box.IsCurrent("Bearer abc"));
}

TEST(SecretBoxTest, ThePreviousKeyOpensDuringAKeyChange) {
  const std::string old_sealed = SecretBox(kOther, std::nullopt).Seal("v");
  const SecretBox box(kKey, kOther);
  EXPECT_EQ(*box.Open(old_sealed), "v");
  EXPECT_FALSE(box.IsCurrent(old_sealed));
  EXPECT_EQ(SecretBox::KeyIdOf(old_sealed), box.previous_key_id());
}

TEST(SecretBoxTest, AnUnknownKeyIsAClearErrorWithoutTheValue) {
  const std::string sealed = SecretBox(kOther, std::nullopt).Seal("whsec_topsecret");
  for (const SecretBox& box : {SecretBox(), SecretBox(kKey, std::nullopt)}) {
    const Result<std::string> opened = box.Open(sealed);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().kind, ErrorKind::kInternal);
    EXPECT_NE(opened.error().message.find(EncryptionKeyId(kOther)), std::string::npos);
    EXPECT_NE(opened.error().message.find("WEBHOOKD_ENCRYPTION_KEY"), std::string::npos);
    EXPECT_EQ(opened.error().message.find("topsecret"), std::string::npos);
  }
}

TEST(SecretBoxTest, AnAlteredValueDoesNotOpen) {
  const SecretBox box(kKey, std::nullopt, Counting());
  const std::string sealed = box.Seal("whsec_abc");
  const std::string body = sealed.substr(sealed.rfind(':') + 1);
  std::string raw = *Base64Decode(body);
  for (size_t i = 0; i < raw.size(); ++i) {
    std::string flipped = raw;
    flipped[i] = static_cast<char>(flipped[i] ^ 1);
    EXPECT_FALSE(box.Open(sealed.substr(0, sealed.rfind(':') + 1) + Base64Encode(flipped)))
        << "byte " << i;
  }
  EXPECT_FALSE(box.Open(sealed.substr(0, sealed.size() - 4)));
  EXPECT_FALSE(box.Open(sealed.substr(0, sealed.rfind(':') + 1) + "!!"));
  // The key id is authenticated too: relabelled under another id it does not open.
  const SecretBox both(kKey, kOther);
  std::string relabelled = sealed;
  relabelled.replace(5, 8, EncryptionKeyId(kOther));
  EXPECT_FALSE(both.Open(relabelled));
}

}  // namespace
}  // namespace webhookd::secret_box_test
