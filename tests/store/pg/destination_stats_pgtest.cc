// The destinations' rollups (migrations/0044_destination_stats.sql) on a real PostgreSQL:
// after a random mix of outcomes written through the outcome statements, they hold what
// a recount of the attempts and dead letters finds; a month of one busy destination is
// read from its minutes within a bound of pages; a day's rollups go with the day.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <tuple>

#include "core/destination_stats.h"
#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::destination_stats_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

// One destination's minute: succeeded, retryable, permanent, dead lettered, latency bins.
struct Minute {
  int64_t succeeded = 0, retryable = 0, permanent = 0, dead_lettered = 0;
  LatencyCounts latency{};
  bool operator==(const Minute&) const = default;
};
using Minutes = std::map<std::pair<int64_t, int64_t>, Minute>;  // (destination, unix minute)

std::ostream& operator<<(std::ostream& os, const Minute& m) {
  os << "{" << m.succeeded << "," << m.retryable << "," << m.permanent << "," << m.dead_lettered
     << " [";
  for (int64_t n : m.latency) os << n << " ";
  return os << "]}";
}

class DestinationStatsPgTest : public testing::PgTest {
 protected:
  int64_t Ingest(int64_t destination) {
    auto r = store_.InsertEvent(NewEvent{"order.created", R"({"a":1})", destination}, std::nullopt);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->event.id : 0;
  }

  std::vector<std::vector<std::string>> Rows(const std::string& sql) {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction tx(*c);
    std::vector<std::vector<std::string>> out;
    for (const auto& row : tx.exec(sql)) {
      std::vector<std::string> cells;
      for (const auto& f : row) cells.push_back(f.is_null() ? "" : f.c_str());
      out.push_back(std::move(cells));
    }
    return out;
  }

  // What the rollups by minute hold, their slots added up; or those by hour, keyed by the
  // hour's first minute.
  Minutes Rollups(bool hours = false) {
    Minutes out;
    for (const auto& r :
         Rows(hours ? "SELECT destination_id, extract(epoch FROM hour)::bigint / 60, succeeded,"
                      " retryable, permanent, dead_lettered, array_to_string(latency, ',')"
                      " FROM webhookd.destination_stats_hours"
                    : "SELECT destination_id, extract(epoch FROM minute)::bigint / 60, succeeded,"
                      " retryable, permanent, dead_lettered, array_to_string(latency, ',')"
                      " FROM webhookd.destination_stats")) {
      Minute& m = out[{std::stoll(r[0]), std::stoll(r[1])}];
      m.succeeded += std::stoll(r[2]);
      m.retryable += std::stoll(r[3]);
      m.permanent += std::stoll(r[4]);
      m.dead_lettered += std::stoll(r[5]);
      const std::vector<int64_t> bins = testing::Ids(r[6]);
      EXPECT_EQ(bins.size(), static_cast<size_t>(kLatencyBins));
      for (size_t i = 0; i < bins.size() && i < m.latency.size(); ++i) m.latency[i] += bins[i];
    }
    return out;
  }

  // The same counted again from the attempts and dead letters, binned here, of the days
  // the history has (an attempt of a day without partitions is in no rollup).
  Minutes Recount() {
    Minutes out;
    for (const auto& r :
         Rows("SELECT d.destination_id, floor(extract(epoch FROM a.started_at) / 60)::bigint,"
              "       a.outcome, a.duration_ms,"
              "       EXISTS (SELECT 1 FROM webhookd.dead_letters x WHERE x.delivery_id ="
              "               a.delivery_id AND x.attempt_count = a.attempt_number)"
              "  FROM webhookd.attempts a JOIN webhookd.deliveries d ON d.id = a.delivery_id"
              " WHERE a.started_at >= (SELECT min(day) FROM webhookd.history_days)::timestamp"
              "                       AT TIME ZONE 'UTC'")) {
      const std::string& outcome = r[2];
      if (outcome == "skipped") continue;
      Minute& m = out[{std::stoll(r[0]), std::stoll(r[1])}];
      if (outcome == "success") ++m.succeeded;
      if (outcome == "retryable") ++m.retryable;
      if (outcome == "permanent") ++m.permanent;
      if (r[4] == "t") ++m.dead_lettered;
      ++m.latency[LatencyBin(std::stoll(r[3]))];
    }
    return out;
  }

