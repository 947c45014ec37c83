// API keys on a real PostgreSQL: only hashes are stored, revocation is final for a key
// until the bootstrap key un-revokes itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/api_key.h"
#include "store/pg/pg_store.h"
#include "tests/testing/test_database.h"

namespace webhookd::api_keys_pgtest {
namespace {

using testing::TestDatabase;

TEST(ApiKeysPgTest, CreateListFindRevokeRoundTrip) {
  TestDatabase db;
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 2});
  const std::string key = GenerateApiKey();
  const std::string hash = HashApiKey(key);

  auto created = store.CreateApiKey(NewApiKey{"ci", Role::kPublisher, hash});
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_GT(created->id, 0);
  EXPECT_EQ(created->name, "ci");
  EXPECT_EQ(created->role, Role::kPublisher);
  EXPECT_FALSE(created->revoked_at);
  auto admin = store.CreateApiKey(NewApiKey{"ops", Role::kAdmin, HashApiKey(GenerateApiKey())});
  ASSERT_TRUE(admin);

  auto listed = store.ListApiKeys();
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, created->id);
  EXPECT_EQ((*listed)[0].name, "ci");
  EXPECT_EQ((*listed)[1].id, admin->id);
  EXPECT_EQ((*listed)[1].role, Role::kAdmin);

  auto found = store.FindApiKey(hash);
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->id, created->id);
  EXPECT_EQ((*found)->role, Role::kPublisher);
  auto unknown = store.FindApiKey(HashApiKey("whk_unknown"));
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->has_value());

  ASSERT_TRUE(store.RevokeApiKey(created->id));
  EXPECT_EQ(db.Scalar("SELECT revoked_at IS NOT NULL FROM api_keys WHERE id = " +
                      std::to_string(created->id)),
            "t");
  auto gone = store.FindApiKey(hash);
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->has_value());
  // The other key is untouched.
  auto still_admin = store.ListApiKeys();
  ASSERT_TRUE(still_admin);
  EXPECT_TRUE((*still_admin)[0].revoked_at.has_value());
  EXPECT_FALSE((*still_admin)[1].revoked_at.has_value());

  auto twice = store.RevokeApiKey(created->id);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().kind, ErrorKind::kNotFound);
  auto absent = store.RevokeApiKey(created->id + 1000);
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().kind, ErrorKind::kNotFound);
}

TEST(ApiKeysPgTest, ThePlaintextKeyIsStoredNowhere) {
  TestDatabase db;
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 2});
  const std::string publisher = GenerateApiKey();
  const std::string admin = GenerateApiKey();
  const std::string bootstrap = GenerateApiKey();
  auto pub = store.CreateApiKey(NewApiKey{"pub", Role::kPublisher, HashApiKey(publisher)});
  ASSERT_TRUE(pub);
  ASSERT_TRUE(store.CreateApiKey(NewApiKey{"adm", Role::kAdmin, HashApiKey(admin)}));
  ASSERT_TRUE(store.EnsureAdminKey(HashApiKey(bootstrap)));
  ASSERT_TRUE(store.RevokeApiKey(pub->id));

  // Every row of every table, as text.
  std::string everything;
  const std::string tables = db.Scalar(
      "SELECT string_agg(table_name, ',') FROM information_schema.tables"
      " WHERE table_schema = 'webhookd'");
  ASSERT_THAT(tables, ::testing::HasSubstr("api_keys"));
  size_t start = 0;
  while (start <= tables.size()) {
    const size_t comma = std::min(tables.find(',', start), tables.size());
    const std::string table = tables.substr(start, comma - start);
    everything += db.Scalar("SELECT string_agg(t::text, ' ') FROM " + table + " t") + "\n";
    start = comma + 1;
  }
  // The dump holds the keys' hashes, so it is the real content.
  EXPECT_THAT(everything, ::testing::HasSubstr(HashApiKey(publisher)));
  EXPECT_THAT(everything, ::testing::HasSubstr(HashApiKey(bootstrap)));
  for (const std::string& key : {publisher, admin, bootstrap}) {
    EXPECT_THAT(everything, ::testing::Not(::testing::HasSubstr(key)));
    // Nor its random part without the prefix.
    EXPECT_THAT(everything, ::testing::Not(::testing::HasSubstr(key.substr(4))));
  }
}

TEST(ApiKeysPgTest, EnsureAdminKeyIsIdempotentAndARevokedKeyStaysRevoked) {
  TestDatabase db;
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 2});
  const std::string hash = HashApiKey(GenerateApiKey());

  EXPECT_EQ(store.EnsureAdminKey(hash), KeyStore::Bootstrap::kLive);
  EXPECT_EQ(store.EnsureAdminKey(hash), KeyStore::Bootstrap::kLive);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys"), "1");
  auto found = store.FindApiKey(hash);
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->role, Role::kAdmin);
  const int64_t id = (*found)->id;

  ASSERT_TRUE(store.RevokeApiKey(id));
  auto revoked = store.FindApiKey(hash);
  ASSERT_TRUE(revoked);
  EXPECT_FALSE(revoked->has_value());

  // Revoked for good: it came back at the next start before.
  EXPECT_EQ(store.EnsureAdminKey(hash), KeyStore::Bootstrap::kRevoked);
  auto still = store.FindApiKey(hash);
  ASSERT_TRUE(still);
  EXPECT_FALSE(still->has_value());
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys WHERE revoked_at IS NOT NULL"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys"), "1");
}

TEST(ApiKeysPgTest, EnsureAdminKeyMakesAPublisherKeyWithThatValueAnAdmin) {
  TestDatabase db;
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 2});
  const std::string hash = HashApiKey(GenerateApiKey());
  ASSERT_TRUE(store.CreateApiKey(NewApiKey{"pub", Role::kPublisher, hash}));

  EXPECT_EQ(store.EnsureAdminKey(hash), KeyStore::Bootstrap::kLive);
  auto found = store.FindApiKey(hash);
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->role, Role::kAdmin);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys"), "1");
}

// An expired bootstrap key came back, with no expiry at all, at every start.
TEST(ApiKeysPgTest, AnExpiredBootstrapKeyStaysExpired) {
  TestDatabase db;
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 2});
  const std::string hash = HashApiKey(GenerateApiKey());
  ASSERT_EQ(store.EnsureAdminKey(hash), KeyStore::Bootstrap::kLive);
  ASSERT_EQ(db.Scalar("UPDATE api_keys SET expires_at = now() - interval '1 minute' "
                      "RETURNING 'expired'"),
            "expired");

  EXPECT_EQ(store.EnsureAdminKey(hash), KeyStore::Bootstrap::kExpired);
  auto found = store.FindApiKey(hash);
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->has_value());
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys WHERE expires_at < now()"), "1");

  // A live key with an expiry becomes an admin key that still expires when it would.
  const std::string later = HashApiKey(GenerateApiKey());
  ASSERT_TRUE(store.CreateApiKey(
      NewApiKey{"pub", Role::kPublisher, later, std::nullopt, std::chrono::hours(1)}));
  EXPECT_EQ(store.EnsureAdminKey(later), KeyStore::Bootstrap::kLive);
  auto admin = store.FindApiKey(later);
  ASSERT_TRUE(admin);
  ASSERT_TRUE(admin->has_value());
  EXPECT_EQ((*admin)->role, Role::kAdmin);
  EXPECT_TRUE((*admin)->expires_at.has_value());
}

}  // namespace
}  // namespace webhookd::api_keys_pgtest
