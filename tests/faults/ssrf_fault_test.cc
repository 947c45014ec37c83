// The private-network guard (docs/api.md WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS, §5 refused
// = permanent): with the guard on, destinations that name loopback in any spelling are
// refused by the API, and the ones that reach the database anyway (inserted with SQL)
// are dead-lettered at delivery time without a single connection to the listeners on
// 127.0.0.1, 127.0.0.2 and ::1. And DNS rebinding: a name that resolved to a public
// address when the API checked it and to 127.0.0.1 at delivery time is refused then.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <pqxx/pqxx>
#include <thread>

#include "net/resolver.h"
#include "tests/testing/raw_listener.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"
#include "worker/curl_sender.h"

namespace webhookd::testing::ssrf_fault_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;

// The spec's test secret: usable, so a refusal can only come from the address.
constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

// Connects once to host:port (to prove a listener is there); true on success.
bool ConnectOnce(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  sockaddr_storage storage{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET6, host.c_str(), &a->sin6_addr);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &a->sin_addr);
    len = sizeof(*a);
  }
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&storage), len) == 0;
  ::close(fd);
  return ok;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Listeners on one port of 127.0.0.1, 127.0.0.2 and ::1, each counting its connections.
struct LoopbackListeners {
  LoopbackListeners() {
    for (int attempt = 0;; ++attempt) {
      try {
        v4 = std::make_unique<RawListener>("127.0.0.1", 0, RawListener::Answers(200));
        v4b = std::make_unique<RawListener>("127.0.0.2", v4->port(), RawListener::Answers(200));
        v6 = std::make_unique<RawListener>("::1", v4->port(), RawListener::Answers(200));
        return;
      } catch (const std::exception&) {
        v6.reset();
        v4b.reset();
        v4.reset();
        if (attempt == 9) throw;
      }
    }
  }
  int port() const { return v4->port(); }
  int accepted() const { return v4->accepted() + v4b->accepted() + v6->accepted(); }

  std::unique_ptr<RawListener> v4, v4b, v6;
};

