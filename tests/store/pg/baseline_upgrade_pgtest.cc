// migrations/0034_baseline.sql replaced migrations 0001-0034: a database those migrations
// built, with its data, and one made from the baseline end `webhookd migrate` with the
// same catalog (pg_dump --schema-only) and give the same answers to the API.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "store/pg/migrator.h"
#include "tests/testing/process.h"
#include "tests/testing/release_history.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::baseline_upgrade_pgtest {
namespace {

// The last commit before the baseline: its migrations/ and store/pg/schema/ are how a
// database of the releases before it was made. Read from the repository's history, which
// a clean clone has in full.
constexpr const char* kPreBaselineCommit = "82c9209c3cd085fcaa17c3939bffe8c9c505e690";

std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The commit's files, from the repository's history (tests/testing/release_history.h).
std::string AtCommit(const std::string& path) { return FileAtCommit(kPreBaselineCommit, path); }

std::vector<std::string> FilesAtCommit(const std::string& dir) {
  return SqlFilesAtCommit(kPreBaselineCommit, dir);
}

std::string Stem(const std::string& path) {
  const auto slash = path.rfind('/');
  return path.substr(slash + 1, path.size() - slash - 1 - 4);
}

// What `webhookd migrate` of the commit made: its migrations in order, each with its
// record, then its schema files in name order with function bodies unchecked.
void MigrateAsBeforeTheBaseline(const std::string& url) {
  pqxx::connection conn(url);
  {
    pqxx::nontransaction tx(conn);
    for (const char* script :
         {"create_schema", "create_migrations_table", "create_schema_definitions_table"}) {
      tx.exec(AtCommit(std::string("store/pg/sql/scripts/") + script + ".sql"));
    }
  }
  const auto migrations = FilesAtCommit("migrations");
  ASSERT_EQ(migrations.size(), 33u);
  for (const auto& path : migrations) {
    pqxx::work tx(conn);
    tx.exec(AtCommit(path));
    tx.exec_params("INSERT INTO schema_migrations (version) VALUES ($1)", Stem(path));
    tx.commit();
  }
  pqxx::work tx(conn);
  tx.exec("SET LOCAL check_function_bodies = off");
  for (const auto& path : FilesAtCommit("store/pg/schema")) tx.exec(AtCommit(path));
  tx.exec_params("INSERT INTO schema_definitions (hash) VALUES ($1)",
                 std::string("as at ") + kPreBaselineCommit);
  // Stand-ins for what an older path through the migrations might have left: a
  // function's earlier signature, a renamed one, and a trigger and a view no file
  // defines. The commit's own migrations leave none; the upgrade must drop these.
  tx.exec(
      "CREATE FUNCTION webhookd.publish(type text, payload text, tenant_id text,"
      "  destination_id text, idempotency_key text, ordering_key text) RETURNS text"
      "  LANGUAGE sql AS 'SELECT NULL::text';"
      "CREATE FUNCTION webhookd.webhookd_claim(integer, bigint, bigint, integer) RETURNS void"
      "  LANGUAGE sql AS '';"
      "CREATE FUNCTION webhookd.old_touch() RETURNS trigger LANGUAGE plpgsql"
      "  AS 'BEGIN RETURN NEW; END';"
      "CREATE TRIGGER old_touch BEFORE UPDATE ON webhookd.events"
      "  FOR EACH ROW EXECUTE FUNCTION webhookd.old_touch();"
      "CREATE VIEW webhookd.old_pending AS SELECT id FROM webhookd.deliveries"
      "  WHERE status = 'pending'");
  tx.commit();
}

constexpr const char* kTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

// The same rows in both databases, through SQL: destinations, events and their
// deliveries by webhookd.publish(), an attempt, a dead letter, a tenant's key.
void InsertData(const std::string& url) {
  auto conn = TestDatabase::Connect(url);
  pqxx::work tx(*conn);
  tx.exec(
      "INSERT INTO destinations (url, secret, description, event_types) VALUES"
      " ('https://a.example/hook', 'whsec_dGVzdHNlY3JldGE=', 'orders', '{order.*}'),"
      " ('https://b.example/hook', 'whsec_dGVzdHNlY3JldGI=', 'all', '{}');"
      "INSERT INTO destinations (url, secret, tenant_id, ordering) VALUES"
      " ('https://c.example/hook', 'whsec_dGVzdHNlY3JldGM=', 'acme', 'fifo');");
  tx.exec_params("SELECT webhookd.publish('order.created', '{\"n\": 1}', traceparent => $1)",
                 std::string(kTraceparent));
  tx.exec_params(
      "SELECT webhookd.publish('order.paid', '{\"n\": 2}', tenant_id => 'acme',"
      " ordering_key => 'cart-7', traceparent => $1)",
      std::string(kTraceparent));
  tx.exec_params(
      "SELECT webhookd.publish('user.created', '{\"user\": {\"id\": 3}}',"
      " idempotency_key => 'once', traceparent => $1)",
      std::string(kTraceparent));
  tx.exec(
      "UPDATE deliveries SET status = 'dead_lettered', attempt_count = 1,"
      " last_attempt_at = now(), last_status_code = 500, last_error = 'HTTP 500'"
      " WHERE id = (SELECT min(id) FROM deliveries);"
      "INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms,"
      " status_code, error, response_body, outcome)"
      " SELECT min(id), 1, now(), 12, 500, 'HTTP 500', 'oops', 'permanent' FROM deliveries;"
      "INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason,"
      " attempt_count, last_status_code, last_error)"
      " SELECT id, event_id, destination_id, 'permanent_failure', 1, 500, 'HTTP 500'"
      " FROM deliveries WHERE id = (SELECT min(id) FROM deliveries);"
      "INSERT INTO api_keys (name, role, key_hash, tenant_id)"
      " VALUES ('acme portal', 'tenant', repeat('ab', 32), 'acme');");
  // Since migrations/0035_delivery_queue.sql a dead letter has left the queue and says when
  // it stopped, as the upgrade leaves the one written above.
  tx.exec(
      "DO $$ BEGIN IF to_regclass('webhookd.delivery_queue') IS NOT NULL THEN"
      " DELETE FROM webhookd.delivery_queue"
      "  WHERE id = (SELECT min(id) FROM webhookd.deliveries);"
      " UPDATE webhookd.deliveries SET stopped_as = status"
      "  WHERE id = (SELECT min(id) FROM webhookd.deliveries);"
      " END IF; END $$");
  tx.commit();
}

// The lines of `a` that `b` lacks, for a message shorter than two whole dumps.
std::string LinesOnlyIn(const std::string& a, const std::string& b) {
  std::multiset<std::string> others;
  std::istringstream in_b(b);
  for (std::string line; std::getline(in_b, line);) others.insert(line);
  std::string out;
  std::istringstream in_a(a);
  for (std::string line; std::getline(in_a, line);) {
    if (auto it = others.find(line); it != others.end()) {
      others.erase(it);
    } else {
      out += "  " + line + "\n";
    }
  }
  return out;
}

std::string MigrateWithTheBinary(const std::string& url) {
  auto [code, out] = WebhookdProcess::RunCommand({"migrate"}, {{"DATABASE_URL", url}});
  EXPECT_EQ(code, 0) << out;
  return out;
}

// pg_dump --schema-only, less the \restrict and \unrestrict lines: their key is drawn at
// random by each run of pg_dump, whatever the database.
std::string SchemaDump(const std::string& url) {
  const char* bin = std::getenv("WEBHOOKD_TEST_PG_BIN");
  const std::string pg_dump =
      bin != nullptr && *bin != '\0' ? std::string(bin) + "/pg_dump" : "pg_dump";
  auto [status, dump] = RunCommand(pg_dump + " --schema-only --dbname=" + Quoted(url));
  EXPECT_EQ(status, 0) << "pg_dump failed";
  static const std::regex kRestrict(R"(^\\(un)?restrict .*$)", std::regex::multiline);
  // A day's bounds follow its rows: an upgraded database's first day begins where its
  // earlier ids do, a fresh one's at the day's first id (migrations/0038_history_days.sql).
  static const std::regex kBounds(R"(FOR VALUES FROM \([^)]*\) TO \([^)]*\))");
  return std::regex_replace(std::regex_replace(dump, kRestrict, ""), kBounds,
                            "FOR VALUES FROM (<bound>) TO (<bound>)");
}

// The API's answers, with the times normalised (each database stamped its rows, and the
// builtin event types, when it was made or written) and the ids of the history too: both
// databases numbered the same rows in the same order, but a fresh one's ids carry their
// day (migrations/0038_history_days.sql), so each id is written as its rank.
std::string Answers(const WebhookdProcess& webhookd, const std::string& url) {
  static const std::regex kTime(
      R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))");
  static const std::regex kId(R"((evt|dlv|dlq)_(\d+))");
  std::map<std::string, std::string> rank;
  auto conn = TestDatabase::Connect(url);
  pqxx::nontransaction tx(*conn);
  for (const auto& [prefix, table] : std::vector<std::pair<std::string, std::string>>{
           {"evt", "events"}, {"dlv", "deliveries"}, {"dlq", "dead_letters"}}) {
    int n = 0;
    for (const auto& row : tx.exec("SELECT id FROM " + table + " ORDER BY id")) {
      rank[prefix + "_" + row[0].c_str()] = prefix + "_#" + std::to_string(++n);
    }
  }
  auto ranked = [&](const std::string& text) {
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), kId);
    size_t at = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += text.substr(at, it->position() - at);
      const auto found = rank.find(it->str());
      out += found != rank.end() ? found->second : it->str();
      at = it->position() + it->length();
    }
    return out + text.substr(at);
  };
  const std::string second_event = tx.exec("SELECT id FROM events ORDER BY id")[1][0].c_str();
  const std::string first_delivery = tx.exec1("SELECT min(id) FROM deliveries")[0].c_str();
  std::string all;
  for (const std::string& path :
       {std::string("/v1/destinations"), std::string("/v1/destinations/dst_3"),
        std::string("/v1/events"), "/v1/events/evt_" + second_event, std::string("/v1/deliveries"),
        "/v1/deliveries/dlv_" + first_delivery + "/attempts", std::string("/v1/admin/dead-letters"),
        std::string("/v1/event-types"), std::string("/v1/admin/tenants"),
        std::string("/v1/admin/stats")}) {
    const auto r = webhookd.Call("GET", path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    all += ranked(path) + " " + std::to_string(r.status) + "\n" +
           ranked(std::regex_replace(r.body, kTime, "<time>")) + "\n";
  }
  return all;
}

