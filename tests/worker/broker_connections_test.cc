// What every broker transport shares (worker/broker_connections.h), with a scripted
// session standing in for a broker: the window, a message the session will not join,
// answers reaching their own message once, the attempt timeout, CancelUnstarted and the
// destructor; the connections open at once (per tenant and in all), and the closing of
// idle and superseded connections, their threads joined.
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

#include "tests/testing/fakes.h"
#include "tests/testing/wait.h"

namespace webhookd::broker_connections_test {
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
  int sessions = 0;                          // made and not yet destroyed

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
  explicit ScriptedSession(Script& script) : script_(script) {
    std::lock_guard lock(script_.mu);
    ++script_.sessions;
  }
  ~ScriptedSession() override {
    std::lock_guard lock(script_.mu);
    --script_.sessions;
  }
  ScriptedSession(const ScriptedSession&) = delete;
  ScriptedSession& operator=(const ScriptedSession&) = delete;

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

Outgoing Of(const std::string& tenant, int64_t destination, const std::string& url) {
  Outgoing out = To(url, url);
  out.tenant = tenant;
  out.destination_id = destination;
  return out;
}

// A script per session, in the order they were made (by Start, on the test's thread).
struct Scripts {
  std::vector<std::unique_ptr<Script>> all;

  BrokerConnections::MakeSession Make() {
    return [this](const BrokerOptions&, Resolver&) {
      all.push_back(std::make_unique<Script>());
      return std::make_unique<ScriptedSession>(*all.back());
    };
  }