TEST(SsrfFaultTest, EverySpellingOfLoopbackIsRefusedAndNeverConnected) {
  LoopbackListeners listeners;
  const std::string p = std::to_string(listeners.port());
  // The listeners are reachable: a connection that the guard let through would count.
  ASSERT_TRUE(ConnectOnce("127.0.0.1", listeners.port()));
  ASSERT_TRUE(ConnectOnce("127.0.0.2", listeners.port()));
  ASSERT_TRUE(ConnectOnce("::1", listeners.port()));
  ASSERT_TRUE(WaitUntil([&] { return listeners.accepted() == 3; }, 5s));

  const std::vector<std::string> urls = {
      "http://127.0.0.1:" + p + "/",
      "http://127.0.0.2:" + p + "/",
      "http://[::1]:" + p + "/",
      "http://localhost:" + p + "/",
      "http://2130706433:" + p + "/",
      "http://0x7f000001:" + p + "/",
      "http://0x7f.1:" + p + "/",
      "http://127.1:" + p + "/",
      "http://[::ffff:127.0.0.1]:" + p + "/",
      "http://[::ffff:7f00:1]:" + p + "/",
  };

  TestDatabase db;
  WebhookdProcess w(db.url(), "all",
                    {{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "false"},
                     {"WEBHOOKD_RETRY_SCHEDULE", "1s,1s"},
                     {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                     {"WEBHOOKD_CONNECT_TIMEOUT", "1s"}});
  for (const std::string& url : urls) {
    auto res = w.Call("POST", "/v1/destinations", {{"url", url}});
    EXPECT_EQ(res.status, 422) << url << ": " << res.body;
    db.Exec("INSERT INTO destinations (url, secret) VALUES ('" + url + "', '" + kSecret + "')");
  }
  auto res = w.Call("POST", "/v1/events", {{"type", "ssrf.test"}, {"payload", Json::object()}});
  ASSERT_EQ(res.status, 202) << res.body;
  ASSERT_EQ(Json::parse(res.body)["deliveries"].size(), urls.size());

  ASSERT_TRUE(WaitUntil(
      [&] {
        return db.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'dead_lettered'") ==
               std::to_string(urls.size());
      },
      30s))
      << db.Scalar("SELECT string_agg(d::text, E'\\n') FROM delivery_rows d");

  pqxx::connection conn(db.url());
  pqxx::nontransaction tx(conn);
  const auto rows = tx.exec(
      "SELECT t.url, x.reason, x.attempt_count, coalesce(x.last_error, ''), "
      "(SELECT count(*) FROM attempts a WHERE a.delivery_id = x.delivery_id) "
      "FROM dead_letters x JOIN destinations t ON t.id = x.destination_id ORDER BY t.id");
  ASSERT_EQ(rows.size(), urls.size());
  for (const auto& row : rows) {
    SCOPED_TRACE(row[0].c_str());
    const std::string error = Lower(row[3].c_str());
    EXPECT_STREQ(row[1].c_str(), "permanent_failure");
    EXPECT_EQ(row[2].as<int>(), 1) << "refused at once, never retried";
    EXPECT_EQ(row[4].as<int>(), 1);
    // The same words whatever the address: the error is readable by tenant keys.
    EXPECT_EQ(error, "destination address not allowed");
  }
  EXPECT_EQ(listeners.accepted(), 3) << "the guard let a connection through to loopback";
}

// Answers the scripted addresses in turn, then repeats the last; counts the calls.
class ScriptedResolver final : public Resolver {
 public:
  explicit ScriptedResolver(std::vector<std::vector<IpAddress>> answers)
      : answers_(std::move(answers)) {}
  Result<std::vector<IpAddress>> Resolve(const std::string&) override {
    const size_t n = calls_++;
    return answers_[std::min(n, answers_.size() - 1)];
  }
  int calls() const { return calls_.load(); }

 private:
  std::vector<std::vector<IpAddress>> answers_;
  std::atomic<size_t> calls_{0};
};

const IpAddress kPublic = IpAddress::V4(0x5DB8D822);  // 93.184.216.34

Outgoing Request(int port) {
  Outgoing out;
  out.url = "http://rebind.test:" + std::to_string(port) + "/hook";
  out.headers = {{"Content-Type", "application/json"}, {"webhook-id", "evt_1"}};
  out.body = R"({"type":"t","timestamp":"2026-01-01T00:00:00Z","data":{}})";
  return out;
}

CurlSender::Options SenderOptions(bool allow_private) {
  CurlSender::Options options;
  options.connect_timeout = std::chrono::seconds(1);
  options.attempt_timeout = std::chrono::seconds(2);
  options.allow_private = allow_private;
  return options;
}

CurlSender::Options Answering(CurlSender::Options options, int port, const std::string& addresses) {
  options.resolve = {"rebind.test:" + std::to_string(port) + ":" + addresses};
  return options;
}

TEST(SsrfFaultTest, DnsRebindingToLoopbackIsRefusedAtDeliveryTime) {
  RawListener listener("127.0.0.1", 0, RawListener::Answers(200));
  ScriptedResolver resolver({{kPublic}});

  // The API's check sees the public address and passes.
  auto vetted = VetHost("rebind.test", resolver, /*allow_private=*/false);
  ASSERT_TRUE(vetted.has_value()) << vetted.error().message;
  ASSERT_EQ(vetted->size(), 1u);
  EXPECT_EQ(vetted->front().ToString(), "93.184.216.34");

  // At delivery time the name answers 127.0.0.1: refused, nothing connects.
  CurlSender sender(Answering(SenderOptions(false), listener.port(), "127.0.0.1"));
  const SendResult sent = sender.Send(Request(listener.port()));
  EXPECT_TRUE(sent.refused);
  ASSERT_TRUE(sent.error.has_value());
  EXPECT_EQ(*sent.error, "destination address not allowed");
  EXPECT_FALSE(sent.status_code.has_value());
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(listener.accepted(), 0);
}

TEST(SsrfFaultTest, EveryAddressANameAnswersIsCheckedAsItIsConnectedTo) {
  RawListener listener("127.0.0.1", 0, RawListener::Answers(200));
  CurlSender sender(Answering(SenderOptions(false), listener.port(), "127.0.0.2,[::1],127.0.0.1"));
  const SendResult sent = sender.Send(Request(listener.port()));
  EXPECT_TRUE(sent.refused) << sent.error.value_or("");
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(listener.accepted(), 0);
}

// The control: with the guard off the same sender and listener do connect, so the zero
// counts above are the guard's doing.
TEST(SsrfFaultTest, WithTheGuardOffTheSameRequestConnects) {
  RawListener listener("127.0.0.1", 0, RawListener::Answers(200));
  CurlSender sender(Answering(SenderOptions(true), listener.port(), "127.0.0.1"));
  const SendResult sent = sender.Send(Request(listener.port()));
  EXPECT_FALSE(sent.refused);
  EXPECT_EQ(sent.status_code, std::optional<int>(200)) << sent.error.value_or("");
  EXPECT_EQ(listener.accepted(), 1);
}

}  // namespace
}  // namespace webhookd::testing::ssrf_fault_test