TEST(BaselineUpgradeTest, ADatabaseAt0034AndAFreshOneEndWithOneCatalogAndOneAnswer) {
  TestDatabase before(false);
  MigrateAsBeforeTheBaseline(before.url());
  ASSERT_FALSE(::testing::Test::HasFailure());
  InsertData(before.url());
  const std::string upgraded = MigrateWithTheBinary(before.url());
  EXPECT_NE(upgraded.find("recorded 0034_baseline"), std::string::npos) << upgraded;

  TestDatabase fresh(false);
  MigrateWithTheBinary(fresh.url());
  InsertData(fresh.url());

  // The catalog: tables, indexes, constraints, functions, triggers, views, grants.
  const std::string want = SchemaDump(fresh.url());
  ASSERT_NE(want.find("CREATE TABLE webhookd.deliveries"), std::string::npos);
  const std::string got = SchemaDump(before.url());
  EXPECT_TRUE(got == want) << "only in the upgraded database:\n"
                           << LinesOnlyIn(got, want) << "only in the fresh one:\n"
                           << LinesOnlyIn(want, got);

  // Both are ready, with the baseline recorded, and a second run applies nothing.
  for (const std::string& url : {before.url(), fresh.url()}) {
    auto conn = TestDatabase::Connect(url);
    pqxx::nontransaction tx(*conn);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM schema_migrations WHERE version = '0034_baseline'")[0]
                  .as<int>(),
              1);
    auto again = pg::Migrate(url, pg::EmbeddedMigrations());
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_TRUE(again->versions.empty());
    EXPECT_FALSE(again->definitions);
  }

  // The answers, from `webhookd server` on each, with one admin key.
  const std::map<std::string, std::string> env = {
      {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", "whk_test_baselineupgradeadminkey0000000000000"}};
  std::string old_answers;
  {
    WebhookdProcess webhookd(before.url(), "server", env);
    old_answers = Answers(webhookd, before.url());
  }
  WebhookdProcess webhookd(fresh.url(), "server", env);
  const std::string new_answers = Answers(webhookd, fresh.url());
  ASSERT_NE(new_answers.find("dst_3"), std::string::npos) << new_answers;
  ASSERT_NE(new_answers.find("permanent_failure"), std::string::npos) << new_answers;
  EXPECT_EQ(old_answers, new_answers);
}

TEST(BaselineUpgradeTest, ADatabasePartWayIsRefusedAndLeftAsItWas) {
  TestDatabase db(false);
  {
    pqxx::connection conn(db.url());
    pqxx::nontransaction tx(conn);
    for (const char* script : {"create_schema", "create_migrations_table"}) {
      tx.exec(AtCommit(std::string("store/pg/sql/scripts/") + script + ".sql"));
    }
    for (const auto& path : FilesAtCommit("migrations")) {
      if (Stem(path).substr(0, 4) > "0020") break;
      tx.exec(AtCommit(path));
      tx.exec_params("INSERT INTO schema_migrations (version) VALUES ($1)", Stem(path));
    }
  }
  auto r = pg::Migrate(db.url(), pg::EmbeddedMigrations());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("0020_egress"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("last release before the baseline"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(db.Scalar("SELECT max(version) FROM schema_migrations"), "0020_egress");
  EXPECT_EQ(db.Scalar("SELECT to_regclass('webhookd.fifo_turns') IS NULL"), "t");
  EXPECT_EQ(db.Scalar("SELECT to_regclass('webhookd.schema_definitions') IS NULL"), "t");
}

}  // namespace
}  // namespace webhookd::testing::baseline_upgrade_pgtest
