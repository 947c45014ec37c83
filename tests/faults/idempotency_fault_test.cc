// Concurrent requests with one Idempotency-Key (docs/api.md): 50 POST /v1/events at once
// with the same key and body create exactly one event (and its deliveries), and every
// answer is the first one's 202 with the same event id, or a 409 while it is still being
// written. Several rounds, each with a fresh key, to give the race more chances.
#include <gtest/gtest.h>

#include <barrier>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::idempotency_fault_test {
namespace {

using Json = nlohmann::json;

constexpr int kConcurrent = 50;
constexpr int kRounds = 5;

TEST(IdempotencyFaultTest, FiftyConcurrentRequestsWithOneKeyMakeOneEvent) {
  TestDatabase db;
  WebhookdProcess server(db.url(), "server");
  auto res = server.Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/hook"}});
  ASSERT_EQ(res.status, 201) << res.body;

  int conflicts = 0, replayed = 0;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string key = "fault-key-" + std::to_string(round);
    const std::string body = Json{{"type", "idem.test"}, {"payload", {{"round", round}}}}.dump();

    struct Result {
      int status = 0;
      std::string id;
      bool replayed = false;
      std::string body;
    };
    std::vector<Result> results(kConcurrent);
    // Every client connects first, then all send at once.
    std::vector<std::unique_ptr<httplib::Client>> clients;
    for (int i = 0; i < kConcurrent; ++i) {
      clients.push_back(server.Client());
      clients.back()->set_keep_alive(true);
      clients.back()->Get("/healthz");
    }
    std::barrier start(kConcurrent);
    std::vector<std::thread> threads;
    for (int i = 0; i < kConcurrent; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        auto r =
            clients[i]->Post("/v1/events", {{"Idempotency-Key", key}}, body, "application/json");
        Result& out = results[i];
        if (!r) return;
        out.status = r->status;
        out.body = r->body;
        out.replayed = r->get_header_value("Idempotent-Replayed") == "true";
        if (r->status == 202) out.id = Json::parse(r->body)["id"];
      });
    }
    for (auto& t : threads) t.join();

    std::set<std::string> ids;
    int accepted = 0, originals = 0;
    for (const Result& r : results) {
      if (r.status == 202) {
        ++accepted;
        ids.insert(r.id);
        if (r.replayed) {
          ++replayed;
        } else {
          ++originals;
        }
      } else if (r.status == 409) {
        ++conflicts;
      } else {
        ADD_FAILURE() << "answered " << r.status << ": " << r.body;
      }
    }
    const std::string events =
        db.Scalar("SELECT count(*) FROM events WHERE payload::jsonb->>'round' = '" +
                  std::to_string(round) + "'");
    EXPECT_EQ(events, "1") << "one key made " << events << " events";
    EXPECT_EQ(db.Scalar("SELECT count(*) FROM idempotency_keys WHERE key = '" + key + "'"), "1");
    EXPECT_GE(accepted, 1);
    EXPECT_EQ(ids.size(), 1u) << "the 202s disagree on the event id";
    EXPECT_EQ(originals, 1) << "answers without Idempotent-Replayed: true";
    if (ids.size() == 1) {
      const std::string id = *ids.begin();
      EXPECT_EQ("evt_" + db.Scalar("SELECT id FROM events WHERE payload::jsonb->>'round' = '" +
                                   std::to_string(round) + "'"),
                id);
      EXPECT_EQ(db.Scalar("SELECT count(*) FROM delivery_rows WHERE event_id = " + id.substr(4)),
                "1");
    }
  }
  std::printf(
      "idempotency fault: %d rounds × %d concurrent requests with one key: %d "
      "replayed 202s, %d 409s (\"still being written\")\n",
      kRounds, kConcurrent, replayed, conflicts);
  std::fflush(stdout);
}

}  // namespace
}  // namespace webhookd::testing::idempotency_fault_test
