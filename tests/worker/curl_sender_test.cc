// CurlSender against real servers on loopback: what it reports for each kind of answer
// and misbehaviour, that it keeps connections alive, that it connects to the vetted
// address alone, and that sends it has not started can be handed back.
#include "worker/curl_sender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include "tests/testing/raw_listener.h"
#include "tests/testing/receiver.h"

namespace webhookd::curl_sender_test {
namespace {

using namespace std::chrono_literals;
using testing::Answer;
using testing::RawConnection;
using testing::RawListener;
using testing::Received;
using testing::Receiver;

Outgoing Post(const std::string& url) {
  return Outgoing{
      url, {{"Content-Type", "application/json"}, {"webhook-id", "evt_1"}}, R"({"a":1})"};
}

CurlSender::Options Private() {
  CurlSender::Options o;
  o.allow_private = true;
  o.connect_timeout = 1s;
  o.attempt_timeout = 2s;
  return o;
}

TEST(CurlSenderTest, EveryStatusComesBackWithOrWithoutABody) {
  const std::vector<int> statuses = {200, 204, 202, 204, 401, 204, 500, 201};
  Receiver receiver([&](const Received&, int nth) {
    Answer answer;
    answer.status = statuses.at(static_cast<size_t>(nth));
    if (answer.status != 204) answer.body = "status " + std::to_string(answer.status);
    return answer;
  });
  CurlSender sender(Private());
  for (int status : statuses) {
    const SendResult r = sender.Send(Post(receiver.url()));
    EXPECT_EQ(r.status_code, std::optional<int>(status)) << status;
    EXPECT_FALSE(r.error.has_value()) << status << ": " << r.error.value_or("");
    EXPECT_FALSE(r.refused);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.body, status == 204 ? "" : "status " + std::to_string(status));
  }
  EXPECT_EQ(receiver.count(), statuses.size());
}

TEST(CurlSenderTest, TheRequestIsTheHeadersAndBodyGivenAndNoMore) {
  std::mutex mu;
  std::string request;
  RawListener listener("127.0.0.1", 0, [&](RawConnection& c) {
    std::string got;
    if (!c.ReadRequest(&got)) return;
    {
      std::lock_guard lock(mu);
      request = got;
    }
    c.Write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  });
  CurlSender sender(Private());
  Outgoing out = Post(listener.url("/in?x=1"));
  out.body = std::string(5000, 'q');  // over 1 KiB: no Expect: 100-continue round trip
  out.headers.push_back({"X-Empty", ""});
  ASSERT_EQ(sender.Send(out).status_code, std::optional<int>(200));
  std::lock_guard lock(mu);
  const size_t end = request.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos) << request;
  const std::string head = request.substr(0, end + 2);
  EXPECT_EQ(request.substr(end + 4), out.body);
  EXPECT_EQ(head.rfind("POST /in?x=1 HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("\r\nwebhook-id: evt_1\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nContent-Type: application/json\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nX-Empty:\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nContent-Length: 5000\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.find("Expect"), std::string::npos) << head;
  EXPECT_EQ(head.find("Accept"), std::string::npos) << head;
}

TEST(CurlSenderTest, RetryAfterComesBackWithAnyStatus) {
  Receiver receiver([](const Received&, int nth) {
    Answer answer;
    answer.status = nth == 0 ? 503 : 204;
    answer.headers.emplace("Retry-After", nth == 0 ? "120" : "7");
    return answer;
  });
  CurlSender sender(Private());
  EXPECT_EQ(sender.Send(Post(receiver.url())).retry_after, std::optional<std::string>("120"));
  EXPECT_EQ(sender.Send(Post(receiver.url())).retry_after, std::optional<std::string>("7"));
}

TEST(CurlSenderTest, OneKeptAliveConnectionCarriesSequentialSends) {
  RawListener listener("127.0.0.1", 0, RawListener::Answers(200));
  CurlSender sender(Private());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sender.Send(Post(listener.url())).status_code, std::optional<int>(200));
  }
  EXPECT_EQ(listener.requests(), 5);
  EXPECT_EQ(listener.accepted(), 1);
}

