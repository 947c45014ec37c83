// What every broker transport shares (worker/broker_connections.h), with a scripted
// session standing in for a broker: the window, a message the session will not join,
// answers reaching their own message once, the attempt timeout, CancelUnstarted and the
// destructor.
#include "worker/broker_connections.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace webhookd {
namespace {

using namespace std::chrono_literals;

// What the sessions did, and the answers the test gives them; shared with the test.
struct Script {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<Ticket, std::string>> begun;  // ticket, url and body, in Begin order
  std::set<Ticket> open;                              // begun, not yet answered
  size_t most_open = 0;
  Answers to_give;                           // handed out by the next Await
  std::vector<std::vector<Ticket>> expired;  // each Expire's tickets
  std::string joins_only;                    // when set: Joins only a body equal to it

  void Give(Ticket ticket, SendResult result) {
    std::lock_guard lock(mu);
    to_give.push_back({ticket, std::move(result)});
    cv.notify_all();
  }

  // Waits until `n` messages were begun.
  bool WaitBegun(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 5s, [&] { return begun.size() >= n; });
  }
};

class ScriptedSession final : public BrokerSession {
 public:
  explicit ScriptedSession(Script& script) : script_(script) {}

  bool Joins(const Outgoing& next) override {
    std::lock_guard lock(script_.mu);
    return script_.joins_only.empty() || next.body == script_.joins_only;
  }

  void Begin(const Outgoing& out, Ticket ticket, Answers&) override {
    std::lock_guard lock(script_.mu);
    script_.begun.emplace_back(ticket, out.url + out.body);
    script_.open.insert(ticket);
    script_.most_open = std::max(script_.most_open, script_.open.size());
    script_.cv.notify_all();
  }

  void Await(std::chrono::steady_clock::time_point until, Answers& answers) override {
    std::unique_lock lock(script_.mu);
    script_.cv.wait_until(lock, until, [&] { return !script_.to_give.empty(); });
    for (Answer& answer : script_.to_give) {
      script_.open.erase(answer.ticket);
      answers.push_back(std::move(answer));
    }
    script_.to_give.clear();
  }

  void Expire(std::span<const Ticket> expired, Answers&) override {
    std::lock_guard lock(script_.mu);
    script_.expired.emplace_back(expired.begin(), expired.end());
    for (Ticket ticket : expired) script_.open.erase(ticket);
  }

 private:
  Script& script_;
};

BrokerConnections::Options Options(int window, Duration attempt_timeout = 10s) {
  BrokerConnections::Options o;
  o.window = window;
  o.attempt_timeout = attempt_timeout;
  o.allow_private = true;
  return o;
}

BrokerConnections::MakeSession Scripted(Script& script) {
  return [&script](const BrokerOptions&, Resolver&) {
    return std::make_unique<ScriptedSession>(script);
  };
}

Outgoing To(const std::string& url, std::string body = "") {
  Outgoing out;
  out.url = url;
  out.body = std::move(body);
  return out;
}

SendResult Acknowledged(std::string body) {
  SendResult r;
  r.acknowledged = true;
  r.body = std::move(body);
  return r;
}

// The results of sends, by the order they were started; thread-safe.
struct Results {
  std::mutex mu;
  std::condition_variable cv;
  std::map<int, std::vector<SendResult>> by_send;  // a send answered twice shows here

  BrokerConnections::Done For(int send) {
    return [this, send](SendResult r) {
      std::lock_guard lock(mu);
      by_send[send].push_back(std::move(r));
      cv.notify_all();
    };
  }

  bool WaitFor(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 5s, [&] { return by_send.size() >= n; });
  }
};

TEST(BrokerConnectionsTest, AtMostAWindowIsInFlightAndEachAnswerReachesItsOwnMessage) {
  Script script;
  Results results;
  {
    BrokerConnections connections(Options(3), Scripted(script));
    for (int i = 0; i < 7; ++i) connections.Start(To("x://a"), results.For(i));
    ASSERT_TRUE(script.WaitBegun(3));
    std::this_thread::sleep_for(50ms);  // room for a fourth, were the window wrong
    {
      std::lock_guard lock(script.mu);
      EXPECT_EQ(script.begun.size(), 3u);
    }
    // Answered out of order: the second first.
    script.Give(2, Acknowledged("two"));
    ASSERT_TRUE(script.WaitBegun(4));
    script.Give(1, Acknowledged("one"));
    script.Give(3, Acknowledged("three"));
    ASSERT_TRUE(script.WaitBegun(6));
    for (Ticket t = 4; t <= 6; ++t) script.Give(t, Acknowledged(std::to_string(t)));
    ASSERT_TRUE(script.WaitBegun(7));
    script.Give(7, Acknowledged("7"));
    ASSERT_TRUE(results.WaitFor(7));
  }
  EXPECT_EQ(script.most_open, 3u);
  // Tickets follow Start's order, so each send got the answer given for its ticket.
  std::lock_guard lock(results.mu);
  const std::vector<std::string> expected = {"one", "two", "three", "4", "5", "6", "7"};
  for (int i = 0; i < 7; ++i) {
    ASSERT_EQ(results.by_send[i].size(), 1u) << i;
    EXPECT_EQ(results.by_send[i][0].body, expected[static_cast<size_t>(i)]) << i;
  }
}

