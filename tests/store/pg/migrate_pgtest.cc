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

namespace webhookd {
namespace {

using testing::TestDatabase;

const std::vector<std::string> kTables = {"api_keys",         "destinations",     "events",
                                          "deliveries",       "attempts",         "dead_letters",
                                          "idempotency_keys", "schema_migrations"};

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
      ::testing::ElementsAre(
          "0001_init", "0002_claim_by_destination", "0003_claim_function", "0004_schema_webhookd",
          "0005_secret_rotation", "0006_tenants", "0008_purge_indexes", "0009_publish",
          "0010_event_type_keys", "0011_protection", "0012_claim_pending_destinations",
          "0013_delivery_counts", "0014_due_destinations", "0015_list_indexes",
          "0016_producer_hardening", "0017_destination_quota", "0018_ordered_delivery",
          "0019_event_catalog", "0020_egress", "0021_trace_context", "0022_publish_trace_context",
          "0023_claim_returns_trace_context", "0024_claim_token_while_in_flight",
          "0025_claim_locks_its_share", "0026_queue_indexes_keep_one_entry_per_row",
          "0027_event_type_keys_in_plpgsql", "0028_delivery_rows", "0029_fifo_keys_take_turns",
          "0030_claim_reads_by_index_scans", "0031_parents_by_construction",
          "0032_purge_reads_only_old_events", "0033_filters_linear",
          "0034_plain_values_that_read_as_sealed"));
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
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 1});
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
  db.Exec("INSERT INTO schema_migrations (version) VALUES ('0001_init')");

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

// A database made by a release before 0.2 (tables in public, migrations 0001-0003 applied)
// moves into schema webhookd on `migrate` and keeps every row; a table of the
// application's own in public, with a name webhookd also uses, stays where it is.
TEST(MigrateTest, AnInstallationInPublicMovesIntoSchemaWebhookdWithEveryRow) {
  TestDatabase db(false);
  const auto all = pg::EmbeddedMigrations();
  {
    // The previous release: migrations ran with the default search_path (public).
    auto conn = std::make_unique<pqxx::connection>(db.url());
    pqxx::nontransaction tx(*conn);
    tx.exec(
        "CREATE TABLE schema_migrations (version text PRIMARY KEY,"
        " applied_at timestamptz NOT NULL DEFAULT now())");
    for (const auto& m : all.subspan(0, 3)) {
      tx.exec(m.sql);
      tx.exec_params("INSERT INTO schema_migrations (version) VALUES ($1)", m.version);
    }
    tx.exec(
        "INSERT INTO api_keys (name, role, key_hash) VALUES ('old', 'admin', 'h1');"
        "INSERT INTO destinations (url, secret) VALUES ('https://example.com/a', 'whsec_x');"
        "INSERT INTO events (type, payload) SELECT 'order.created', '{\"n\":' || g || '}'"
        "  FROM generate_series(1, 50) g;"
        "INSERT INTO deliveries (event_id, destination_id, next_attempt_at)"
        "  SELECT id, 1, now() FROM events;"
        "UPDATE deliveries SET status = 'dead_lettered' WHERE id <= 5;"
        // Two rows that break the rule 0024 states: a token on a finished delivery, and
        // an in-flight one without its token.
        "UPDATE deliveries SET status = 'succeeded', claim_token = 9 WHERE id = 6;"
        "UPDATE deliveries SET status = 'in_flight', lease_until = now() + interval '1 hour'"
        "  WHERE id = 7;"
        "INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, outcome)"
        "  SELECT id, 1, now(), 3, 'permanent' FROM deliveries WHERE id <= 5;"
        "INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, attempt_count)"
        "  SELECT id, event_id, 1, 'permanent_failure', 1 FROM deliveries WHERE id <= 5;"
        "INSERT INTO idempotency_keys (key, request_hash, event_id) VALUES ('k', 'h', 1);");
    // The application's own table, unrelated to webhookd.
    tx.exec(
        "CREATE TABLE public.orders (id int PRIMARY KEY); INSERT INTO public.orders VALUES (42)");
  }

  auto applied = pg::Migrate(db.url(), all);
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_THAT(
      applied->versions,
      ::testing::ElementsAre(
          "0004_schema_webhookd", "0005_secret_rotation", "0006_tenants", "0008_purge_indexes",
          "0009_publish", "0010_event_type_keys", "0011_protection",
          "0012_claim_pending_destinations", "0013_delivery_counts", "0014_due_destinations",
          "0015_list_indexes", "0016_producer_hardening", "0017_destination_quota",
          "0018_ordered_delivery", "0019_event_catalog", "0020_egress", "0021_trace_context",
          "0022_publish_trace_context", "0023_claim_returns_trace_context",
          "0024_claim_token_while_in_flight", "0025_claim_locks_its_share",
          "0026_queue_indexes_keep_one_entry_per_row", "0027_event_type_keys_in_plpgsql",
          "0028_delivery_rows", "0029_fifo_keys_take_turns", "0030_claim_reads_by_index_scans",
          "0031_parents_by_construction", "0032_purge_reads_only_old_events", "0033_filters_linear",
          "0034_plain_values_that_read_as_sealed"));
  for (const auto& table : kTables) EXPECT_TRUE(TableExists(db, table)) << table;
  EXPECT_EQ(db.Scalar("SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables"
                      " WHERE schemaname = 'public'"),
            "orders");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.events"), "50");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.deliveries"), "50");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.attempts"), "5");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.dead_letters"), "5");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.idempotency_keys"), "1");
  EXPECT_EQ(db.Scalar("SELECT key_hash FROM webhookd.api_keys"), "h1");
  EXPECT_EQ(Applied(db), AllVersions());
  EXPECT_EQ(db.Scalar("SELECT status || ':' || coalesce(claim_token::text, '-')"
                      " FROM webhookd.deliveries WHERE id = 6"),
            "succeeded:-");
  EXPECT_EQ(db.Scalar("SELECT status FROM webhookd.deliveries WHERE id = 7"), "pending");

  // The moved installation works: ids continue, the claim function is in place.
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 1});
  auto ready = store.Ready();
  ASSERT_TRUE(ready && *ready);
  auto receipt = store.InsertEvent(NewEvent{"order.created", "{}", std::nullopt}, std::nullopt);
  ASSERT_TRUE(receipt) << receipt.error().message;
  EXPECT_EQ(receipt->event.id, 51);
  ASSERT_EQ(receipt->event.deliveries.size(), 1u);
  auto claimed = store.ClaimDue(100, std::chrono::minutes(1), 1000);
  ASSERT_TRUE(claimed) << claimed.error().message;
  // The 43 pending moved ones, the one 0024 sent back from in flight, and the new one.
  EXPECT_EQ(claimed->deliveries.size(), 45u);
  // A second run moves nothing and applies nothing.
  auto again = pg::Migrate(db.url(), all);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->versions.empty());
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM public.orders"), "1");
}

}  // namespace
}  // namespace webhookd
