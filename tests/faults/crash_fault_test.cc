// Crash and restart (docs/architecture.md): 2,500 events fanned out to 10 receivers by 3 workers
// that are SIGKILLed and restarted every 0.5-2 s while ingest and delivery run, with the
// test's own PostgreSQL cluster killed (immediate shutdown) in the middle, twice. Every
// 202'd event must reach every receiver (at least once), nothing that was refused may be
// delivered, duplicates stay within what the kills and restarts can explain and repeat
// the same webhook-id and body, and no delivery is left claimed.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <pqxx/pqxx>
#include <random>
#include <set>
#include <thread>

#include "core/ids.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"
#include "tests/testing/worker_chaos.h"

namespace webhookd::testing::crash_fault_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kEvents = 2500;
constexpr int kReceivers = 10;
constexpr int kWorkers = 3;
constexpr int kIngestThreads = 8;
// WEBHOOKD_WORKER_CONCURRENCY below; the claim batch is min(concurrency, 128), so a
// worker holds at most this many claims (sent or not) when it dies.
constexpr int kConcurrency = 16;

const std::map<std::string, std::string> kEnv = {
    {"WEBHOOKD_LEASE", "3s"},
    {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
    {"WEBHOOKD_CONNECT_TIMEOUT", "1s"},
    {"WEBHOOKD_RETRY_SCHEDULE", "200ms,500ms,1s,1s"},
    {"WEBHOOKD_WORKER_CONCURRENCY", std::to_string(kConcurrency)},
    {"WEBHOOKD_LOG_LEVEL", "info"},
};

// One ingest request and what came of it.
struct Answer {
  int status = -1;  // 0: transport error (no answer); -1: never sent
  std::string id;   // the event id of a 202
  Clock::time_point sent{};
  Clock::time_point answered{};
};

// Unfinished deliveries (pending or in_flight), or -1 while the database does not answer.
int64_t Unfinished(const std::string& url) {
  try {
    auto conn_owner = testing::TestDatabase::Connect(url);
    pqxx::connection& conn = *conn_owner;
    pqxx::nontransaction tx(conn);
    return tx
        .exec("SELECT count(*) FROM delivery_rows WHERE status IN ('pending', 'in_flight')")[0][0]
        .as<int64_t>();
  } catch (const std::exception&) {
    return -1;
  }
}

std::string Scalar(const std::string& url, const std::string& sql) {
  auto conn_owner = testing::TestDatabase::Connect(url);
  pqxx::connection& conn = *conn_owner;
  pqxx::nontransaction tx(conn);
  auto r = tx.exec(sql);
  return r.empty() || r[0][0].is_null() ? "" : r[0][0].c_str();
}

TEST(CrashFaultTest, KilledWorkersAndARestartedDatabaseLoseNothing) {
  PgCluster cluster;
  const std::string url = cluster.CreateMigratedDatabase("webhookd_crash");

  std::vector<std::unique_ptr<Receiver>> receivers;
  for (int i = 0; i < kReceivers; ++i) receivers.push_back(std::make_unique<Receiver>());

  WebhookdProcess server(url, "server", kEnv);
  for (auto& r : receivers) {
    auto res = server.Call("POST", "/v1/destinations", {{"url", r->url()}});
    ASSERT_EQ(res.status, 201) << res.body;
  }
  // ---- chaos: SIGKILL a random worker every 0.5-2 s and start a new one ----
  WorkerChaos chaos(url, kEnv, kWorkers);

  // ---- ingest: kEvents requests, each once, payload {"n": n} ----
  std::vector<Answer> answers(kEvents);
  std::atomic<int> next{0};
  std::atomic<int> answered{0};
  std::vector<std::thread> ingest;
  const auto ingest_start = Clock::now();
  for (int t = 0; t < kIngestThreads; ++t) {
    ingest.emplace_back([&] {
      auto client = server.Client();
      client->set_connection_timeout(2, 0);
      client->set_read_timeout(30, 0);
      for (int n = next++; n < kEvents; n = next++) {
        const Json body = {{"type", "crash.test"}, {"payload", {{"n", n}}}};
        Answer& a = answers[n];
        a.sent = Clock::now();
        auto res = client->Post("/v1/events", body.dump(), "application/json");
        a.answered = Clock::now();
        a.status = res ? res->status : 0;
        if (res && res->status == 202) a.id = Json::parse(res->body)["id"];
        ++answered;
        // A steady, modest rate, so that ingest overlaps the kills and the restarts; a
        // 503 is followed by the pause its Retry-After asks for, as a client would.
        std::this_thread::sleep_for(a.status == 503 ? 1000ms : 10ms);
      }
    });
  }

  // ---- PostgreSQL, twice in the middle of ingest: an immediate shutdown held down for
  // 1.5 s (so ingest is seen answering while it is down), then `pg_ctl restart -m immediate`
  const auto wait_answered = [&](int n) {
    while (answered < n && Clock::now() - ingest_start < 300s) std::this_thread::sleep_for(10ms);
  };
  wait_answered(kEvents * 2 / 5);
  cluster.StopImmediate();
  const auto down_from = Clock::now();
  std::this_thread::sleep_for(1500ms);
  const auto down_until = Clock::now();
  cluster.Start();
  wait_answered(kEvents * 7 / 10);
  cluster.RestartImmediate();
  const int pg_restarts = 2;

  for (auto& t : ingest) t.join();
  const auto ingest_end = Clock::now();
  // Deliveries go on under the kills for a while after ingest ends.
  while (Clock::now() - ingest_end < 5s) std::this_thread::sleep_for(50ms);
  chaos.Stop();

  // ---- drain: every delivery must finish without further help ----
  // Bounded: 240 s in all, and 30 s (ten leases) without progress is a stall.
  const auto drain_start = Clock::now();
  int64_t unfinished = -1, last = -1;
  auto progressed = drain_start;
  while (Clock::now() - drain_start < 240s && Clock::now() - progressed < 30s) {
    unfinished = Unfinished(url);
    if (unfinished == 0) break;
    if (unfinished != last) progressed = Clock::now();
    last = unfinished;
    std::this_thread::sleep_for(200ms);
  }
  const auto secs = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - ingest_start).count();
  };
  const double total_s = secs(Clock::now());
  std::printf("crash fault: ingest took %.1f s, the chaos ended at %.1f s, drained at %.1f s\n",
              secs(ingest_end), secs(drain_start), total_s);
  ASSERT_EQ(unfinished, 0) << "deliveries still pending or in flight after the chaos: "
                           << Scalar(url,
                                     "SELECT string_agg(status || ' ' || n, ', ') FROM (SELECT "
                                     "status, count(*) AS n FROM delivery_rows GROUP BY 1) s");
  // Let receivers finish answering what was just recorded.
  std::this_thread::sleep_for(200ms);

  // ---- what the producers were told ----
  int accepted = 0, unavailable = 0, transport = 0, other = 0, refused_while_down = 0,
      answered_while_down = 0, accepted_while_down = 0;
  std::map<std::string, int> n_of_id;  // 202'd event id -> n
  for (int n = 0; n < kEvents; ++n) {
    const Answer& a = answers[n];
    if (a.status == 202) {
      ++accepted;
      n_of_id[a.id] = n;
    } else if (a.status == 503) {
      ++unavailable;
    } else if (a.status == 0) {
      ++transport;
    } else {
      ++other;
      ADD_FAILURE() << "ingest of n=" << n << " answered " << a.status;
    }
    // Sent and answered wholly while the database was down.
    if (a.sent >= down_from && a.answered <= down_until) {
      ++answered_while_down;
      if (a.status == 202) ++accepted_while_down;
      if (a.status == 503) ++refused_while_down;
    }
  }
  EXPECT_EQ(accepted_while_down, 0) << "a 202 while PostgreSQL was down";
  if (answered_while_down > 0) {
    EXPECT_GT(refused_while_down, 0) << "ingest did not answer 503 while PostgreSQL was down";
  }
  EXPECT_EQ(n_of_id.size(), static_cast<size_t>(accepted)) << "two 202s named one event";

  // ---- what the database holds ----
  std::map<int, std::string> id_in_db;  // n -> event id
  {
    auto conn_owner = testing::TestDatabase::Connect(url);
    pqxx::connection& conn = *conn_owner;
    pqxx::nontransaction tx(conn);
    // Only the producers' events: a receiver that timed out on a loaded machine can open a
    // circuit, and webhookd records that as an operational event of its own.
    for (const auto& row :
         tx.exec("SELECT id, (payload::jsonb->>'n')::int FROM events WHERE type = 'crash.test'")) {
      id_in_db[row[1].as<int>()] = FormatId(kEventPrefix, row[0].as<int64_t>());
    }
    for (const auto& row :
         tx.exec("SELECT type, count(*) FROM events WHERE type <> 'crash.test' GROUP BY 1")) {
      std::printf("crash fault: %s operational events: %s\n", row[1].c_str(), row[0].c_str());
    }
  }
  int not_committed = 0, ghosts = 0;
  for (const auto& [id, n] : n_of_id) {
    auto it = id_in_db.find(n);
    if (it == id_in_db.end() || it->second != id) ++not_committed;
  }
  for (const auto& [n, id] : id_in_db) {
    // Committed while its producer saw no answer: allowed. Committed after a 503: not.
    if (answers[n].status != 202 && answers[n].status != 0) ++ghosts;
  }
  EXPECT_EQ(not_committed, 0) << "202s for events that are not in the database";
  EXPECT_EQ(ghosts, 0) << "events stored although their ingest was answered 503";

  // ---- what the receivers got ----
  int64_t lost = 0, unexpected = 0, duplicates = 0, mismatched = 0, received = 0;
  for (auto& r : receivers) {
    std::map<std::string, std::vector<std::string>> bodies;  // webhook-id -> bodies
    for (const Received& req : r->requests()) {
      ++received;
      const std::string id = req.header("webhook-id");
      bodies[id].push_back(req.body);
      int n = -1;
      try {
        n = Json::parse(req.body)["data"]["n"].get<int>();
      } catch (const std::exception&) {
      }
      // Expected: a 202'd event, or one committed while its producer lost the answer.
      const bool was_accepted = n_of_id.contains(id) && n_of_id[id] == n;
      const bool was_in_doubt = n >= 0 && n < kEvents && answers[n].status == 0 &&
                                id_in_db.contains(n) && id_in_db[n] == id;
      if (!was_accepted && !was_in_doubt) ++unexpected;
    }
    for (const auto& [id, list] : bodies) {
      duplicates += static_cast<int64_t>(list.size()) - 1;
      for (const auto& b : list) {
        if (b != list.front()) ++mismatched;
      }
    }
    for (const auto& [id, n] : n_of_id) {
      if (!bodies.contains(id)) ++lost;
    }
  }

  // ---- the delivery rows ----
  const int64_t in_flight =
      std::stoll(Scalar(url, "SELECT count(*) FROM delivery_rows WHERE status = 'in_flight'"));
  const int64_t not_succeeded =
      std::stoll(Scalar(url, "SELECT count(*) FROM delivery_rows WHERE status <> 'succeeded'"));
  const int64_t deliveries = std::stoll(Scalar(url, "SELECT count(*) FROM delivery_rows"));
  const int64_t success_anomalies = std::stoll(
      Scalar(url,
             "SELECT count(*) FROM delivery_rows d WHERE (SELECT count(*) FROM attempts a WHERE "
             "a.delivery_id = d.id AND a.outcome = 'success') <> 1"));

  const int64_t bound = static_cast<int64_t>(chaos.kills() + pg_restarts * kWorkers) * kConcurrency;
  std::printf(
      "crash fault: %d events sent, %d accepted (202), %d answered 503 (%d of %d answered "
      "while PostgreSQL was down), %d transport errors; %d worker kills, %d PostgreSQL "
      "restarts; %lld webhooks received, %lld duplicates (bound %lld), %lld lost, %lld "
      "unexpected; %.1f s in all\n",
      kEvents, accepted, unavailable, refused_while_down, answered_while_down, transport,
      chaos.kills(), pg_restarts, static_cast<long long>(received),
      static_cast<long long>(duplicates), static_cast<long long>(bound),
      static_cast<long long>(lost), static_cast<long long>(unexpected), total_s);
  std::fflush(stdout);

  EXPECT_GT(chaos.kills(), 0);
  EXPECT_GT(accepted, kEvents / 2) << "too few events were accepted to mean anything";
  EXPECT_EQ(lost, 0) << "202'd events that never reached a receiver";
  EXPECT_EQ(unexpected, 0) << "webhooks for events that were never accepted";
  EXPECT_EQ(mismatched, 0) << "a duplicate with a different body than the first send";
  // A duplicate needs a worker that died (or lost the database) between sending and
  // recording: at most the claims it held.
  EXPECT_LE(duplicates, bound);
  EXPECT_EQ(in_flight, 0) << "deliveries left claimed after every lease ran out";
  EXPECT_EQ(not_succeeded, 0);
  EXPECT_EQ(deliveries, static_cast<int64_t>(id_in_db.size()) * kReceivers);
  EXPECT_EQ(success_anomalies, 0) << "deliveries without exactly one recorded success";
}

}  // namespace
}  // namespace webhookd::testing::crash_fault_test
