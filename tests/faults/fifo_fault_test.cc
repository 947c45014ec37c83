// Ordered delivery under crashes (docs/ordering.md): three workers SIGKILLed at random
// every 0.5-2 s and PostgreSQL restarted (immediate shutdown) once, while 40 keys x 15
// events, each key posted sequentially (each post after the previous one's 202), go to two
// fifo destinations whose receivers answer 500 to 10 % of requests at random. Per key and
// destination: every attempt of an event reaches the receiver before any attempt of the
// next, the next is first tried only after the previous was answered 2xx, and every
// event arrives.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <pqxx/pqxx>
#include <random>
#include <set>
#include <thread>

#include "tests/testing/pg_cluster.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"
#include "tests/testing/worker_chaos.h"

namespace webhookd::testing::fifo_fault_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The suite's size; WEBHOOKD_FIFO_FAULT_SIZE=KEYSxEVENTS (e.g. 200x40) runs it larger.
int SizeOr(int fallback, bool keys) {
  const char* size = std::getenv("WEBHOOKD_FIFO_FAULT_SIZE");
  if (size == nullptr) return fallback;
  const std::string text = size;
  const size_t x = text.find('x');
  if (x == std::string::npos) return fallback;
  return std::max(1, std::atoi((keys ? text.substr(0, x) : text.substr(x + 1)).c_str()));
}
const int kKeys = SizeOr(40, true);
const int kPerKey = SizeOr(15, false);
constexpr int kWorkers = 3;
constexpr int kPosters = 8;

