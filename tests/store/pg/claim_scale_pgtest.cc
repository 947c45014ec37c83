// The claim beside a platform's idle destinations: its cost must follow the destinations
// that have pending work, not every destination. Measured in shared buffers the claim
// touches (deterministic, unlike time): with 100,000 idle destinations of 10,000 tenants,
// the claim of migration 0011, before the baseline, read about 206,000 buffers; the claim that
// skips through the pending index (migration 0012, before the baseline) reads about 2,700, but as
// much as the first once each of those destinations has a retry waiting; the claim that visits only
// the due hints (migration 0014, before the baseline) reads a few hundred in both cases.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <thread>

#include "store/pg/pg_store.h"
#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::claim_scale_pgtest {
namespace {

using testing::N;

class ClaimScalePgTest : public testing::PgTest {
 protected:
  // The shared buffers this database's backends have hit, with this connection's own
  // counts flushed first.
  static int64_t BuffersHit(pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    tx.exec("SELECT pg_stat_force_next_flush()");
    return tx.exec1("SELECT blks_hit FROM pg_stat_database WHERE datname = current_database()")[0]
        .as<int64_t>();
  }

  // What one statement, run on its own connection, costs in buffers; its first column's
  // first value goes to `*first` when given.
  int64_t Cost(const std::string& sql, int64_t* first = nullptr) {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction(*c).exec("SET stats_fetch_consistency = none");
    const int64_t before = BuffersHit(*c);
    auto r = pqxx::nontransaction(*c).exec1(sql);
    if (first != nullptr) *first = r[0].as<int64_t>();
    pqxx::nontransaction(*c).exec("SELECT 1");  // idle once, so the statement's counts flush
    return BuffersHit(*c) - before;
  }

  // The shared buffers an EXPLAIN (ANALYZE, BUFFERS) plan's top node hit, which hold its
  // children's and what a function it calls read; -1 when the plan shows none.
  static int64_t PlanBuffersHit(const pqxx::result& plan) {
    static const std::regex kBuffers("Buffers: shared hit=([0-9]+)");
    std::smatch m;
    for (const auto& row : plan) {
      const std::string line = row[0].c_str();
      if (std::regex_search(line, m, kBuffers)) {
        return static_cast<int64_t>(std::stoll(m[1].str()));
      }
    }
    return -1;
  }

  // What one claim of up to `batch` costs in buffers.
  int64_t ClaimCost(int batch) {
    int64_t claimed = 0;
    const int64_t cost =
        Cost("SELECT count(*) FROM claim_due(" + N(batch) + ", 60000000, 1, 16)", &claimed);
    claimed_ += claimed;
    return cost;
  }