  // Minutes added up by hour, keyed by the hour's first minute.
  static Minutes ByHour(const Minutes& minutes) {
    Minutes out;
    for (const auto& [key, m] : minutes) {
      Minute& h = out[{key.first, key.second - key.second % 60}];
      h.succeeded += m.succeeded;
      h.retryable += m.retryable;
      h.permanent += m.permanent;
      h.dead_lettered += m.dead_lettered;
      for (int i = 0; i < kLatencyBins; ++i) h.latency[i] += m.latency[i];
    }
    return out;
  }

  // Shared buffers (hit and read) the whole plan touched, from EXPLAIN (ANALYZE, BUFFERS).
  static int64_t Buffers(const std::string& plan) {
    std::smatch m;
    int64_t total = 0;
    const std::regex buffers(R"(Buffers: shared((?: \w+=\d+)+))");
    if (!std::regex_search(plan, m, buffers)) return -1;
    const std::string counts = m[1];
    const std::regex each(R"((hit|read)=(\d+))");
    for (auto it = std::sregex_iterator(counts.begin(), counts.end(), each);
         it != std::sregex_iterator(); ++it) {
      total += std::stoll((*it)[2]);
    }
    return total;
  }
};

// A duration: mostly log-uniform over 0 ms to 70 s, one in four on a bin's edge.
int DrawDuration(std::mt19937_64& rng) {
  if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) {
    const int bin = std::uniform_int_distribution<int>(0, kLatencyBins - 1)(rng);
    const int64_t edge = kLatencyBinFloor[bin] + std::uniform_int_distribution<int>(-1, 0)(rng);
    return static_cast<int>(std::max<int64_t>(edge, 0));
  }
  const double ln = std::uniform_real_distribution<double>(0, std::log(70000.0))(rng);
  return static_cast<int>(std::exp(ln)) - 1;
}

