// `webhookd migrate` on a real PostgreSQL: each file once, in its own transaction,
// safe to run concurrently and repeatedly, and readiness follows it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/migrator.h"
#include "store/pg/pg_store.h"
#include "tests/testing/test_database.h"

namespace webhookd::migrate_pgtest {
namespace {

using testing::TestDatabase;

const std::vector<std::string> kTables = {"api_keys",
                                          "destinations",
                                          "events",
                                          "deliveries",
                                          "attempts",
                                          "dead_letters",
                                          "idempotency_keys",
                                          "schema_migrations",
                                          "sources",
                                          "source_keys",
                                          "recoveries",
                                          "destination_stats",
                                          "destination_stats_hours"};

bool TableExists(TestDatabase& db, const std::string& table) {
  return db.Scalar("SELECT to_regclass('webhookd." + table + "') IS NOT NULL") == "t";
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
  EXPECT_TRUE(applied->definitions);
  EXPECT_THAT(
      applied->versions,
      ::testing::ElementsAre("0034_baseline", "0035_delivery_queue", "0036_subjects",
                             "0037_queue_counts", "0038_history_days", "0039_broker_destinations",
                             "0040_fifo_heads_with_their_keys", "0041_sources", "0042_recoveries",
                             "0043_feed_fallback", "0044_destination_stats",
                             "0045_destination_stats_hours", "0046_recovery_passes"));
  for (const auto& table : kTables) EXPECT_TRUE(TableExists(db, table)) << table;
  EXPECT_EQ(Applied(db), AllVersions());
  // Nothing of webhookd's lands in public, where the application's own tables live.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), "0");
  EXPECT_EQ(Applied(db), AllVersions());
}

TEST(MigrateTest, TheSecondRunAppliesNothingAndKeepsTheData) {
  TestDatabase db(false);
  ASSERT_TRUE(pg::Migrate(db.url(), pg::EmbeddedMigrations()));
  db.Exec("INSERT INTO destinations (url, secret) VALUES ('https://example.com/a', 'whsec_x')");
  db.Exec("INSERT INTO api_keys (role, key_hash) VALUES ('admin', 'abc')");

  auto again = pg::Migrate(db.url(), pg::EmbeddedMigrations());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->versions.empty());
  EXPECT_FALSE(again->definitions);
  EXPECT_EQ(Applied(db), AllVersions());
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys"), "1");
}

TEST(MigrateTest, TwoConcurrentRunsOnAnEmptyDatabaseBothSucceedAndApplyEachFileOnce) {
  for (int round = 0; round < 3; ++round) {
    TestDatabase db(false);
    std::latch start(2);
    Result<pg::Migrated> results[2];
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
    EXPECT_EQ(results[0]->versions.size() + results[1]->versions.size(),
              pg::EmbeddedMigrations().size())
        << "round " << round;
    // And the schema files once.
    EXPECT_NE(results[0]->definitions, results[1]->definitions) << "round " << round;
    EXPECT_EQ(Applied(db), AllVersions());
    EXPECT_EQ(db.Scalar("SELECT count(*) FROM schema_migrations WHERE version = '0034_baseline'"),
              "1");
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
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 1});
  auto before = store.Ready();
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_FALSE(*before);

  ASSERT_TRUE(pg::Migrate(db.url(), pg::EmbeddedMigrations()));
  auto after = store.Ready();
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_TRUE(*after);

  // A database missing a known migration is not ready.
  db.Exec("DELETE FROM schema_migrations WHERE version = '0034_baseline'");
  auto missing = store.Ready();
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_FALSE(*missing);
  db.Exec("INSERT INTO schema_migrations (version) VALUES ('0034_baseline')");

  // Nor one missing the binary's schema files.
  db.Exec("DELETE FROM schema_definitions");
  auto without_schema = store.Ready();
  ASSERT_TRUE(without_schema) << without_schema.error().message;
  EXPECT_FALSE(*without_schema);
  ASSERT_TRUE(pg::Migrate(db.url(), pg::EmbeddedMigrations()));
  auto again = store.Ready();
  ASSERT_TRUE(again && *again);
}

