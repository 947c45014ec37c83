// Every periodic or global statement beside a platform's data: bench/sql/platform.sql (the
// database scripts/bench measures at 10 million deliveries) at 100,000 destinations and
// 100,000 deliveries. Each statement is run under EXPLAIN (ANALYZE, BUFFERS): none may
// scan a big table sequentially, and each stays within a buffer bound far below what
// reading a tenth of the deliveries costs, so a plan that grows with idle data fails here
// and not only in the bench.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::platform_scale_pgtest {
namespace {

constexpr int kDestinations = 100000;
constexpr int kEvents = 20000;
constexpr int kFanout = 5;
constexpr int kPending = 10000;  // a tenth, as in the bench
constexpr int kAttempts = 10000;

struct Explained {
  int64_t buffers = 0;
  std::vector<std::string> seq_scans;  // the relations read sequentially
  std::string plan;                    // for the failure message
};

void Walk(const nlohmann::json& node, Explained& out) {
  // A partition of the week ahead is empty: read sequentially, it reads nothing.
  const int64_t read =
      node.value("Shared Hit Blocks", int64_t{0}) + node.value("Shared Read Blocks", int64_t{0});
  if (node.value("Node Type", "") == "Seq Scan" && read > 0) {
    out.seq_scans.push_back(node.value("Relation Name", ""));
  }
  if (node.contains("Plans")) {
    for (const auto& child : node["Plans"]) Walk(child, out);
  }
}

class PlatformScalePgTest : public testing::PgTest {
 protected:
  // The month's days (days.sql), then platform.sql.
  void LoadPlatform() {
    Load("days.sql");  // the month's days, as production has them
    Load("platform.sql");
  }

  // bench/sql/FILE with its psql variables given, one statement at a time (VACUUM may not
  // run in a transaction block); a query ended by psql's \gexec has each of its cells run
  // as a statement, as psql does.
  void Load(const std::string& file) {
    std::ifstream in(WEBHOOKD_SOURCE_DIR "/bench/sql/" + file);
    ASSERT_TRUE(in) << "cannot read bench/sql/" << file;
    std::stringstream text;
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("\\set") || line.starts_with("--")) continue;
      text << line << '\n';
    }
    std::string sql = text.str();
    const std::vector<std::pair<std::string, std::string>> vars = {
        {"tenants", "(" + testing::N(kDestinations) + " / 10)"},
        {"deliveries", "(" + testing::N(kEvents) + " * " + testing::N(kFanout) + ")"},
        {"destinations", testing::N(kDestinations)},
        {"events", testing::N(kEvents)},
        {"fanout", testing::N(kFanout)},
        {"pending", testing::N(kPending)},
        {"attempts", testing::N(kAttempts)},
        {"days", "30"}};
    for (const auto& [name, value] : vars) {
      sql = std::regex_replace(sql, std::regex(":" + name + "\\b"), value);
    }
    auto c = testing::TestDatabase::Connect(db_.url());
    size_t start = 0;
    while (start < sql.size()) {
      const size_t end = sql.find(";\n", start);
      std::string statement = sql.substr(start, end == std::string::npos ? end : end - start);
      if (const size_t gexec = statement.find("\\gexec\n"); gexec != std::string::npos) {
        for (const auto& row : pqxx::nontransaction(*c).exec(statement.substr(0, gexec))) {
          pqxx::nontransaction(*c).exec(row[0].c_str());
        }
        statement = statement.substr(gexec + 7);
      }
      if (statement.find_first_not_of(" \n") != std::string::npos) {
        pqxx::nontransaction(*c).exec(statement);
      }
      if (end == std::string::npos) break;
      start = end + 2;
    }
  }

  // `sql` with its $n parameters bound to `args` (SQL literals), run under EXPLAIN
  // ANALYZE in a transaction that is rolled back.
  Explained Explain(std::string_view sql, const std::vector<std::string>& args = {}) {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::work tx(*c);
    tx.exec("PREPARE measured AS " + std::string(sql));
    std::string execute = "EXECUTE measured";
    if (!args.empty()) {
      execute += "(";
      for (size_t i = 0; i < args.size(); ++i) execute += (i ? ", " : "") + args[i];
      execute += ")";
    }
    const auto r = tx.exec1("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + execute);
    const auto json = nlohmann::json::parse(r[0].as<std::string>());
    Explained out;
    const auto& plan = json[0]["Plan"];
    out.buffers =
        plan.value("Shared Hit Blocks", int64_t{0}) + plan.value("Shared Read Blocks", int64_t{0});
    Walk(plan, out);
    out.plan = json.dump(1);
    tx.abort();
    return out;
  }

  void ExpectCheap(const std::string& what, std::string_view sql,
                   const std::vector<std::string>& args, int64_t max_buffers) {
    SCOPED_TRACE(what);
    const Explained e = Explain(sql, args);
    // At this size attempts and dead letters are small enough that reading them whole
    // can be the better plan; scripts/bench shows their plans at full size.
    // A day's partition of the history is named for its day (events_p20261128); the kept
    // ones are small. Today's holds only what came since midnight (UTC), and the load's
    // first day only what came after the same time of day 30 days ago: late in the day
    // both are a few rows, which the planner rightly reads whole. Only the days between,
    // each a whole day of the load, must be read through an index.
    const std::string today = db_.Scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')");
    const std::string first =
        db_.Scalar("SELECT to_char((now() - interval '30 days') AT TIME ZONE 'UTC', 'YYYYMMDD')");
    const auto is_day_before_today = [&](const std::string& table, std::string_view prefix) {
      if (!table.starts_with(prefix)) return false;
      const std::string day = table.substr(prefix.size());
      return day > first && day < today;
    };
    for (const auto& table : e.seq_scans) {
      EXPECT_TRUE(!is_day_before_today(table, "deliveries_p") &&
                  !is_day_before_today(table, "events_p") && table != "destinations")
          << what << " reads " << table << " sequentially:\n"
          << e.plan;
    }
    EXPECT_LT(e.buffers, max_buffers) << what << " read " << e.buffers << " buffers:\n" << e.plan;
    RecordProperty(what, static_cast<int>(e.buffers));
  }
};