TEST(CurlSenderTest, AnAttemptThatNeverGetsAnAnswerTimesOut) {
  RawListener listener("127.0.0.1", 0, RawListener::NeverAnswers());
  CurlSender::Options o = Private();
  o.attempt_timeout = 300ms;
  CurlSender sender(o);
  const auto start = std::chrono::steady_clock::now();
  const SendResult r = sender.Send(Post(listener.url()));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_EQ(r.error, std::optional<std::string>("timed out after 300 ms"));
  EXPECT_GE(took, 300ms);
}

TEST(CurlSenderTest, ATricklingAnswerIsCutOffAtTheAttemptTimeout) {
  RawListener listener("127.0.0.1", 0, RawListener::Trickles(100ms));
  CurlSender::Options o = Private();
  o.attempt_timeout = 500ms;
  CurlSender sender(o);
  const SendResult r = sender.Send(Post(listener.url()));
  EXPECT_TRUE(r.timed_out) << r.error.value_or("");
}

TEST(CurlSenderTest, AHugeAnswerIsReadNoFurtherThanTheLimit) {
  RawListener listener("127.0.0.1", 0, RawListener::HugeBody(64 * 1024 * 1024));
  CurlSender::Options o = Private();
  o.max_response_read = 100 * 1024;
  CurlSender sender(o);
  const SendResult r = sender.Send(Post(listener.url()));
  EXPECT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  EXPECT_EQ(r.body.size(), 4096u);
  // The connection is dropped, not drained: the next send opens a new one.
  EXPECT_EQ(sender.Send(Post(listener.url())).status_code, std::optional<int>(200));
  EXPECT_EQ(listener.accepted(), 2);
}

TEST(CurlSenderTest, AConnectionClosedMidAnswerIsAnErrorWithoutAStatus) {
  RawListener listener("127.0.0.1", 0, RawListener::ClosesMidResponse());
  CurlSender sender(Private());
  const SendResult r = sender.Send(Post(listener.url()));
  EXPECT_FALSE(r.status_code.has_value());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->rfind("HTTP ", 0), 0u) << *r.error;
  EXPECT_FALSE(r.refused);
}

TEST(CurlSenderTest, NothingListeningIsAConnectionError) {
  int port;
  {
    RawListener gone("127.0.0.1", 0, RawListener::Answers(200));
    port = gone.port();
  }
  CurlSender sender(Private());
  const SendResult r = sender.Send(Post("http://127.0.0.1:" + std::to_string(port) + "/hook"));
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_TRUE(r.error.has_value());
  EXPECT_FALSE(r.refused);
  EXPECT_FALSE(r.timed_out);
}

// "HOST:PORT:ADDRESS" answered instead of DNS (curl's own resolver, scripted).
std::string Answering(const std::string& host, int port, const std::string& addresses) {
  return host + ":" + std::to_string(port) + ":" + addresses;
}

TEST(CurlSenderTest, ANameIsResolvedAndItsAddressConnectedTo) {
  Receiver receiver;
  CurlSender::Options o = Private();
  o.resolve = {Answering("hooks.example.test", receiver.port(), "127.0.0.1")};
  CurlSender sender(o);
  const SendResult r =
      sender.Send(Post("http://hooks.example.test:" + std::to_string(receiver.port()) + "/h"));
  EXPECT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  ASSERT_EQ(receiver.count(), 1u);
  // The Host header still names the destination, not the address.
  EXPECT_EQ(receiver.requests()[0].header("Host"),
            "hooks.example.test:" + std::to_string(receiver.port()));
}