TEST_F(DestinationStatsPgTest, RollupsEqualARecountOfTheAttemptsAfterARandomMixOfOutcomes) {
  const uint64_t seed = 20261207;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<int64_t> destinations;
  for (int i = 0; i < 3; ++i) destinations.push_back(CreateDestination(testing::TestDestination()));
  // A high threshold: no circuit opens, so every delivery stays claimable.
  ProtectionSettings protection;
  protection.circuit.threshold = 1000000;
  // The attempts spread over the three hours before `now`, all on days the history has:
  // early in a UTC day the hours before midnight have no partitions (the template was
  // migrated today), so `now` is then moved a little into the day.
  const Timestamp real_now = SystemClock().Now();
  const Timestamp now = std::max(real_now, StatsBucketStart(real_now, 24h) + 3h + 5min);
  int recorded = 0;
  for (int round = 0; round < 40 && recorded < 600; ++round) {
    const int events = std::uniform_int_distribution<int>(5, 40)(rng);
    for (int i = 0; i < events; ++i) {
      Ingest(destinations[std::uniform_int_distribution<size_t>(0, 2)(rng)]);
    }
    std::vector<AttemptRecord> records;
    for (const ClaimedDelivery& c : Claim(200, 1h, 1000)) {
      AttemptRecord r;
      switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0:
        case 1:
          r = RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess);
          // Most through the successes' statement, the rest through the full one.
          r.clean = c.clean && std::uniform_int_distribution<int>(0, 3)(rng) != 0;
          break;
        case 2:
          r = RecordFor(c, DeliveryStatus::kPending, 503, Outcome::kRetryable);
          break;
        case 3:
          r = RecordFor(c, DeliveryStatus::kDeadLettered, 500, Outcome::kRetryable);
          r.dead_letter_reason = DeadLetterReason::kExhausted;
          break;
        case 4:
          r = RecordFor(c, DeliveryStatus::kDeadLettered, 400, Outcome::kPermanent);
          r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
          break;
        default:
          r = RecordFor(c, DeliveryStatus::kPending, std::nullopt, Outcome::kSkipped);
          break;
      }
      r.wait = Duration::zero();
      r.duration_ms = DrawDuration(rng);
      // Over the last three hours; one in twenty three days ago, a day without partitions,
      // which is counted nowhere and refuses nothing.
      const bool old = std::uniform_int_distribution<int>(0, 19)(rng) == 0;
      r.started_at =
          old ? now - 72h
              : now - std::chrono::minutes(std::uniform_int_distribution<int>(0, 180)(rng));
      records.push_back(r);
    }
    // In batches of random sizes, as recorders flush them.
    size_t at = 0;
    while (at < records.size()) {
      const size_t n =
          std::min(records.size() - at, std::uniform_int_distribution<size_t>(1, 50)(rng));
      std::vector<AttemptRecord> batch(records.begin() + at, records.begin() + at + n);
      EXPECT_EQ(Record(batch, protection).size(), n);
      at += n;
      recorded += static_cast<int>(n);
    }
  }
  ASSERT_GT(recorded, 200);
  const Minutes rollups = Rollups();
  const Minutes recount = Recount();
  EXPECT_GT(recount.size(), 30u);
  EXPECT_EQ(rollups, recount);
  EXPECT_EQ(Rollups(/*hours=*/true), ByHour(recount));
  // Each outcome and a dead letter of each kind happened.
  Minute all;
  for (const auto& [key, m] : recount) {
    all.succeeded += m.succeeded;
    all.retryable += m.retryable;
    all.permanent += m.permanent;
    all.dead_lettered += m.dead_lettered;
  }
  EXPECT_GT(all.succeeded, 0);
  EXPECT_GT(all.retryable, 0);
  EXPECT_GT(all.permanent, 0);
  EXPECT_GT(all.dead_lettered, all.permanent);
  // At most one row per writer's slot.
  EXPECT_EQ(db_.Scalar("SELECT coalesce(max(n), 0) <= 4 FROM (SELECT count(*) AS n FROM"
                       " webhookd.destination_stats GROUP BY destination_id, minute) x"),
            "t");

  // The read: the minutes of one destination, every bucket of the window, the rest zero.
  const int64_t dst = destinations[0];
  DestinationStatsWindow w;
  w.step = 1min;
  w.until = StatsBucketStart(now, 1min) + 1min;
  w.since = w.until - 200min;
  auto read = store_.GetDestinationStats(dst, w, Scope::All());
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 200u);
  int64_t nonzero = 0;
  for (const DestinationStatsBucket& b : *read) {
    const int64_t minute = b.start.time_since_epoch().count() / 60'000'000;
    auto it = recount.find({dst, minute});
    const Minute want = it == recount.end() ? Minute{} : it->second;
    EXPECT_EQ(b.succeeded, want.succeeded) << minute;
    EXPECT_EQ(b.retryable, want.retryable) << minute;
    EXPECT_EQ(b.permanent, want.permanent) << minute;
    EXPECT_EQ(b.dead_lettered, want.dead_lettered) << minute;
    EXPECT_EQ(b.latency, want.latency) << minute;
    if (b.succeeded + b.retryable + b.permanent > 0) ++nonzero;
  }
  EXPECT_GT(nonzero, 10);
  // In buckets of an hour (read from the hours, the last, partial one from its minutes),
  // each bucket the recount of its minutes; so too a window that ends mid-minute.
  for (const Timestamp until : {w.until, w.until - 37min - 20s}) {
    w.step = 1h;
    w.until = until;
    w.since = StatsBucketStart(until - 4h, 1h);
    ASSERT_TRUE(UsesHourRollups(w));
    auto hourly = store_.GetDestinationStats(dst, w, Scope::All());
    ASSERT_TRUE(hourly) << hourly.error().message;
    ASSERT_EQ(hourly->size(), 5u);
    int64_t total = 0;
    for (const DestinationStatsBucket& b : *hourly) {
      Minute want;
      const int64_t from = b.start.time_since_epoch().count() / 60'000'000;
      const int64_t to =
          std::min(from + 60, (until.time_since_epoch().count() + 59'999'999) / 60'000'000);
      for (auto it = recount.lower_bound({dst, from});
           it != recount.end() && it->first.first == dst && it->first.second < to; ++it) {
        want.succeeded += it->second.succeeded;
        want.retryable += it->second.retryable;
        want.permanent += it->second.permanent;
        want.dead_lettered += it->second.dead_lettered;
        for (int i = 0; i < kLatencyBins; ++i) want.latency[i] += it->second.latency[i];
      }
      EXPECT_EQ(b.succeeded, want.succeeded) << from;
      EXPECT_EQ(b.retryable, want.retryable) << from;
      EXPECT_EQ(b.permanent, want.permanent) << from;
      EXPECT_EQ(b.dead_lettered, want.dead_lettered) << from;
      EXPECT_EQ(b.latency, want.latency) << from;
      total += b.succeeded + b.retryable + b.permanent;
    }
    EXPECT_GT(total, 0);
  }
  // Another tenant's destination, or none, is not found.
  EXPECT_EQ(store_.GetDestinationStats(dst, w, Scope::Tenant("other")).error().kind,
            ErrorKind::kNotFound);
  EXPECT_EQ(store_.GetDestinationStats(dst + 1000, w, Scope::All()).error().kind,
            ErrorKind::kNotFound);
}

