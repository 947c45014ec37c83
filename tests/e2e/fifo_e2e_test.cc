// Ordered delivery end to end (docs/ordering.md): a fifo destination gets each ordering
// key's events one at a time, in the order their 202s came back, across retries; a dead
// letter under "block" holds its key until dismissed; events and deliveries show their key
// and what a waiting delivery waits for.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/process.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::fifo_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

class FifoE2eTest : public ::testing::Test {
 protected:
  FifoE2eTest()
      : webhookd_(db_.url(), "all",
                  {{"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms"},
                   {"WEBHOOKD_RETRY_JITTER", "0"},
                   {"WEBHOOKD_CIRCUIT_THRESHOLD", "1000"}}) {}

  Json Call(const std::string& method, const std::string& path, const Json& body = nullptr,
            int want = 200) {
    auto res = webhookd_.Call(method, path, body);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return !res.body.empty() ? Json::parse(res.body) : Json::object();
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

// One arrival at the receiver: which key, which event of it, and whether it was answered
// 2xx.
struct Arrival {
  std::string key;
  int seq;
  bool ok;
};

TEST_F(FifoE2eTest, EachKeysEventsArriveOneAtATimeInOrderAcrossRetries) {
  std::mutex mu;
  std::vector<Arrival> arrivals;
  std::map<std::string, int> in_flight;  // per key, requests being answered now
  std::atomic<int> overlaps{0};
  // Every third event fails its first attempt: its key must wait for the retry.
  Receiver receiver([&](const Received& r, int) {
    const Json body = Json::parse(r.body);
    const std::string key = body["data"]["key"];
    const int seq = body["data"]["seq"];
    bool ok;
    {
      std::lock_guard lock(mu);
      if (++in_flight[key] > 1) ++overlaps;
      ok = seq % 3 != 0 || std::count_if(arrivals.begin(), arrivals.end(), [&](const Arrival& a) {
                             return a.key == key && a.seq == seq;
                           }) > 0;
      arrivals.push_back({key, seq, ok});
    }
    std::this_thread::sleep_for(5ms);
    {
      std::lock_guard lock(mu);
      --in_flight[key];
    }
    Answer a;
    a.status = ok ? 200 : 500;
    return a;
  });
  const Json dst = Call("POST", "/v1/destinations",
                        {{"url", receiver.url()}, {"ordering", "fifo"}, {"max_in_flight", 8}}, 201);
  EXPECT_EQ(dst["ordering"], "fifo");
  EXPECT_EQ(dst["on_dead_letter"], "continue");
  constexpr int kKeys = 4;
  constexpr int kPerKey = 9;
  for (int seq = 0; seq < kPerKey; ++seq) {
    for (int k = 0; k < kKeys; ++k) {
      const std::string key = "order-" + std::to_string(k);
      Call("POST", "/v1/events",
           {{"type", "order.updated"},
            {"ordering_key", key},
            {"payload", {{"key", key}, {"seq", seq}}}},
           202);
    }
  }
  // 48 sends, each key's one after another: on a loaded machine (a sanitized build beside
  // the rest of the suite) a key's twelve hops have taken over 30 s.
  const bool all_arrived = WaitUntil(
      [&] {
        std::lock_guard lock(mu);
        // At least: an event delivered twice is shown below, by its key's sequence.
        return std::count_if(arrivals.begin(), arrivals.end(),
                             [](const Arrival& a) { return a.ok; }) >= kKeys * kPerKey;
      },
      90s);
  std::lock_guard lock(mu);
  if (!all_arrived) {
    // What each key got, and where its deliveries stand.
    std::string got;
    for (const Arrival& a : arrivals) {
      got += a.key + "#" + std::to_string(a.seq) + (a.ok ? " " : "(500) ");
    }
    // What webhookd warned of, too: the recorders' refusals explained the last failure.
    std::string warnings;
    std::istringstream log(ReadFile(webhookd_.log_path()));
    for (std::string line; std::getline(log, line);) {
      if (line.find(R"("level":"debug")") == std::string::npos &&
          line.find(R"("level":"info")") == std::string::npos)
        warnings += line.substr(0, 300) + "\n";
    }
    ADD_FAILURE() << "not every event arrived; arrivals: " << got << "\nqueue: "
                  << webhookd_.Call("GET", "/v1/deliveries?status=pending&limit=100").body
                  << "\nwebhookd's warnings:\n"
                  << warnings;
    return;
  }
  EXPECT_EQ(overlaps.load(), 0) << "two requests of one key at once";
  // Per key: the arrivals are the events in order, each one's failed attempt followed by
  // its retry before the next event's first attempt.
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "order-" + std::to_string(k);
    std::vector<std::pair<int, bool>> seen;
    for (const Arrival& a : arrivals) {
      if (a.key == key) seen.emplace_back(a.seq, a.ok);
    }
    std::vector<std::pair<int, bool>> want;
    for (int seq = 0; seq < kPerKey; ++seq) {
      if (seq % 3 == 0) want.emplace_back(seq, false);
      want.emplace_back(seq, true);
    }
    EXPECT_EQ(seen, want) << key;
  }
}

TEST_F(FifoE2eTest, UnderBlockADeadLetterHoldsItsKeyUntilDismissed) {
  std::atomic<bool> refuse_first{true};
  Receiver receiver([&](const Received& r, int) {
    Answer a;
    a.status = Json::parse(r.body)["data"]["seq"] == 1 && refuse_first ? 400 : 200;
    return a;
  });
  const Json dst =
      Call("POST", "/v1/destinations",
           {{"url", receiver.url()}, {"ordering", "fifo"}, {"on_dead_letter", "block"}}, 201);
  const std::string id = dst["id"];
  const auto post = [&](int seq) {
    return Call("POST", "/v1/events",
                {{"type", "order.updated"}, {"ordering_key", "k"}, {"payload", {{"seq", seq}}}},
                202)["deliveries"][0]["id"]
        .get<std::string>();
  };
  const std::string first = post(1);
  Json dead;
  ASSERT_TRUE(WaitUntil(
      [&] {
        dead = Call("GET", "/v1/admin/dead-letters?destination_id=" + id)["data"];
        return dead.size() == 1;
      },
      10s));
  const std::string second = post(2);
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(receiver.count(), 1u) << "the second went while the first's dead letter held the key";
  const Json waiting = Call("GET", "/v1/deliveries/" + second);
  EXPECT_EQ(waiting["status"], "pending");
  EXPECT_EQ(waiting["ordering_key"], "k");
  EXPECT_EQ(waiting["blocked_by"], first);
  EXPECT_EQ(Call("GET", "/v1/deliveries/" + first)["blocked_by"], nullptr);
  EXPECT_EQ(Call("GET", "/v1/events/" + waiting["event_id"].get<std::string>())["ordering_key"],
            "k");

  const std::string dl = dead[0]["id"];
  const Json dismissed = Call("POST", "/v1/admin/dead-letters/" + dl + "/dismiss", nullptr, 200);
  EXPECT_TRUE(dismissed["dismissed_at"].is_string()) << dismissed;
  Call("POST", "/v1/admin/dead-letters/" + dl + "/dismiss", nullptr, 409);
  Call("POST", "/v1/admin/dead-letters/" + dl + "/replay", nullptr, 409);
  ASSERT_TRUE(receiver.WaitFor(2, 10s));
  EXPECT_EQ(Json::parse(receiver.requests()[1].body)["data"]["seq"], 2);
}

TEST_F(FifoE2eTest, BadOrderingFieldsAre422) {
  Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/h"}, {"ordering", "lifo"}}, 422);
  Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/h"}, {"on_dead_letter", "drop"}},
       422);
  Call("POST", "/v1/events",
       {{"type", "a.b"}, {"payload", Json::object()}, {"ordering_key", std::string(256, 'k')}},
       422);
  Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}, {"ordering_key", ""}},
       422);
  Call("POST", "/v1/events",
       {{"type", "a.b"}, {"payload", Json::object()}, {"ordering_key", "a\nb"}}, 422);
  Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}, {"ordering_key", 5}},
       422);
  // The 202 shows the key as GET /v1/events/{id} does.
  EXPECT_EQ(Call("POST", "/v1/events",
                 {{"type", "a.b"}, {"payload", Json::object()}, {"ordering_key", "é✓"}},
                 202)["ordering_key"],
            "é✓");
  EXPECT_EQ(Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}},
                 202)["ordering_key"],
            nullptr);
  EXPECT_EQ(Call("GET", "/v1/events?limit=1")["data"][0]["ordering_key"], nullptr);
  EXPECT_EQ(Call("GET", "/v1/events?limit=2")["data"][1]["ordering_key"], "é✓");
}

}  // namespace
}  // namespace webhookd::testing::fifo_e2e_test