// The embedded schema files plus a probe function, as a binary with newer definitions has
// them.
pg::Schema NewerSchema(const std::string& extra_file) {
  pg::Schema schema = pg::EmbeddedSchema();
  schema.hash += "-newer";
  schema.files.push_back({"schema_probe",
                          "CREATE OR REPLACE FUNCTION webhookd.schema_probe() RETURNS int LANGUAGE "
                          "sql AS 'SELECT 1'"});
  if (!extra_file.empty()) schema.files.push_back({"zz_broken", extra_file});
  return schema;
}

bool ProbeExists(TestDatabase& db) {
  return db.Scalar("SELECT to_regproc('webhookd.schema_probe') IS NOT NULL") == "t";
}

TEST(MigrateTest, SchemaFilesWithANewHashAreAppliedOnceAfterTheMigrations) {
  TestDatabase db(true);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM schema_definitions"), "1");
  ASSERT_FALSE(ProbeExists(db));

  auto newer = pg::Migrate(db.url(), pg::EmbeddedMigrations(), NewerSchema(""));
  ASSERT_TRUE(newer) << newer.error().message;
  EXPECT_TRUE(newer->versions.empty());
  EXPECT_TRUE(newer->definitions);
  EXPECT_TRUE(ProbeExists(db));
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM schema_definitions"), "2");

  // Applied once: dropping what it made shows whether a second run applies it again.
  db.Exec("DROP FUNCTION webhookd.schema_probe()");
  ASSERT_TRUE(pg::Migrate(db.url(), pg::EmbeddedMigrations(), NewerSchema("")));
  EXPECT_FALSE(ProbeExists(db));
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM schema_definitions"), "2");
}

TEST(MigrateTest, AFailingSchemaFileLeavesNoTrace) {
  TestDatabase db(true);
  auto r = pg::Migrate(db.url(), pg::EmbeddedMigrations(), NewerSchema("SELECT 1/0"));
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("zz_broken.sql"));
  // The files before it went with it, and the hash is not recorded.
  EXPECT_FALSE(ProbeExists(db));
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM schema_definitions"), "1");
}

// A database made by a release before 0.2 (tables in public) is named, not taken for an
// empty one: the migration that moved it into schema webhookd (0004) is in the baseline's
// past. Nothing is written, and the application's own tables stay as they are.
TEST(MigrateTest, AnInstallationInPublicIsSentToThePreviousReleaseUntouched) {
  TestDatabase db(false);
  {
    auto conn = std::make_unique<pqxx::connection>(db.url());
    pqxx::nontransaction tx(*conn);
    tx.exec(
        "CREATE TABLE public.schema_migrations (version text PRIMARY KEY,"
        " applied_at timestamptz NOT NULL DEFAULT now());"
        "INSERT INTO public.schema_migrations (version) VALUES ('0001_init'),"
        " ('0002_claim_by_destination'), ('0003_claim_function');"
        "CREATE TABLE public.destinations (id bigint PRIMARY KEY, url text NOT NULL);"
        "CREATE TABLE public.deliveries (id bigint PRIMARY KEY);"
        "INSERT INTO public.destinations VALUES (1, 'https://example.com/a');"
        "CREATE TABLE public.orders (id int PRIMARY KEY); INSERT INTO public.orders VALUES (42)");
  }
  auto r = pg::Migrate(db.url(), pg::EmbeddedMigrations());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("before 0.2"));
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("last release before the baseline"));
  EXPECT_EQ(db.Scalar("SELECT to_regnamespace('webhookd') IS NULL"), "t");
  EXPECT_EQ(db.Scalar("SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables"
                      " WHERE schemaname = 'public'"),
            "deliveries,destinations,orders,schema_migrations");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM public.destinations"), "1");
}

}  // namespace
}  // namespace webhookd::migrate_pgtest