// 30 days of one destination with 10 million attempts, as 43,200 minute rows and 720 hour
// rows beside those of four other destinations written in time order (a page holds rows
// of all of them): a month in buckets of an hour or a day reads its hours (and the
// minutes of a last, partial hour), never its minutes or the attempts. The time is
// printed, not asserted.
TEST_F(DestinationStatsPgTest, AMonthOfABusyDestinationIsReadFromItsHoursWithinABound) {
  std::vector<int64_t> destinations;
  for (int i = 0; i < 5; ++i) destinations.push_back(CreateDestination(testing::TestDestination()));
  const int64_t dst = destinations[2];
  // The thirty days before today have partitions, as a month-old installation has.
  db_.Exec(
      "DO $$ DECLARE d date; t text; BEGIN"
      " FOR d IN SELECT generate_series((now() AT TIME ZONE 'UTC')::date - 30,"
      "                                 (now() AT TIME ZONE 'UTC')::date - 1, '1 day')::date LOOP"
      "  FOREACH t IN ARRAY ARRAY['destination_stats', 'destination_stats_hours'] LOOP"
      "   EXECUTE format('CREATE TABLE webhookd.%I PARTITION OF webhookd.%I"
      "    FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = 70)',"
      "    t || '_p' || to_char(d, 'YYYYMMDD'), t, d::timestamp AT TIME ZONE 'UTC',"
      "    (d + 1)::timestamp AT TIME ZONE 'UTC');"
      "  END LOOP;"
      " END LOOP; END $$");
  // 231 attempts a minute (220 succeeded, 10 retryable, 1 permanent and dead-lettered):
  // 9,979,200 over 43,200 minutes.
  db_.Exec(
      "INSERT INTO webhookd.destination_stats (destination_id, minute, slot, succeeded,"
      " retryable, permanent, dead_lettered, latency)"
      " SELECT d.id, m, 0, 220, 10, 1, 1,"
      "        array_fill(0, ARRAY[9]) || ARRAY[20, 60, 80, 40, 20, 8] ||"
      "        array_fill(0, ARRAY[16]) || ARRAY[3]"
      "   FROM generate_series(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
      "                        - interval '30 days',"
      "                        date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
      "                        - interval '1 minute', '1 minute') m"
      "  CROSS JOIN unnest(ARRAY[" +
      N(destinations[0]) + "," + N(destinations[1]) + "," + N(destinations[2]) + "," +
      N(destinations[3]) + "," + N(destinations[4]) +
      "]::bigint[]) d(id)"
      "  ORDER BY m, d.id");
  // Its hours, as the same writers add to them (one row each: one writer).
  db_.Exec(
      "INSERT INTO webhookd.destination_stats_hours (destination_id, hour, slot, succeeded,"
      " retryable, permanent, dead_lettered, latency)"
      " SELECT destination_id, date_bin('1 hour', minute, timestamptz 'epoch'), 0,"
      "        sum(succeeded), sum(retryable), sum(permanent), sum(dead_lettered),"
      "        array_fill(0, ARRAY[9]) || ARRAY[1200, 3600, 4800, 2400, 1200, 480] ||"
      "        array_fill(0, ARRAY[16]) || ARRAY[180]"
      "   FROM webhookd.destination_stats GROUP BY 1, 2 ORDER BY 2, 1");
  db_.Exec("ANALYZE webhookd.destination_stats");
  db_.Exec("ANALYZE webhookd.destination_stats_hours");
  ASSERT_EQ(db_.Scalar("SELECT sum(succeeded + retryable + permanent) FROM"
                       " webhookd.destination_stats WHERE destination_id = " +
                       N(dst)),
            "9979200");

  const Timestamp now = SystemClock().Now();
  const Timestamp today = StatsBucketStart(now, 24h);
  const int64_t hours_today = (now - today) / 1h + 1;
  // The month in hours and days; and the longest window of minutes, 1,000 of 5 minutes.
  const Timestamp month = today - 30 * 24h;
  for (const auto& [since, step, until, text, buckets] :
       {std::tuple{month, Duration(1h), today, "1 hour", int64_t{720}},
        std::tuple{month, Duration(1h), now, "1 hour, until now", 720 + hours_today},
        std::tuple{month, Duration(24h), today, "1 day", int64_t{30}},
        std::tuple{today - 5000min, Duration(5min), today, "5 minutes", int64_t{1000}}}) {
    SCOPED_TRACE(text);
    DestinationStatsWindow w{since, until, step};
    const bool hours = step >= 1h;
    EXPECT_EQ(UsesHourRollups(w), hours);
    const auto started = std::chrono::steady_clock::now();
    auto read = store_.GetDestinationStats(dst, w, Scope::All());
    const auto took = std::chrono::steady_clock::now() - started;
    ASSERT_TRUE(read) << read.error().message;
    ASSERT_EQ(read->size(), static_cast<size_t>(buckets));
    int64_t attempts = 0;
    for (const auto& b : *read) attempts += b.succeeded + b.retryable + b.permanent;
    EXPECT_EQ(attempts, hours ? 9979200 : 231 * 5000);
    // The median in bin 11 (45 to 62 ms), the 99th percentile in the last bin.
    EXPECT_EQ(LatencyQuantile(read->front().latency, 0.5), 53);
    EXPECT_EQ(LatencyQuantile(read->front().latency, 0.99), 55108);

    // The statement as the store runs it, explained: its pages, bounded by one a minute
    // row and the index, not by the attempts they count.
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction tx(*c);
    // As webhookd's own sessions are set up (sql/scripts/session_setup.sql).
    tx.exec(std::string(pg::sql::kSessionSetup.sql));
    std::string sql(pg::sql::kDestinationStats.sql);
    const std::vector<std::string> params = {N(dst),
                                             "NULL",
                                             "'" + FormatRfc3339(w.since) + "'",
                                             "'" + FormatRfc3339(w.until) + "'",
                                             N(w.step.count()),
                                             hours ? "true" : "false"};
    for (size_t i = params.size(); i >= 1; --i) {
      sql = std::regex_replace(sql, std::regex("\\$" + std::to_string(i) + "\\b"), params[i - 1]);
    }
    std::string plan;
    for (const auto& row : tx.exec("EXPLAIN (ANALYZE, BUFFERS) " + sql)) {
      plan += row[0].c_str();
      plan += '\n';
    }
    const int64_t buffers = Buffers(plan);
    std::printf(
        "[ stats ] a destination of 9,979,200 attempts in 30 days, in buckets of %s: %.1f ms "
        "through the store, %lld shared buffers\n%s",
        text, std::chrono::duration<double, std::milli>(took).count(),
        static_cast<long long>(buffers), plan.c_str());
    EXPECT_GT(buffers, 0) << plan;
    // The month's hours are a few hundred pages, far from its 43,200 minute rows; the
    // minutes of 1,000 buckets of 5 minutes are the pages that hold them.
    EXPECT_LT(buffers, hours ? 1000 : 6000) << plan;
    EXPECT_EQ(plan.find("attempts"), std::string::npos) << plan;
  }
}