const std::map<std::string, std::string> kEnv = {
    {"WEBHOOKD_LEASE", "3s"},
    {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
    {"WEBHOOKD_CONNECT_TIMEOUT", "1s"},
    {"WEBHOOKD_RETRY_SCHEDULE", "100ms,200ms,300ms,500ms,1s,1s,1s,1s"},
    {"WEBHOOKD_RETRY_JITTER", "0"},
    {"WEBHOOKD_CIRCUIT_THRESHOLD", "1000"},
    {"WEBHOOKD_WORKER_CONCURRENCY", "16"},
    {"WEBHOOKD_LOG_LEVEL", "info"},
};

// What one receiver saw, in arrival order: (key, seq, answered 2xx).
struct Seen {
  std::string key;
  int seq;
  bool ok;
};

int64_t Unfinished(const std::string& url) {
  try {
    auto conn = TestDatabase::Connect(url);
    pqxx::nontransaction tx(*conn);
    return tx
        .exec("SELECT count(*) FROM delivery_rows WHERE status IN ('pending', 'in_flight')")[0][0]
        .as<int64_t>();
  } catch (const std::exception&) {
    return -1;
  }
}

TEST(FifoFaultTest, KilledWorkersAndARestartedDatabaseKeepEveryKeyInOrder) {
  PgCluster cluster;
  const std::string url = cluster.CreateMigratedDatabase("webhookd_fifo_fault");

  struct Sink {
    std::mutex mu;
    std::vector<Seen> seen;
    std::mt19937 rng{std::random_device{}()};
    std::unique_ptr<Receiver> receiver;
  };
  std::vector<std::unique_ptr<Sink>> sinks;
  for (int i = 0; i < 2; ++i) {
    auto sink = std::make_unique<Sink>();
    Sink* s = sink.get();
    sink->receiver = std::make_unique<Receiver>([s](const Received& r, int) {
      const Json data = Json::parse(r.body)["data"];
      std::lock_guard lock(s->mu);
      const bool ok = std::uniform_int_distribution<int>(0, 9)(s->rng) != 0;
      s->seen.push_back({data["key"], data["seq"], ok});
      Answer a;
      a.status = ok ? 200 : 500;
      return a;
    });
    sinks.push_back(std::move(sink));
  }

  WebhookdProcess server(url, "server", kEnv);
  for (auto& s : sinks) {
    auto res = server.Call("POST", "/v1/destinations",
                           {{"url", s->receiver->url()}, {"ordering", "fifo"}});
    ASSERT_EQ(res.status, 201) << res.body;
  }
  WorkerChaos chaos(url, kEnv, kWorkers);

  // ---- post: each key's events in order, each after the previous one's 202 (a 503 or a
  // lost answer is retried with the same Idempotency-Key, as a careful producer does) ----
  std::atomic<int> posted{0};
  std::atomic<int> retried_posts{0};
  std::vector<std::thread> posters;
  const auto start = Clock::now();
  for (int t = 0; t < kPosters; ++t) {
    posters.emplace_back([&, t] {
      auto client = server.Client();
      client->set_connection_timeout(2, 0);
      client->set_read_timeout(30, 0);
      for (int seq = 0; seq < kPerKey; ++seq) {
        for (int k = t; k < kKeys; k += kPosters) {
          const std::string key = "key-" + std::to_string(k);
          const Json body = {{"type", "order.updated"},
                             {"ordering_key", key},
                             {"payload", {{"key", key}, {"seq", seq}}}};
          const httplib::Headers idem = {{"Idempotency-Key", key + "-" + std::to_string(seq)}};
          while (Clock::now() - start < 240s) {
            auto res = client->Post("/v1/events", idem, body.dump(), "application/json");
            if (res && res->status == 202) break;
            ++retried_posts;
            std::this_thread::sleep_for(200ms);
          }
          ++posted;
        }
      }
    });
  }

  while (posted < kKeys * kPerKey / 2 && Clock::now() - start < 240s) {
    std::this_thread::sleep_for(10ms);
  }
  cluster.RestartImmediate();
  for (auto& t : posters) t.join();
  std::this_thread::sleep_for(3s);  // deliveries go on under the kills a while
  chaos.Stop();

  // ---- drain ----
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
  ASSERT_EQ(unfinished, 0) << "deliveries left unfinished";
  std::this_thread::sleep_for(200ms);

  // ---- per destination and key ----
  int64_t arrivals = 0, resends = 0, violations = 0, missing = 0;
  for (auto& s : sinks) {
    std::lock_guard lock(s->mu);
    std::map<std::string, std::vector<Seen>> by_key;
    for (const Seen& x : s->seen) by_key[x.key].push_back(x);
    arrivals += static_cast<int64_t>(s->seen.size());
    for (int k = 0; k < kKeys; ++k) {
      const auto& list = by_key["key-" + std::to_string(k)];
      int current = -1;
      bool current_ok = true;
      std::map<int, int> oks;
      for (const Seen& x : list) {
        if (x.seq < current) {
          ++violations;  // an attempt of an earlier event after a later one's
          ADD_FAILURE() << "key-" << k << ": seq " << x.seq << " after " << current;
        } else if (x.seq > current) {
          if (x.seq != current + 1 || !current_ok) {
            ++violations;  // skipped an event, or went on before a 2xx
            ADD_FAILURE() << "key-" << k << ": seq " << x.seq << " after " << current
                          << (current_ok ? " (skipped one)" : " before a 2xx");
          }
          current = x.seq;
          current_ok = x.ok;
        } else {
          ++resends;
          current_ok = current_ok || x.ok;
        }
        if (x.ok) ++oks[x.seq];
      }
      for (int seq = 0; seq < kPerKey; ++seq) {
        if (oks[seq] == 0) ++missing;
      }
    }
  }
  std::printf(
      "fifo fault: %d kills, 1 PostgreSQL restart, %d retried posts; %lld arrivals, %lld "
      "re-sends, %lld violations, %lld events never answered 2xx\n",
      chaos.kills(), retried_posts.load(), static_cast<long long>(arrivals),
      static_cast<long long>(resends), static_cast<long long>(violations),
      static_cast<long long>(missing));
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(missing, 0);
  EXPECT_GT(chaos.kills(), 0);
}

// The same chaos with on_dead_letter "block" and a receiver that answers 400 to one chosen
// event of each of a few keys: the later events of those keys wait behind the dead letter
// however the workers die, and go on in order once it is dismissed; other keys never wait.
TEST(FifoFaultTest, UnderBlockADeadLetterHoldsItsKeyThroughTheChaosUntilDismissed) {
  PgCluster cluster;
  const std::string url = cluster.CreateMigratedDatabase("webhookd_fifo_block");
  constexpr int kBlockKeys = 12;
  constexpr int kEventsPerKey = 8;
  constexpr int kRefused = 3;  // this event of keys 0..2 is answered 400
  std::mutex mu;
  std::vector<Seen> seen;
  Receiver receiver([&](const Received& r, int) {
    const Json data = Json::parse(r.body)["data"];
    const std::string key = data["key"];
    const int seq = data["seq"];
    const bool refused = seq == kRefused && (key == "key-0" || key == "key-1" || key == "key-2");
    std::lock_guard lock(mu);
    seen.push_back({key, seq, !refused});
    Answer a;
    a.status = refused ? 400 : 200;
    return a;
  });
  WebhookdProcess server(url, "server", kEnv);
  auto created =
      server.Call("POST", "/v1/destinations",
                  {{"url", receiver.url()}, {"ordering", "fifo"}, {"on_dead_letter", "block"}});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string destination = Json::parse(created.body)["id"];
  WorkerChaos chaos(url, kEnv, kWorkers);
  const auto start = Clock::now();
  {
    auto client = server.Client();
    for (int seq = 0; seq < kEventsPerKey; ++seq) {
      for (int k = 0; k < kBlockKeys; ++k) {
        const std::string key = "key-" + std::to_string(k);
        const Json body = {{"type", "order.updated"},
                           {"ordering_key", key},
                           {"payload", {{"key", key}, {"seq", seq}}}};
        const httplib::Headers idem = {{"Idempotency-Key", key + "-" + std::to_string(seq)}};
        while (Clock::now() - start < 120s) {
          auto res = client->Post("/v1/events", idem, body.dump(), "application/json");
          if (res && res->status == 202) break;
          std::this_thread::sleep_for(200ms);
        }
      }
    }
  }
  // Events answered 2xx at least once (a killed worker's send may reach the receiver twice).
  const auto DistinctOks = [&] {
    std::lock_guard lock(mu);
    std::set<std::pair<std::string, int>> oks;
    for (const Seen& x : seen) {
      if (x.ok) oks.emplace(x.key, x.seq);
    }
    return static_cast<int>(oks.size());
  };
  // The unblocked keys finish; the three blocked ones hold at their refused event.
  Json dead = Json::array();
  ASSERT_TRUE(WaitUntil(
      [&] {
        dead =
            Json::parse(server.Call("GET", "/v1/admin/dead-letters?destination_id=" + destination)
                            .body)["data"];
        return dead.size() == 3 && DistinctOks() >= (kBlockKeys - 3) * kEventsPerKey + 3 * kRefused;
      },
      60s));
  std::this_thread::sleep_for(1s);  // nothing more of the blocked keys may arrive meanwhile
  {
    std::lock_guard lock(mu);
    for (const Seen& x : seen) {
      if ((x.key == "key-0" || x.key == "key-1" || x.key == "key-2") && x.seq > kRefused) {
        ADD_FAILURE() << x.key << " seq " << x.seq << " went while its key was blocked";
      }
    }
  }
  for (const Json& d : dead) {
    auto res =
        server.Call("POST", "/v1/admin/dead-letters/" + d["id"].get<std::string>() + "/dismiss");
    EXPECT_EQ(res.status, 200) << res.body;
  }
  ASSERT_TRUE(WaitUntil([&] { return DistinctOks() == kBlockKeys * kEventsPerKey - 3; }, 60s));
  chaos.Stop();
  // Per key: in order, each event once answered 2xx (the refused one never), the next only
  // after the previous one's 2xx or, for the refused one, its dismissal.
  std::lock_guard lock(mu);
  int64_t violations = 0;
  for (int k = 0; k < kBlockKeys; ++k) {
    const std::string key = "key-" + std::to_string(k);
    int current = -1;
    for (const Seen& x : seen) {
      if (x.key != key) continue;
      if (x.seq < current || x.seq > current + 1) ++violations;
      current = std::max(current, x.seq);
    }
    EXPECT_EQ(current, kEventsPerKey - 1) << key;
  }
  std::printf("fifo block fault: %d kills, %zu arrivals, %lld violations\n", chaos.kills(),
              seen.size(), static_cast<long long>(violations));
  EXPECT_EQ(violations, 0);
}

}  // namespace
}  // namespace webhookd::testing::fifo_fault_test
