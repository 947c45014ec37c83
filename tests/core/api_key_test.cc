#include "core/api_key.h"

#include <gtest/gtest.h>

#include <set>

#include "core/role.h"

namespace webhookd::api_key_test {
namespace {

TEST(ApiKeyTest, GeneratedKeysAreWhkAndFortyThreeUrlSafeCharacters) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    const std::string key = GenerateApiKey();
    ASSERT_EQ(key.size(), 4u + 43u) << key;
    EXPECT_TRUE(key.starts_with("whk_")) << key;
    for (char c : key.substr(4)) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << key;
    }
    seen.insert(key);
  }
  EXPECT_EQ(seen.size(), 50u);
}

TEST(ApiKeyTest, HashIsLowercaseHexSha256) {
  EXPECT_EQ(HashApiKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HashApiKey(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_NE(HashApiKey("whk_a"), HashApiKey("whk_b"));
}

TEST(ApiKeyTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("whk_same", "whk_same"));
  EXPECT_FALSE(ConstantTimeEquals("whk_same", "whk_samE"));
  EXPECT_FALSE(ConstantTimeEquals("whk_same", "whk_sam"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
}

TEST(ApiKeyTest, RoleNames) {
  EXPECT_EQ(RoleName(Role::kPublisher), "publisher");
  EXPECT_EQ(RoleName(Role::kAdmin), "admin");
}

}  // namespace
}  // namespace webhookd::api_key_test