TEST_F(PlatformScalePgTest, PeriodicStatementsCostWhatTheyReturnNotWhatIsStored) {
  LoadPlatform();
  ASSERT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows"), testing::N(kEvents * kFanout));
  const std::string null = "NULL";
  const std::string hour = "3600000000";
  // The first read after the load moves its counter rows into the minutes (once).
  ASSERT_TRUE(store_.CountDeliveries());

  // Each statement runs on a new connection, so a few hundred buffers are the catalog read
  // to plan it (and the function's statements); the rest is data.
  ExpectCheap("the gauges", pg::sql::kCountDeliveries.sql, {}, 1000);
  ExpectCheap("stats over an hour", pg::sql::kStats.sql, {hour}, 1000);
  ExpectCheap("the chart over a day", pg::sql::kStatsSeries.sql, {"86400000000", hour}, 2000);
  ExpectCheap("the next due time", pg::sql::kNextDueAt.sql, {}, 300);
  ExpectCheap("the lease sweep", pg::sql::kRequeueExpired.sql, {}, 100);
  // The purge a history kept by days runs: the kept events only (each other event goes
  // with its day, store/pg/sql/carry_history_day.sql).
  ExpectCheap("a purge batch", pg::sql::kPurgeKeptEvents.sql, {"604800000000", "100"}, 300);
  // A statement that looks for a tenant's rows in every day reads a few buffers in each
  // day's partition, empty or not (those of the week ahead too): its cost grows with the
  // days kept, which the retention bounds, not with the rows.
  const int64_t days = std::stoll(db_.Scalar("SELECT count(*) FROM history_days"));
  // Per tenant of the page, per day: a probe of the events and one of the dead letters.
  ExpectCheap("the tenants", pg::sql::kListTenants.sql, {null, "51"}, 2000 + 51 * 4 * days);
  // A page of a status is an index range of its own size: the queue (pending),
  // attempts_succeeded or deliveries_stopped, with each row read in the history and
  // probed in the queue, about five buffers a row (160-260 here). The newest tenth are
  // pending: a plan that skipped them on the way to the succeeded read ~250 buffers more,
  // and one that walked the history for the cancelled (one in 1,000) about 2,500.
  // The page of a stopped status merges each day's deliveries_stopped: two more a day.
  for (const std::string status : {"pending", "succeeded", "dead_lettered", "cancelled"}) {
    ExpectCheap("deliveries " + status, pg::sql::kListDeliveriesOfStatus.sql,
                {null, "'" + status + "'", "51"}, 320 + 2 * days);
  }
  ExpectCheap("deliveries of a tenant", pg::sql::kListDeliveries.sql,
              {null, null, "'dead_lettered'", "51", "'tenant-42'", null}, 400);
  ExpectCheap(
      "events of a day", pg::sql::kListEvents.sql,
      {null, null, "now() - interval '2 days'", "now() - interval '1 day'", "51", null, null, null},
      400);
  ExpectCheap("dead letters of a week", pg::sql::kListDeadLetters.sql,
              {null, null, "now() - interval '7 days'", null, null, "51", null, null}, 400);
}

// The gauges read counters, not the queue: a backlog ten times the one above adds nothing
// to a scrape (before migration 0037 it cost one scan of the queue, 0.35 s per million
// queued deliveries at platform size).
TEST_F(PlatformScalePgTest, TheGaugesCostNothingMoreWithABacklog) {
  LoadPlatform();
  ASSERT_TRUE(store_.CountDeliveries());
  const int64_t before = Explain(pg::sql::kCountDeliveries.sql).buffers;
  const int64_t stats_before = Explain(pg::sql::kStats.sql, {"3600000000"}).buffers;
  db_.Exec(
      "INSERT INTO delivery_queue (id, destination_id, next_attempt_at, created_at)"
      " SELECT 1000000000 + g, 1 + g % 1000, now() + interval '1 hour',"
      "        now() - (g % 120) * interval '1 minute'"
      "   FROM generate_series(1, 100000) g");
  auto g = store_.CountDeliveries();  // moves the insert's counts into the minutes
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->pending, kPending + 100000);
  const int64_t after = Explain(pg::sql::kCountDeliveries.sql).buffers;
  const int64_t stats_after = Explain(pg::sql::kStats.sql, {"3600000000"}).buffers;
  // A scan of the backlog would read about 1,000 more; two hours of minutes, a few.
  EXPECT_LT(after - before, 20) << before << " buffers before, " << after << " after";
  EXPECT_LT(stats_after - stats_before, 20) << stats_before << " before, " << stats_after;
}

}  // namespace
}  // namespace webhookd::platform_scale_pgtest