  int64_t claimed_ = 0;
};

TEST_F(ClaimScalePgTest, AClaimBesideAHundredThousandIdleDestinationsReadsOnlyWhatIsDue) {
  // Three destinations with 300 due deliveries between them...
  for (int i = 0; i < 3; ++i) CreateDestination(testing::TestDestination({"order.*"}));
  for (int i = 0; i < 300; ++i) {
    auto r = store_.InsertEvent(NewEvent{"order.created", "{}", std::nullopt}, std::nullopt);
    ASSERT_TRUE(r) << r.error().message;
  }
  // ...beside 100,000 destinations of 10,000 tenants with nothing to deliver.
  db_.Exec(
      "INSERT INTO destinations (url, secret, event_types, tenant_id)"
      " SELECT 'https://example.com/t' || g, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',"
      " ARRAY['order.*'], 'tenant-' || (g % 10000) FROM generate_series(1, 100000) g");
  {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction(*c).exec("VACUUM ANALYZE destinations, deliveries");
  }
  ClaimCost(1);  // the first call plans the function's statements
  const int64_t cost = ClaimCost(64);
  EXPECT_EQ(claimed_, 3 * 16);  // the three destinations' caps, full
  // Proportional to the destinations would be about 200,000 (two reads of each row and
  // one index probe per destination); what is due costs a few hundred.
  EXPECT_LT(cost, 20000) << "the claim read " << cost << " buffers";
  RecordProperty("claim_buffers", static_cast<int>(cost));

  // A retry waiting (due in an hour) at every one of the 100,000 destinations: they have
  // pending work, but nothing due, so the claim still reads only the three.
  db_.Exec("INSERT INTO events (type, payload) VALUES ('order.created', '{}')");
  db_.Exec(
      "INSERT INTO deliveries (event_id, destination_id, tenant_id, attempt_count,"
      " cycle_attempts)"
      " SELECT (SELECT max(id) FROM events), t.id, t.tenant_id, 1, 1"
      " FROM destinations t WHERE t.tenant_id IS NOT NULL");
  // Queued due now by the insert: each retry is due in an hour, and the destinations
  // with nothing due now keep only that hint.
  db_.Exec(
      "UPDATE delivery_queue q SET next_attempt_at = now() + interval '1 hour'"
      " FROM deliveries d WHERE d.id = q.id AND d.event_id = (SELECT max(id) FROM events)");
  db_.Exec(
      "DELETE FROM due_destinations h WHERE h.due_at <= now() AND NOT EXISTS (SELECT 1 FROM"
      " delivery_queue q WHERE q.destination_id = h.destination_id"
      " AND q.next_attempt_at <= now())");
  {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction(*c).exec("VACUUM ANALYZE deliveries, delivery_queue, due_destinations");
  }
  db_.Exec(
      "UPDATE delivery_queue SET next_attempt_at = now(), claim_token = NULL,"
      " lease_until = NULL WHERE claim_token IS NOT NULL");
  ClaimCost(1);
  const int64_t waiting_cost = ClaimCost(64);
  EXPECT_EQ(claimed_, 2 * 3 * 16);  // the same again, once handed back
  EXPECT_LT(waiting_cost, 20000) << "beside 100,000 waiting retries the claim read " << waiting_cost
                                 << " buffers";
  RecordProperty("claim_buffers_beside_retries", static_cast<int>(waiting_cost));

  // The worker's next due time, asked whenever a claim finds nothing, walks the same way
  // (it probed every enabled destination before: about 200,000 buffers).
  const auto next_due = store_.NextDueAt();
  ASSERT_TRUE(next_due) << next_due.error().message;
  ASSERT_TRUE(next_due->has_value());
  const int64_t next_due_cost = Cost("SELECT extract(epoch FROM at)::bigint FROM (" +
                                     std::string(pg::sql::kNextDueAt.sql) + ") n(at)");
  EXPECT_LT(next_due_cost, 2000) << "the next due time read " << next_due_cost << " buffers";
}

// A backlog stamped by one statement (one ingest group, a replay) has one due time per
// destination. Its index entries were merged into posting lists, which an index scan can
// only mark dead once every row they name is dead: one row still pending among them, and
// each claim fetched again every delivered row behind it, from a heap page of its own,
// until a VACUUM. The queue's indexes keep one entry per row (migration 0026, before the baseline),
// and a scan marks each dead one once.
TEST_F(ClaimScalePgTest, AClaimDoesNotFetchAgainTheRowsDeliveredFromAStampedBacklog) {
  for (int i = 0; i < 50; ++i) CreateDestination(testing::TestDestination({"order.*"}, 1000));
  db_.Exec(
      "INSERT INTO events (type, payload) SELECT 'order.created', '{}'"
      " FROM generate_series(1, 20000)");
  db_.Exec(
      "WITH d AS (SELECT array_agg(id ORDER BY id) AS ids FROM destinations)"
      " INSERT INTO deliveries (event_id, destination_id)"
      " SELECT e.id, d.ids[1 + e.id % 50] FROM events e, d");
  db_.Exec("UPDATE delivery_queue SET next_attempt_at = '2026-01-01Z'");
  {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction(*c).exec("VACUUM ANALYZE deliveries, delivery_queue");
  }
  // No autovacuum from here: its ANALYZE of the updated table would hold the rows it
  // reads alive for a while, and its VACUUM would remove the entries the probes should
  // step over.
  db_.Exec("ALTER TABLE delivery_queue SET (autovacuum_enabled = off)");
  // Each destination's oldest delivery is still pending (a claim offered it and left it),
  // and the 240 after it were delivered. An entry naming that pending row and the
  // delivered ones cannot be marked dead, so every later probe fetched them all.
  db_.Exec(
      "DELETE FROM delivery_queue q USING (SELECT id, row_number() OVER"
      " (PARTITION BY destination_id ORDER BY id) AS n FROM delivery_queue) r"
      " WHERE r.id = q.id AND r.n BETWEEN 2 AND 241");
  // The claim's probe of each destination's oldest due rows, as it offers two of them,
  // counted in the buffers its plan touched (not the connection's catalog reads).
  const auto probes_cost = [&]() -> int64_t {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::work tx(*c);  // rolled back: the rows stay pending
    return PlanBuffersHit(
        tx.exec("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT c.id FROM destinations t,"
                " LATERAL (SELECT d.id FROM delivery_queue d WHERE d.destination_id = t.id"
                " AND d.claim_token IS NULL AND d.next_attempt_at <= now()"
                " ORDER BY d.destination_id, d.next_attempt_at LIMIT 2) c"));
  };
  // A scan marks an entry only once its row is dead to every open transaction of this
  // database, which a slow machine may hold back for a while: the probes are tried again
  // (at most 500 times, ten seconds in all) until one finds the entries marked. A second
  // was not always enough on a loaded machine building and testing from scratch.
  int64_t cost = probes_cost();
  for (int i = 0; i < 500 && cost >= 1000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cost = probes_cost();
  }
  // Fetching the delivered rows again cost about 9,700 buffers at every probe; stepping
  // over the entries the first probe marked, about 300.
  EXPECT_GT(cost, 0);
  EXPECT_LT(cost, 1000) << "the probes read " << cost << " buffers";
  RecordProperty("probe_buffers_past_taken_rows", static_cast<int>(cost));
}

// Every delivery passes through delivery_queue_in_flight, and its entry is dead once its
// outcome is written. The claim counts each visited destination's deliveries in flight;
// planned (as a worker's first claim plans it, on a young table) as a bitmap scan, it
// fetched every delivery sent since the last VACUUM from the heap again at every claim,
// since nothing marks entries for a bitmap scan. With plain index scans the first claim
// marks them and later ones step over them (migration 0030, before the baseline).
TEST_F(ClaimScalePgTest, AClaimDoesNotFetchAgainTheDeliveriesThatWereInFlight) {
  const int64_t dst = CreateDestination(testing::TestDestination({"order.*"}, 1000));
  db_.Exec("ALTER TABLE delivery_queue SET (autovacuum_enabled = off)");
  auto worker = testing::TestDatabase::Connect(db_.url());
  // The claim's own buffers (EXPLAIN counts what the function reads inside it), so no other
  // backend's reads count; rolled back, so every try meets the same rows and only the
  // marks it leaves in the index (which no rollback undoes) carry over.
  int64_t in_flight = 0;
  const auto claim = [&] {
    pqxx::work tx(*worker);
    const int64_t cost = PlanBuffersHit(
        tx.exec("EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM claim_due(1, 60000000, 1, 16)"));
    in_flight = tx.exec1("SELECT count(*) FROM delivery_queue WHERE claim_token IS NOT NULL")[0]
                    .as<int64_t>();
    tx.abort();
    return cost;
  };
  claim();  // the plan is made now, on an empty table, and kept for the connection
  db_.Exec(
      "INSERT INTO events (type, payload) SELECT 'order.created', '{}'"
      " FROM generate_series(1, 5000)");
  db_.Exec("INSERT INTO deliveries (event_id, destination_id) SELECT id, " + N(dst) +
           " FROM events");
  // 4,000 sent and finished, as a worker leaves them: each in flight, then succeeded.
  db_.Exec(
      "UPDATE delivery_queue SET claim_token = 1, lease_until = now() + interval '1 minute'"
      " WHERE id <= (SELECT min(id) + 3999 FROM delivery_queue)");
  db_.Exec("DELETE FROM delivery_queue WHERE claim_token IS NOT NULL");
  // A scan marks an entry only once its row is dead to every open transaction of this
  // database, which an autovacuum worker or a slow machine may hold back for a while:
  // claims are tried again (at most 500, ten seconds in all) until one steps over marked
  // entries.
  int64_t cost = claim();
  for (int i = 0; i < 500 && cost >= 130; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cost = claim();
  }
  // Fetching the finished deliveries again: about 190 buffers a claim; stepping over the
  // marked entries: about 65.
  EXPECT_EQ(in_flight, 1);  // a claim of one took one
  EXPECT_GT(cost, 0);
  EXPECT_LT(cost, 130) << "the claim read " << cost << " buffers";
  RecordProperty("claim_buffers_past_finished_in_flight", static_cast<int>(cost));
}
}  // namespace
}  // namespace webhookd::claim_scale_pgtest