TEST(CurlSenderTest, PrivateAddressesAreRefusedUnlessAllowed) {
  RawListener listener("127.0.0.1", 0, RawListener::Answers(200));
  CurlSender::Options o = Private();
  o.allow_private = false;
  o.resolve = {Answering("hooks.example.test", listener.port(), "127.0.0.2,127.0.0.1")};
  CurlSender guarded(o);
  SendResult r = guarded.Send(Post(listener.url()));
  EXPECT_TRUE(r.refused);
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_EQ(r.error, "destination address not allowed");

  // A name: every address it answers is checked as curl connects to it.
  r = guarded.Send(Post("http://hooks.example.test:" + std::to_string(listener.port()) + "/h"));
  EXPECT_TRUE(r.refused);
  EXPECT_EQ(r.error, "destination address not allowed");
  // And names refused before any lookup.
  for (const char* host : {"localhost", "api.localhost", "LOCALHOST."}) {
    r = guarded.Send(
        Post("http://" + std::string(host) + ":" + std::to_string(listener.port()) + "/h"));
    EXPECT_TRUE(r.refused) << host;
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(listener.accepted(), 0);
}

TEST(CurlSenderTest, ANameThatDoesNotResolveIsADnsError) {
  CurlSender sender(Private());
  const SendResult r = sender.Send(Post("http://no-such-host.invalid/h"));
  EXPECT_FALSE(r.refused);
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_EQ(r.error, "DNS: no address for no-such-host.invalid");
}

// Without private destinations, an attempt's error for a name that does not resolve read
// "DNS: no address for <host>" beside "destination address not allowed" for one that
// resolves privately: which internal names exist, for anyone reading attempts.
TEST(CurlSenderTest, WithoutPrivateAddressesANameThatDoesNotResolveReadsAsRefused) {
  CurlSender::Options o = Private();
  o.allow_private = false;
  CurlSender guarded(o);
  const SendResult r = guarded.Send(Post("http://no-such-host.invalid/h"));
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_EQ(r.error, "destination address not allowed");
  // Still worth another try: a name may resolve again.
  EXPECT_FALSE(r.refused);
}

TEST(CurlSenderTest, AnInvalidUrlIsRefusedWithoutTheNetwork) {
  CurlSender sender(Private());
  const SendResult r = sender.Send(Post("ftp://127.0.0.1/x"));
  EXPECT_TRUE(r.refused);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->find("invalid destination URL"), std::string::npos) << *r.error;
}

TEST(CurlSenderTest, ManySendsRunAtOnceOnOneThread) {
  // Every answer waits 300 ms: 24 sends one after another would take 7.2 s. (The
  // receiver has 32 threads, each held by one kept-alive connection.)
  Receiver receiver([](const Received&, int) {
    Answer a;
    a.delay = 300ms;
    return a;
  });
  CurlSender sender(Private());
  std::vector<std::future<SendResult>> results;
  std::vector<std::shared_ptr<std::promise<SendResult>>> promises;
  for (int i = 0; i < 24; ++i) {
    auto p = std::make_shared<std::promise<SendResult>>();
    results.push_back(p->get_future());
    sender.Start(Post(receiver.url()), [p](SendResult r) { p->set_value(std::move(r)); });
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto& f : results) EXPECT_EQ(f.get().status_code, std::optional<int>(200));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  EXPECT_EQ(receiver.count(), 24u);
}

TEST(CurlSenderTest, UnstartedSendsComeBackNotStarted) {
  // The first send's `done` holds the transfer thread: the sends behind it have not
  // reached the network when they are cancelled.
  Receiver receiver;
  CurlSender sender(Private());
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> holding;
  sender.Start(Post(receiver.url()), [&](SendResult) {
    holding.set_value();
    released.wait();
  });
  holding.get_future().wait();
  std::vector<std::future<SendResult>> results;
  for (int i = 0; i < 3; ++i) {
    auto p = std::make_shared<std::promise<SendResult>>();
    results.push_back(p->get_future());
    sender.Start(Post(receiver.url()), [p](SendResult r) { p->set_value(std::move(r)); });
  }
  sender.CancelUnstarted();
  release.set_value();
  for (auto& f : results) EXPECT_TRUE(f.get().not_started);
  EXPECT_EQ(receiver.count(), 1u);
}

}  // namespace
}  // namespace webhookd::curl_sender_test