// The Overview's most failing destinations: by failed attempts in the window's minutes,
// most first, only those that failed there, no deleted one, at most the limit.
TEST_F(DestinationStatsPgTest, TheMostFailingDestinationsOfAWindowComeFirst) {
  // Yesterday has partitions too, so that "two hours ago" is counted at any time of day.
  db_.Exec(
      "DO $$ DECLARE d date := (now() AT TIME ZONE 'UTC')::date - 1; t text; BEGIN"
      " IF NOT EXISTS (SELECT 1 FROM webhookd.history_days WHERE day = d) THEN"
      "  FOREACH t IN ARRAY ARRAY['destination_stats', 'destination_stats_hours'] LOOP"
      "   EXECUTE format('CREATE TABLE webhookd.%I PARTITION OF webhookd.%I"
      "    FOR VALUES FROM (%L) TO (%L)', t || '_p' || to_char(d, 'YYYYMMDD'), t,"
      "    d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');"
      "  END LOOP;"
      "  INSERT INTO webhookd.history_days (day, event_from, event_to, delivery_from,"
      "   delivery_to) VALUES (d, 0, 0, 0, 0);"
      " END IF; END $$");
  std::vector<int64_t> dst;
  for (int i = 0; i < 5; ++i) dst.push_back(CreateDestination(testing::TestDestination()));
  // Per destination: failures now, successes now, failures two hours ago.
  const std::vector<std::tuple<int, int, int>> plan = {
      {2, 3, 0},   // 0: two failures
      {5, 0, 0},   // 1: the most
      {0, 4, 9},   // 2: failed only before the window
      {2, 0, 0},   // 3: ties with 0, a later id
      {7, 0, 0}};  // 4: deleted
  ProtectionSettings protection;
  protection.circuit.threshold = 1000000;
  const Timestamp now = SystemClock().Now();
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto [failed, succeeded, before] = plan[i];
    for (int n = 0; n < failed + succeeded + before; ++n) Ingest(dst[i]);
    std::vector<AttemptRecord> records;
    int n = 0;
    for (const ClaimedDelivery& c : Claim(100)) {
      AttemptRecord r = n < failed + before
                            ? RecordFor(c, DeliveryStatus::kPending, 503, Outcome::kRetryable)
                            : RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess);
      r.wait = 1h;  // not claimed again by the next destination's round
      r.started_at = n < before ? now - 2h : now - 1min;
      records.push_back(r);
      ++n;
    }
    ASSERT_EQ(n, failed + succeeded + before);
    Record(records, protection);
  }
  ASSERT_TRUE(store_.DeleteDestination(dst[4], Scope::All()));

  auto failing = store_.FailingDestinations(1h, 10);
  ASSERT_TRUE(failing) << failing.error().message;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> got;
  for (const FailingDestination& d : *failing) got.emplace_back(d.id, d.failed, d.succeeded);
  EXPECT_EQ(got, (std::vector<std::tuple<int64_t, int64_t, int64_t>>{
                     {dst[1], 5, 0}, {dst[0], 2, 3}, {dst[3], 2, 0}}));
  // The limit; a window that reaches back two hours counts the older failures.
  failing = store_.FailingDestinations(1h, 1);
  ASSERT_TRUE(failing);
  ASSERT_EQ(failing->size(), 1u);
  EXPECT_EQ(failing->front().id, dst[1]);
  failing = store_.FailingDestinations(3h, 10);
  ASSERT_TRUE(failing);
  ASSERT_FALSE(failing->empty());
  EXPECT_EQ(failing->front().id, dst[2]);
  EXPECT_EQ(failing->front().failed, 9);
}

