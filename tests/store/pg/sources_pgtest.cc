// Inbound sources in PostgreSQL (docs/inbound.md): their secrets at rest, and the
// duplicate key that makes a provider's retry, however it races, no second event.
#include <gtest/gtest.h>

#include <future>
#include <set>
#include <vector>

#include "base/secret_box.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::testing::sources_pgtest {
namespace {

const std::string kKey(32, 'a');
const std::string kNextKey(32, 'b');

class SourcesPgTest : public PgTest {
 protected:
  std::unique_ptr<pg::PgStore> StoreWith(std::optional<std::string> key,
                                         std::optional<std::string> previous = std::nullopt,
                                         int connections = 2) {
    return std::make_unique<pg::PgStore>(
        db_.url(), pg::PgStore::Options{.api_connections = connections,
                                        .committers = 0,
                                        .worker_connections = 1,
                                        .secrets = SecretBox(std::move(key), std::move(previous))});
  }

  static Source Github(const std::string& secret) {
    Source s;
    s.settings.provider = InboundProvider::kGithub;
    s.secret = secret;
    return s;
  }

  static InboundEvent EventOf(const Source& source, int64_t generation, const std::string& key) {
    InboundEvent e;
    e.source_id = source.id;
    e.provider = source.settings.provider;
    e.type = "github.push";
    e.payload = R"({"ref":"main"})";
    e.dedupe_key = key;
    e.generation = generation;
    return e;
  }
};

TEST_F(SourcesPgTest, SecretsAreSealedCountedAndResealedUnderTheNextKey) {
  auto store = StoreWith(kKey);
  auto created = store->CreateSource(Github("first-secret"));
  ASSERT_TRUE(created) << created.error().message;
  ASSERT_TRUE(
      store->RotateSourceSecret(created->id, "second-secret", std::chrono::hours(1), Scope::All()));
  const std::string stored = db_.Scalar("SELECT secret || ' ' || previous_secret FROM sources");
  EXPECT_EQ(stored.find("secret"), std::string::npos) << stored;
  auto census = store->CountCredentials();
  ASSERT_TRUE(census);
  EXPECT_EQ(census->by_key_id[EncryptionKeyId(kKey)], 2);

  auto next = StoreWith(kNextKey, kKey);
  auto rewritten = next->ReencryptCredentials();
  ASSERT_TRUE(rewritten) << rewritten.error().message;
  EXPECT_EQ(*rewritten, 2);
  EXPECT_EQ(next->CountCredentials()->by_key_id[EncryptionKeyId(kNextKey)], 2);
  auto loaded = StoreWith(kNextKey)->LoadSources();
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->sources.size(), 1u);
  EXPECT_EQ(loaded->sources[0].secret, "second-secret");
  EXPECT_EQ(loaded->sources[0].previous_secret, "first-secret");
}

TEST_F(SourcesPgTest, ConcurrentRequestsWithOneKeyMakeOneEventAndAllNameIt) {
  auto store = StoreWith(std::nullopt, std::nullopt, 8);
  auto source = store->CreateSource(Github("s"));
  ASSERT_TRUE(source);
  const int64_t generation = *store->SourceGeneration();
  for (int round = 0; round < 5; ++round) {
    const std::string key = "delivery-" + N(round);
    std::vector<std::future<Result<InboundReceipt>>> racing;
    for (int i = 0; i < 8; ++i) {
      racing.push_back(std::async(std::launch::async, [&] {
        return store->InsertInboundEvent(EventOf(*source, generation, key));
      }));
    }
    std::set<int64_t> ids;
    int fresh = 0;
    for (auto& r : racing) {
      auto receipt = r.get();
      ASSERT_TRUE(receipt) << receipt.error().message;
      ids.insert(receipt->event_id);
      if (!receipt->duplicate) ++fresh;
    }
    EXPECT_EQ(ids.size(), 1u) << key;
    EXPECT_EQ(fresh, 1) << key;
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "5");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM source_keys"), "5");
}

TEST_F(SourcesPgTest, AKeyLastsAsLongAsItsEventAndAStaleGenerationWritesNothing) {
  auto source = store_.CreateSource(Github("s"));
  ASSERT_TRUE(source);
  const int64_t generation = *store_.SourceGeneration();
  auto first = store_.InsertInboundEvent(EventOf(*source, generation, "k"));
  ASSERT_TRUE(first);
  EXPECT_TRUE(store_.InsertInboundEvent(EventOf(*source, generation, "k"))->duplicate);
  // The event goes (its retention ended): the provider's next request with the key is new.
  db_.Exec("DELETE FROM events WHERE id = " + N(first->event_id));
  auto again = store_.InsertInboundEvent(EventOf(*source, generation, "k"));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->duplicate);
  EXPECT_NE(again->event_id, first->event_id);
  EXPECT_EQ(db_.Scalar("SELECT event_id FROM source_keys"), N(again->event_id));

  // Any change to the sources makes a request verified before it stale.
  ASSERT_TRUE(store_.RotateSourceSecret(source->id, "t", Duration::zero(), Scope::All()));
  auto stale = store_.InsertInboundEvent(EventOf(*source, generation, "k2"));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().kind, ErrorKind::kStale);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "1");
}

TEST_F(SourcesPgTest, ADroppedDayTakesItsEventsKeysAndAKeptEventKeepsItsKey) {
  // Only the "kept" event has a delivery, unfinished when its day goes.
  CreateDestination(TestDestination({"github.kept"}));
  auto source = store_.CreateSource(Github("s"));
  ASSERT_TRUE(source);
  const int64_t generation = *store_.SourceGeneration();
  InboundEvent gone = EventOf(*source, generation, "gone");
  InboundEvent kept = EventOf(*source, generation, "kept");
  kept.type = "github.kept";
  ASSERT_TRUE(store_.InsertInboundEvent(gone));
  auto kept_first = store_.InsertInboundEvent(kept);
  ASSERT_TRUE(kept_first);

  auto dropped = store_.DropAgedDays(SystemClock().Now() + std::chrono::hours(48), 1);
  ASSERT_TRUE(dropped) << dropped.error().message;
  ASSERT_EQ(dropped->days, 1);
  EXPECT_EQ(db_.Scalar("SELECT string_agg(dedupe_key, ',') FROM source_keys"), "kept");
  // Today's partitions went with the day, so no event can be written now: the kept key
  // still names the kept event.
  EXPECT_EQ(db_.Scalar("SELECT event_id FROM source_keys"), N(kept_first->event_id));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events_kept WHERE id = " + N(kept_first->event_id)),
            "1");
}

TEST_F(SourcesPgTest, APurgedEventTakesItsKeyWithIt) {
  auto source = store_.CreateSource(Github("s"));
  ASSERT_TRUE(source);
  const int64_t generation = *store_.SourceGeneration();
  ASSERT_TRUE(store_.InsertInboundEvent(EventOf(*source, generation, "purged")));
  // A retention under a day purges finished events row by row, whatever their day.
  auto purged = store_.PurgeExpired(Duration(1), 100);
  ASSERT_TRUE(purged) << purged.error().message;
  EXPECT_EQ(*purged, 1);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM source_keys"), "0");
}

}  // namespace
}  // namespace webhookd::testing::sources_pgtest
