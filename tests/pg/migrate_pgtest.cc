// `webhookd migrate` on a real PostgreSQL: each file once, in its own transaction,
// safe to run concurrently and repeatedly, and readiness follows it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/migrator.h"
#include "store/pg/pg_store.h"
#include "tests/testing/test_database.h"

namespace webhookd {
namespace {

using testing::TestDatabase;

const std::vector<std::string> kTables = {"api_keys",         "destinations",     "events",
                                          "deliveries",       "attempts",         "dead_letters",
                                          "idempotency_keys", "schema_migrations"};

bool TableExists(TestDatabase& db, const std::string& table) {
  return db.Scalar("SELECT to_regclass('public." + table + "') IS NOT NULL") == "t";
}

std::string Applied(TestDatabase& db) {
  return db.Scalar("SELECT string_agg(version, ',' ORDER BY version) FROM schema_migrations");
}

// Every embedded version, in order, as Applied() prints them.
std::string AllVersions() {
  std::string all;
  for (const auto& m : pg::EmbeddedMigrations()) all += (all.empty() ? "" : ",") + m.version;
  return all;
}

TEST(MigrateTest, AnEmptyDatabaseGetsEveryTableAndTheRecord) {
  TestDatabase db(false);
  for (const auto& table : kTables) ASSERT_FALSE(TableExists(db, table)) << table;

  auto applied = pg::Migrate(db.url(), pg::EmbeddedMigrations());
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_THAT(*applied, ::testing::ElementsAre("0001_init", "0002_claim_by_destination",
                                               "0003_claim_function"));
  for (const auto& table : kTables) EXPECT_TRUE(TableExists(db, table)) << table;
  EXPECT_EQ(Applied(db), "0001_init,0002_claim_by_destination,0003_claim_function");
  EXPECT_EQ(Applied(db), AllVersions());
}

TEST(MigrateTest, TheSecondRunAppliesNothingAndKeepsTheData) {
  TestDatabase db(false);
  ASSERT_TRUE(pg::Migrate(db.url(), pg::EmbeddedMigrations()));
  db.Exec("INSERT INTO destinations (url, secret) VALUES ('https://example.com/a', 'whsec_x')");
  db.Exec("INSERT INTO api_keys (role, key_hash) VALUES ('admin', 'abc')");

  auto again = pg::Migrate(db.url(), pg::EmbeddedMigrations());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(Applied(db), AllVersions());
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys"), "1");
}

TEST(MigrateTest, TwoConcurrentRunsOnAnEmptyDatabaseBothSucceedAndApplyEachFileOnce) {
  for (int round = 0; round < 3; ++round) {
    TestDatabase db(false);
    std::latch start(2);
    Result<std::vector<std::string>> results[2];
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        results[i] = pg::Migrate(db.url(), pg::EmbeddedMigrations());
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& r : results) ASSERT_TRUE(r) << r.error().message;
    // Between them the runs applied each file once.
    EXPECT_EQ(results[0]->size() + results[1]->size(), pg::EmbeddedMigrations().size())
        << "round " << round;
    EXPECT_EQ(Applied(db), AllVersions());
    EXPECT_EQ(db.Scalar("SELECT count(*) FROM schema_migrations WHERE version = '0001_init'"), "1");
    for (const auto& table : kTables) EXPECT_TRUE(TableExists(db, table)) << table;
  }
}

TEST(MigrateTest, AFailingMigrationLeavesNoTrace) {
  TestDatabase db(false);
  std::vector<pg::Migration> migrations(pg::EmbeddedMigrations().begin(),
                                        pg::EmbeddedMigrations().end());
  migrations.push_back({"9999_bad", "CREATE TABLE x (a int); SELECT 1/0;"});

  auto r = pg::Migrate(db.url(), migrations);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("9999_bad"));
  EXPECT_FALSE(TableExists(db, "x"));
  // The good files before it stay applied, each in its own transaction.
  EXPECT_EQ(Applied(db), AllVersions());
  EXPECT_TRUE(TableExists(db, "deliveries"));

  // Still failing on a second run, still without a trace, and the good files untouched.
  auto again = pg::Migrate(db.url(), migrations);
  ASSERT_FALSE(again);
  EXPECT_FALSE(TableExists(db, "x"));
  EXPECT_EQ(Applied(db), AllVersions());
}

TEST(MigrateTest, ReadyOnlyOnceEveryMigrationIsApplied) {
  TestDatabase db(false);
  pg::PgStore store(db.url(), 1);
  auto before = store.Ready();
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_FALSE(*before);

  ASSERT_TRUE(pg::Migrate(db.url(), pg::EmbeddedMigrations()));
  auto after = store.Ready();
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_TRUE(*after);

  // A database missing a known migration is not ready.
  db.Exec("DELETE FROM schema_migrations WHERE version = '0001_init'");
  auto missing = store.Ready();
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_FALSE(*missing);
}

}  // namespace
}  // namespace webhookd