TEST_F(DestinationStatsPgTest, EachDayHasItsRollupsPartitionAndTheyGoWithTheDay) {
  // A partition of the rollups (by minute and by hour) for each day of the history,
  // today's a week ahead too.
  const auto partitions = [&](const std::string& table) {
    return db_.Scalar("SELECT count(*) FROM pg_inherits WHERE inhparent = 'webhookd." + table +
                      "'::regclass");
  };
  EXPECT_EQ(partitions("destination_stats"),
            db_.Scalar("SELECT count(*) FROM webhookd.history_days"));
  EXPECT_EQ(partitions("destination_stats_hours"), partitions("destination_stats"));
  EXPECT_EQ(*store_.AddHistoryDays(9), 2);
  EXPECT_EQ(partitions("destination_stats"),
            db_.Scalar("SELECT count(*) FROM webhookd.history_days"));
  EXPECT_EQ(partitions("destination_stats_hours"), partitions("destination_stats"));
  EXPECT_EQ(db_.Scalar("SELECT partdefid::text FROM pg_partitioned_table"
                       " WHERE partrelid = 'webhookd.destination_stats'::regclass"),
            "0");

  const int64_t dst = CreateDestination(testing::TestDestination());
  Ingest(dst);
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 1u);
  Record({RecordFor(claimed[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)});
  const std::string today = db_.Scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')");
  EXPECT_EQ(db_.Scalar("SELECT sum(succeeded) FROM webhookd.destination_stats_p" + today), "1");
  EXPECT_EQ(db_.Scalar("SELECT sum(succeeded) FROM webhookd.destination_stats_hours_p" + today),
            "1");

  auto dropped = store_.DropAgedDays(SystemClock().Now() + 48h, 1);
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->days, 1);
  EXPECT_EQ(db_.Scalar("SELECT to_regclass('webhookd.destination_stats_p" + today + "') IS NULL"),
            "t");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM webhookd.destination_stats"), "0");
  EXPECT_EQ(
      db_.Scalar("SELECT to_regclass('webhookd.destination_stats_hours_p" + today + "') IS NULL"),
      "t");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM webhookd.destination_stats_hours"), "0");
}

}  // namespace
}  // namespace webhookd::destination_stats_pgtest
