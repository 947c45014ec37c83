// What a tenant's broker destinations could make a worker hold, driven through the
// worker's own transports in this process so its threads can be counted, against real
// brokers (or hostile stand-ins) on loopback.
// Before: every connection key (URL and credentials) a destination ever used kept its
// connection and thread for the life of the process: one tenant's 120 destinations on
// 127.0.0.{2..121} grew the worker from 12 to 132 threads, and changing a password in a
// loop grew threads and sockets without end. And the transports shared one resolver of
// 64 lookups with no share per tenant: one tenant's names on a name server that never
// answers took every lookup, and every other tenant's connects failed.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "net/resolver.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/wait.h"
#include "worker/redis_transport.h"

namespace webhookd::brokers_security_test {
namespace {

using namespace std::chrono_literals;

size_t ThreadCount() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                           std::filesystem::directory_iterator()));
}

RedisTransport::Options Loopback() {
  RedisTransport::Options o;
  o.attempt_timeout = 2s;
  o.allow_private = true;
  return o;
}

Outgoing Message(const std::string& url, int64_t destination, BrokerSettings broker,
                 const std::string& tenant = "tenant") {
  Outgoing out;
  out.url = url;
  out.body = R"({"type":"order.created","data":{}})";
  out.headers = {{"webhook-id", "msg_1"}};
  broker.stream = "webhooks";
  out.broker = std::move(broker);
  out.tenant = tenant;
  out.destination_id = destination;
  return out;
}

// Sends `out` and waits for its result (bounded).
SendResult Send(AsyncSender& sender, Outgoing out) {
  auto promise = std::make_shared<std::promise<SendResult>>();
  auto result = promise->get_future();
  sender.Start(std::move(out), [promise](SendResult r) { promise->set_value(std::move(r)); });
  if (result.wait_for(10s) != std::future_status::ready) {
    ADD_FAILURE() << "no result within 10 s";
    return {};
  }
  return result.get();
}

TEST(BrokersSecurityTest, AThousandPasswordChangesLeaveTheWorkersThreadsWhereTheyWere) {
  testing::RedisServer redis;
  RedisTransport transport(Loopback());
  const size_t before = ThreadCount();
  size_t most = before;
  int delivered = 0;
  for (int i = 0; i < 1000; ++i) {
    // Redis's default user takes any password: each change is one more key that works.
    BrokerSettings broker;
    broker.username = "default";
    broker.password = "password " + std::to_string(i);
    const SendResult r = Send(transport, Message(redis.url() + "/0", 1, broker));
    if (r.acknowledged) ++delivered;
    most = std::max(most, ThreadCount());
  }
  EXPECT_GT(delivered, 0);
  // One tenant holds at most 16 connections, a thread each, those being closed included.
  EXPECT_LE(most, before + 16) << "threads: " << before << " before, " << most << " at most";
  // What is left is the one connection the destination uses now.
  EXPECT_TRUE(testing::WaitUntil([&] { return ThreadCount() <= before + 1; }, 5s))
      << ThreadCount() << " threads, " << before << " before";
}

TEST(BrokersSecurityTest, OneTenantsHundredAndTwentyBrokerAddressesTakeAtMostItsShareOfThreads) {
  testing::RedisServer redis;  // on 127.0.0.1 only: every other address refuses
  RedisTransport transport(Loopback());
  const size_t before = ThreadCount();
  size_t most = before;
  int at_capacity = 0;
  for (int i = 2; i <= 121; ++i) {
    const std::string url =
        "redis://127.0.0." + std::to_string(i) + ":" + std::to_string(redis.port()) + "/0";
    const SendResult r = Send(transport, Message(url, i, {}));
    EXPECT_FALSE(r.acknowledged) << url;
    if (r.at_capacity) ++at_capacity;
    most = std::max(most, ThreadCount());
  }
  EXPECT_LE(most, before + 16) << "threads: " << before << " before, " << most << " at most";
  EXPECT_LE(transport.open(), 16);
  // A connection tried and refused makes room for the tenant's next: not all are refused.
  EXPECT_LT(at_capacity, 120);
}

// A name server that never answers names under hang.test, until released; the threads
// asking it share this with the test, which may end first.
struct Hang {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  int asked = 0;
};

TEST(BrokersSecurityTest, ATenantsNamesThatNeverResolveLeaveOtherTenantsTheirLookups) {
  testing::RedisServer redis;
  auto hang = std::make_shared<Hang>();
  // Each lookup is given up after 50 ms; one that hangs still holds its slot of the 64.
  SystemResolver resolver(50ms, 64,
                          [hang](const std::string& host) -> Result<std::vector<IpAddress>> {
                            if (!host.ends_with(".hang.test"))
                              return std::vector<IpAddress>{IpAddress::V4(0x7f000001)};
                            std::unique_lock lock(hang->mu);
                            ++hang->asked;
                            hang->cv.wait_for(lock, 60s, [&] { return hang->released; });
                            return Fail(ErrorKind::kInvalid, "host does not resolve");
                          });
  auto options = Loopback();
  options.resolver = &resolver;
  RedisTransport transport(options);
  const std::string port = std::to_string(redis.port());
  // Tenant a: 80 destinations, each on a name of its own that hangs, one after another
  // (a connection refused for the tenant's share is tried again once one is free).
  for (int d = 0; d < 80; ++d) {
    const std::string url = "redis://d" + std::to_string(d) + ".hang.test:" + port + "/0";
    SendResult r;
    for (int tries = 0; tries < 50; ++tries) {
      r = Send(transport, Message(url, 100 + d, {}, "a"));
      if (!r.at_capacity) break;
      std::this_thread::sleep_for(20ms);
    }
    EXPECT_FALSE(r.acknowledged) << url;
    EXPECT_FALSE(r.at_capacity) << url;
  }
  {
    std::lock_guard lock(hang->mu);
    EXPECT_LE(hang->asked, 8) << "lookups of tenant a's names";
  }
  // Tenant b's name resolves: its messages are delivered.
  const SendResult b = Send(transport, Message("redis://ok.test:" + port + "/0", 1, {}, "b"));
  EXPECT_TRUE(b.acknowledged) << b.error.value_or("");
  {
    std::lock_guard lock(hang->mu);
    hang->released = true;
  }
  hang->cv.notify_all();
}

}  // namespace
}  // namespace webhookd::brokers_security_test
