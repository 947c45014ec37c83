// Credentials at rest: what a reader of the database sees, what the API and the worker
// get back, and a key change from one key to the next.
#include <gtest/gtest.h>

#include "base/secret_box.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::credentials_pgtest {
namespace {

using testing::N;

const std::string kKey(32, 'a');
const std::string kNextKey(32, 'b');
const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const std::string kToken = "Bearer tok_live_4eC39HqLyjWDarjtT1zdp7dc";

class CredentialsPgTest : public testing::PgTest {
 protected:
  std::unique_ptr<pg::PgStore> StoreWith(std::optional<std::string> key,
                                         std::optional<std::string> previous = std::nullopt) {
    return std::make_unique<pg::PgStore>(
        db_.url(), pg::PgStore::Options{.api_connections = 2,
                                        .committers = 0,
                                        .worker_connections = 1,
                                        .secrets = SecretBox(std::move(key), std::move(previous))});
  }

  int64_t Create(pg::PgStore& store) {
    Destination d = testing::TestDestination();
    d.secret = kSecret;
    d.headers = {{"Authorization", kToken}, {"X-Team", "payments"}};
    auto created = store.CreateDestination(d, 1000);
    EXPECT_TRUE(created) << created.error().message;
    return created ? created->id : 0;
  }

  // Every stored credential of the database, as a reader of it sees them.
  std::string Stored() {
    return db_.Scalar(
        "SELECT string_agg(v, ' ') FROM (SELECT secret FROM destinations UNION ALL SELECT "
        "secret FROM destination_secrets UNION ALL SELECT value FROM destinations, "
        "jsonb_each_text(headers)) AS c(v)");
  }

  ClaimedDelivery ClaimOne(pg::PgStore& store) {
    EXPECT_TRUE(store.InsertEvent(NewEvent{"order.created", "{}", std::nullopt}, std::nullopt));
    auto claimed = store.ClaimDue(10, std::chrono::hours(1), 16);
    EXPECT_TRUE(claimed && claimed->deliveries.size() == 1);
    return claimed && !claimed->deliveries.empty() ? claimed->deliveries[0] : ClaimedDelivery{};
  }
};

TEST_F(CredentialsPgTest, AReaderOfTheDatabaseSeesNoCredential) {
  auto store = StoreWith(kKey);
  const int64_t id = Create(*store);
  ASSERT_TRUE(store->RotateSecret(id, "whsec_" + std::string(32, 'Q'), std::chrono::hours(1),
                                  Scope::All()));
  const std::string stored = Stored();
  EXPECT_EQ(stored.find("whsec_"), std::string::npos) << stored;
  EXPECT_EQ(stored.find("tok_live"), std::string::npos) << stored;
  EXPECT_EQ(stored.find("payments"), std::string::npos) << stored;
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM (SELECT secret FROM destinations UNION ALL SELECT "
                       "secret FROM destination_secrets) s WHERE secret LIKE 'wse1:" +
                       EncryptionKeyId(kKey) + ":%'"),
            "2");
}

TEST_F(CredentialsPgTest, TheApiAndTheWorkerGetThePlaintextBack) {
  auto store = StoreWith(kKey);
  const int64_t id = Create(*store);
  auto got = store->GetDestination(id, Scope::All());
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->secret, kSecret);
  EXPECT_EQ(got->headers, (Headers{{"Authorization", kToken}, {"X-Team", "payments"}}));

  ASSERT_TRUE(store->RotateSecret(id, "whsec_" + std::string(32, 'Q'), std::chrono::hours(1),
                                  Scope::All()));
  const ClaimedDelivery c = ClaimOne(*store);
  EXPECT_FALSE(c.credential_error);
  EXPECT_EQ(c.secrets, (std::vector<std::string>{"whsec_" + std::string(32, 'Q'), kSecret}));
  EXPECT_EQ(c.headers, (Headers{{"Authorization", kToken}, {"X-Team", "payments"}}));

  // A listing carries no credential at all.
  auto listed =
      store->ListDestinations({}, Page{.limit = 10, .before_id = std::nullopt}, Scope::All());
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->items.at(0).secret, "");
  EXPECT_EQ(listed->items.at(0).headers, (Headers{{"Authorization", ""}, {"X-Team", ""}}));
}