TEST(BrokerConnectionsTest, AMessageTheSessionDoesNotJoinWaitsUntilThoseInFlightAreAnswered) {
  Script script;
  script.joins_only = "a";
  Results results;
  BrokerConnections connections(Options(10), Scripted(script));
  connections.Start(To("x://", "a"), results.For(0));
  connections.Start(To("x://", "a"), results.For(1));
  connections.Start(To("x://", "b"), results.For(2));
  connections.Start(To("x://", "a"), results.For(3));  // behind the held one: order is kept
  ASSERT_TRUE(script.WaitBegun(2));
  std::this_thread::sleep_for(50ms);
  {
    std::lock_guard lock(script.mu);
    EXPECT_EQ(script.begun.size(), 2u);
  }
  script.Give(1, Acknowledged(""));
  std::this_thread::sleep_for(50ms);
  {
    std::lock_guard lock(script.mu);
    EXPECT_EQ(script.begun.size(), 2u) << "one is still in flight";
  }
  script.Give(2, Acknowledged(""));
  ASSERT_TRUE(script.WaitBegun(3));
  {
    std::lock_guard lock(script.mu);
    EXPECT_EQ(script.begun[2].second, "x://b");  // before the "a" behind it
  }
  script.Give(3, Acknowledged(""));
  ASSERT_TRUE(script.WaitBegun(4));
  script.Give(4, Acknowledged(""));
  EXPECT_TRUE(results.WaitFor(4));
}

TEST(BrokerConnectionsTest, AnAnswerGivenTwiceOrForAnUnknownTicketIsDropped) {
  Script script;
  Results results;
  BrokerConnections connections(Options(4), Scripted(script));
  connections.Start(To("x://a"), results.For(0));
  connections.Start(To("x://a"), results.For(1));
  ASSERT_TRUE(script.WaitBegun(2));
  script.Give(1, Acknowledged("first"));
  script.Give(1, Acknowledged("second"));
  script.Give(99, Acknowledged("stray"));
  script.Give(2, Acknowledged("two"));
  ASSERT_TRUE(results.WaitFor(2));
  std::this_thread::sleep_for(50ms);
  std::lock_guard lock(results.mu);
  ASSERT_EQ(results.by_send[0].size(), 1u);
  EXPECT_EQ(results.by_send[0][0].body, "first");
  ASSERT_EQ(results.by_send[1].size(), 1u);
  EXPECT_EQ(results.by_send[1][0].body, "two");
}

TEST(BrokerConnectionsTest, AMessageUnansweredWithinTheAttemptTimeoutIsExpiredAsTimedOut) {
  Script script;
  Results results;
  BrokerConnections connections(Options(4, 200ms), Scripted(script));
  const auto started = std::chrono::steady_clock::now();
  connections.Start(To("x://a"), results.For(0));
  ASSERT_TRUE(results.WaitFor(1));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 200ms);
  std::lock_guard lock(results.mu);
  const SendResult& r = results.by_send[0].at(0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.acknowledged);
  EXPECT_EQ(r.error, "no answer from the broker within the attempt timeout");
  std::lock_guard script_lock(script.mu);
  ASSERT_EQ(script.expired.size(), 1u);
  EXPECT_EQ(script.expired[0], std::vector<Ticket>{1});
}

TEST(BrokerConnectionsTest, CancelUnstartedEndsWhatIsQueuedAndTheDestructorWaitsForWhatIsInFlight) {
  Script script;
  Results results;
  std::future<void> answer_later;
  {
    BrokerConnections connections(Options(1), Scripted(script));
    for (int i = 0; i < 4; ++i) connections.Start(To("x://a"), results.For(i));
    ASSERT_TRUE(script.WaitBegun(1));
    connections.CancelUnstarted();
    answer_later = std::async(std::launch::async, [&script] {
      std::this_thread::sleep_for(100ms);
      script.Give(1, Acknowledged("late but in time"));
    });
  }  // joins only once the message in flight is answered
  std::lock_guard lock(results.mu);
  ASSERT_EQ(results.by_send.size(), 4u);
  EXPECT_TRUE(results.by_send[0].at(0).acknowledged);
  for (int i = 1; i < 4; ++i) {
    EXPECT_TRUE(results.by_send[i].at(0).not_started) << i;
  }
  std::lock_guard script_lock(script.mu);
  EXPECT_EQ(script.begun.size(), 1u);
}

TEST(BrokerConnectionsTest, EachConnectionKeyHasASessionOfItsOwn) {
  std::vector<std::unique_ptr<Script>> scripts;  // one per session, made under the lock
  Results results;
  BrokerConnections connections(Options(1), [&](const BrokerOptions&, Resolver&) {
    scripts.push_back(std::make_unique<Script>());
    return std::make_unique<ScriptedSession>(*scripts.back());
  });
  Outgoing with_password = To("x://a");
  with_password.broker = BrokerSettings{};
  with_password.broker->password = "p";
  connections.Start(To("x://a"), results.For(0));
  connections.Start(with_password, results.For(1));
  connections.Start(To("x://b"), results.For(2));
  connections.Start(To("x://a"), results.For(3));  // the first one's again
  ASSERT_EQ(scripts.size(), 3u);
  for (auto& script : scripts) {
    ASSERT_TRUE(script->WaitBegun(1));
    script->Give(1, Acknowledged(""));
  }
  ASSERT_TRUE(scripts[0]->WaitBegun(2));
  scripts[0]->Give(2, Acknowledged(""));
  ASSERT_TRUE(results.WaitFor(4));
  EXPECT_EQ(scripts[0]->begun[1].second, "x://a");  // the first session's second
}

}  // namespace
}  // namespace webhookd
