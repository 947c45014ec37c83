// The Authenticator against a scripted store: which requests reach the store, and when
// a key's check is handed to the ingest instead.
#include "server/auth.h"

#include <gtest/gtest.h>

#include "tests/testing/stub_stores.h"

namespace webhookd::auth_test {
namespace {

using testing::StubKeyStore;

constexpr const char* kHeader = "Bearer whk_test_key_0123456789";

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.on_find_api_key = [this](const std::string& hash) -> Result<std::optional<ApiKeyInfo>> {
      ++lookups_;
      if (!live_ || hash != HashApiKey("whk_test_key_0123456789")) {
        return std::optional<ApiKeyInfo>();
      }
      ApiKeyInfo info;
      info.role = role_;
      return std::optional<ApiKeyInfo>(info);
    };
  }

  StubKeyStore store_;
  Authenticator auth_{store_};
  int lookups_ = 0;
  bool live_ = true;
  Role role_ = Role::kPublisher;
};

TEST_F(AuthTest, CheckLooksTheKeyUpEveryTime) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(auth_.Check(kHeader, Access{Role::kPublisher}));
  EXPECT_EQ(lookups_, 3);
  live_ = false;
  auto r = auth_.Check(kHeader, Access{Role::kPublisher});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kUnauthorized);
}

TEST_F(AuthTest, ASeenKeyIsDeferredWithItsHashAndAnUnseenOneLookedUp) {
  auto first = auth_.CheckOrDefer(kHeader, Access{Role::kPublisher});
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->key_hash.has_value());  // looked up, nothing to defer
  EXPECT_EQ(lookups_, 1);
  auto second = auth_.CheckOrDefer(kHeader, Access{Role::kPublisher});
  ASSERT_TRUE(second);
  ASSERT_TRUE(second->key_hash.has_value());
  EXPECT_EQ(*second->key_hash, HashApiKey("whk_test_key_0123456789"));
  EXPECT_EQ(lookups_, 1);

  // Once forgotten (the store refused it), the key is looked up again and refused.
  auth_.Forget(*second->key_hash);
  live_ = false;
  auto third = auth_.CheckOrDefer(kHeader, Access{Role::kPublisher});
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().kind, ErrorKind::kUnauthorized);
  EXPECT_EQ(lookups_, 2);
}

TEST_F(AuthTest, UnknownAndMalformedKeysAreNeverRemembered) {
  live_ = false;
  for (int i = 0; i < 2; ++i) {
    auto r = auth_.CheckOrDefer(kHeader, Access{Role::kPublisher});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::kUnauthorized);
  }
  EXPECT_EQ(lookups_, 2);
  for (const char* header : {"", "Bearer", "Basic abc", "whk_test_key_0123456789"}) {
    auto r = auth_.CheckOrDefer(header, Access{Role::kPublisher});
    ASSERT_FALSE(r) << header;
    EXPECT_EQ(r.error().kind, ErrorKind::kUnauthorized);
  }
  EXPECT_EQ(lookups_, 2);  // malformed headers never reach the store
}

TEST_F(AuthTest, ASeenPublisherKeyIsNotDeferredForAnAdminRoute) {
  ASSERT_TRUE(auth_.Check(kHeader, Access{Role::kPublisher}));
  auto r = auth_.CheckOrDefer(kHeader, Access{Role::kAdmin});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(lookups_, 2);
}

TEST_F(AuthTest, ADatabaseOutageIsUnavailableNotUnauthorized) {
  store_.on_find_api_key = [](const std::string&) -> Result<std::optional<ApiKeyInfo>> {
    return Fail(ErrorKind::kUnavailable, "the database is unavailable");
  };
  auto r = auth_.CheckOrDefer(kHeader, Access{Role::kPublisher});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kUnavailable);
}

}  // namespace
}  // namespace webhookd::auth_test