TEST_F(CredentialsPgTest, APatchedHeaderWithTheHiddenValueKeepsItsValue) {
  auto store = StoreWith(kKey);
  const int64_t id = Create(*store);
  DestinationFields patch;
  // Authorization as a GET showed it; X-Team changed; X-New given the marker literally.
  patch.headers = Headers{{"Authorization", "set"}, {"X-Team", "billing"}, {"X-New", "set"}};
  auto patched = store->UpdateDestination(id, patch, Scope::All());
  ASSERT_TRUE(patched) << patched.error().message;
  EXPECT_EQ(patched->headers,
            (Headers{{"Authorization", kToken}, {"X-New", "set"}, {"X-Team", "billing"}}));
  // Headers left out are removed, as before.
  patch.headers = Headers{{"X-Team", "set"}};
  patched = store->UpdateDestination(id, patch, Scope::All());
  ASSERT_TRUE(patched);
  EXPECT_EQ(patched->headers, (Headers{{"X-Team", "billing"}}));
  EXPECT_EQ(Stored().find("billing"), std::string::npos);
}

TEST_F(CredentialsPgTest, AKeyChangeWithThePreviousKeyThenReencrypt) {
  int64_t id = 0;
  {
    auto before = StoreWith(std::nullopt);  // plaintext, from before any key
    id = Create(*before);
  }
  {
    auto first = StoreWith(kKey);
    ASSERT_TRUE(first->RotateSecret(id, "whsec_" + std::string(32, 'R'), std::chrono::hours(1),
                                    Scope::All()));
    auto census = first->CountCredentials();
    ASSERT_TRUE(census);
    // The rotated-out secret and both headers are still plaintext; the new secret is not.
    EXPECT_EQ(census->by_key_id,
              (std::map<std::string, int64_t>{{"", 3}, {EncryptionKeyId(kKey), 1}}));
  }
  auto changing = StoreWith(kNextKey, kKey);
  EXPECT_EQ(ClaimOne(*changing).secrets,
            (std::vector<std::string>{"whsec_" + std::string(32, 'R'), kSecret}));
  auto rewritten = changing->ReencryptCredentials();
  ASSERT_TRUE(rewritten) << rewritten.error().message;
  EXPECT_EQ(*rewritten, 4);
  EXPECT_EQ(*changing->ReencryptCredentials(), 0) << "a second run has nothing to do";
  EXPECT_EQ(changing->CountCredentials()->by_key_id,
            (std::map<std::string, int64_t>{{EncryptionKeyId(kNextKey), 4}}));

  // Without the previous key now: everything opens under the new one.
  auto after = StoreWith(kNextKey);
  auto got = after->GetDestination(id, Scope::All());
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->secret, "whsec_" + std::string(32, 'R'));
  EXPECT_EQ(got->headers, (Headers{{"Authorization", kToken}, {"X-Team", "payments"}}));
}

TEST_F(CredentialsPgTest, WithoutTheKeyNothingIsSentAndNothingLeaks) {
  auto keyed = StoreWith(kKey);
  const int64_t id = Create(*keyed);
  auto keyless = StoreWith(std::nullopt);
  auto got = keyless->GetDestination(id, Scope::All());
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().kind, ErrorKind::kInternal);
  EXPECT_NE(got.error().message.find(EncryptionKeyId(kKey)), std::string::npos);
  const ClaimedDelivery c = ClaimOne(*keyless);
  ASSERT_TRUE(c.credential_error);
  for (const auto& secret : c.secrets) EXPECT_EQ(secret, "");
  for (const auto& header : c.headers) EXPECT_EQ(header.second, "");
  // A reencrypt under another key fails whole and writes nothing.
  const std::string before = Stored();
  auto other = StoreWith(kNextKey);
  EXPECT_FALSE(other->ReencryptCredentials());
  EXPECT_EQ(Stored(), before);
  EXPECT_FALSE(keyless->ReencryptCredentials()) << "no key to encrypt with";
}

}  // namespace
}  // namespace webhookd::credentials_pgtest