  // Sessions not yet destroyed.
  int Live() {
    int live = 0;
    for (auto& script : all) {
      std::lock_guard lock(script->mu);
      live += script->sessions;
    }
    return live;
  }
};

TEST(BrokerConnectionsTest, ATenantHasAtMostItsShareOfConnectionsAndOneMoreIsNotSentButRetried) {
  Scripts scripts;
  Results results;
  auto options = Options(1);
  options.limits = std::make_shared<BrokerLimits>(/*total=*/3, /*per_tenant=*/2);
  BrokerConnections connections(options, scripts.Make());
  // Two connections of tenant a, each with a message in flight, so neither may be closed.
  connections.Start(Of("a", 1, "x://one"), results.For(0));
  connections.Start(Of("a", 2, "x://two"), results.For(1));
  connections.Start(Of("a", 3, "x://three"), results.For(2));
  ASSERT_TRUE(results.WaitFor(1));
  {
    std::lock_guard lock(results.mu);
    const SendResult& refused = results.by_send.at(2).at(0);
    EXPECT_TRUE(refused.at_capacity);
    EXPECT_FALSE(refused.refused);
    EXPECT_EQ(refused.error, "broker connections: the tenant's 2 connections are all in use");
  }
  // Another tenant still gets one; then the worker's 3 are all in use.
  connections.Start(Of("b", 4, "x://four"), results.For(3));
  connections.Start(Of("c", 5, "x://five"), results.For(4));
  ASSERT_TRUE(results.WaitFor(2));
  {
    std::lock_guard lock(results.mu);
    EXPECT_TRUE(results.by_send.at(4).at(0).at_capacity);
    EXPECT_NE(results.by_send.at(4).at(0).error->find("WEBHOOKD_MAX_BROKER_CONNECTIONS"),
              std::string::npos);
  }
  EXPECT_EQ(connections.open(), 3);
  ASSERT_EQ(scripts.all.size(), 3u);
  for (auto& script : scripts.all) {
    ASSERT_TRUE(script->WaitBegun(1));
    script->Give(1, Acknowledged(""));
  }
  ASSERT_TRUE(results.WaitFor(5));
  // Once tenant a's messages are answered, one more of its makes room for itself: the
  // connection it used least lately is closed, and the next try is sent.
  connections.Start(Of("a", 3, "x://three"), results.For(5));
  ASSERT_TRUE(testing::WaitUntil([&] { return connections.open() == 2; }, 5s));
  connections.Start(Of("a", 3, "x://three"), results.For(6));
  ASSERT_EQ(scripts.all.size(), 4u);
  ASSERT_TRUE(scripts.all.back()->WaitBegun(1));
  EXPECT_EQ(scripts.Live(), 3);
  scripts.all.back()->Give(1, Acknowledged(""));
  ASSERT_TRUE(results.WaitFor(7));
}

TEST(BrokerConnectionsTest,
     AConnectionWhoseDestinationMovedToAnotherKeyIsClosedAndItsThreadJoined) {
  Scripts scripts;
  Results results;
  BrokerConnections connections(Options(1, 1s), scripts.Make());  // the last ones expire
  // A thousand changes of one destination's password: the connections of the old ones
  // are closed as the new ones come.
  constexpr int kChanges = 1000;
  int sent = 0;
  for (int i = 0; i < kChanges; ++i) {
    Outgoing out = Of("a", 7, "x://host");
    out.broker = BrokerSettings{};
    out.broker->password = "password " + std::to_string(i);
    const size_t made = scripts.all.size();
    connections.Start(std::move(out), results.For(i));
    // Those being closed count until their threads end: a change may find the tenant's
    // share taken, and its message is then not sent (at_capacity), to be tried again.
    if (scripts.all.size() > made) {
      ASSERT_TRUE(scripts.all.back()->WaitBegun(1));
      scripts.all.back()->Give(1, Acknowledged(""));
      ++sent;
    }
    ASSERT_TRUE(results.WaitFor(static_cast<size_t>(i) + 1));
    ASSERT_LE(connections.open(), BrokerLimits::kPerTenant) << "after " << i << " changes";
    ASSERT_LE(scripts.Live(), BrokerLimits::kPerTenant) << "after " << i << " changes";
  }
  EXPECT_GT(sent, 0);
  EXPECT_TRUE(testing::WaitUntil([&] { return connections.open() == 1; }, 5s))
      << connections.open() << " connections";
  EXPECT_EQ(scripts.Live(), 1);
  // A connection another destination still uses stays.
  connections.Start(Of("a", 8, "x://shared"), results.For(kChanges));
  connections.Start(Of("a", 9, "x://shared"), results.For(kChanges + 1));
  connections.Start(Of("a", 8, "x://elsewhere"), results.For(kChanges + 2));
  EXPECT_EQ(connections.open(), 3);
  EXPECT_EQ(scripts.Live(), 3);
}

TEST(BrokerConnectionsTest, AConnectionWithNothingToSendForTheIdleTimeoutIsClosed) {
  Scripts scripts;
  Results results;
  testing::FakeClock clock;
  auto options = Options(1);
  options.clock = &clock;
  BrokerConnections connections(options, scripts.Make());
  connections.Start(Of("a", 1, "x://idle"), results.For(0));
  connections.Start(Of("a", 2, "x://busy"), results.For(1));
  ASSERT_EQ(scripts.all.size(), 2u);
  ASSERT_TRUE(scripts.all[0]->WaitBegun(1));
  scripts.all[0]->Give(1, Acknowledged(""));
  ASSERT_TRUE(results.WaitFor(1));
  clock.Advance(std::chrono::minutes(4));
  connections.CloseIdle();
  EXPECT_EQ(connections.open(), 2);
  clock.Advance(std::chrono::minutes(1));
  connections.CloseIdle();
  // x://busy has a message in flight: it is not idle, however long ago it was used.
  EXPECT_TRUE(testing::WaitUntil([&] { return connections.open() == 1; }, 5s));
  EXPECT_EQ(scripts.Live(), 1);
  {
    std::lock_guard lock(scripts.all[0]->mu);
    EXPECT_EQ(scripts.all[0]->sessions, 0);
  }
  scripts.all[1]->Give(1, Acknowledged(""));
  ASSERT_TRUE(results.WaitFor(2));
}

}  // namespace
}  // namespace webhookd::broker_connections_test
