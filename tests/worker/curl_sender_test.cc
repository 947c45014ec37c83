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

namespace webhookd {
namespace {

using namespace std::chrono_literals;
using testing::Answer;
using testing::RawConnection;
using testing::RawListener;
using testing::Received;
using testing::Receiver;

// The target is an address literal: nothing may be looked up.
class NoResolver final : public Resolver {
 public:
  Result<std::vector<IpAddress>> Resolve(const std::string& host) override {
    ADD_FAILURE() << "looked up " << host;
    return Fail(ErrorKind::kInvalid, "no DNS here");
  }
};

// Answers every name with the same addresses.
class FixedResolver final : public Resolver {
 public:
  explicit FixedResolver(std::vector<IpAddress> addresses) : addresses_(std::move(addresses)) {}
  Result<std::vector<IpAddress>> Resolve(const std::string&) override {
    ++calls;
    return addresses_;
  }
  std::atomic<int> calls{0};

 private:
  std::vector<IpAddress> addresses_;
};

const IpAddress kLoopback = IpAddress::V4(0x7F000001);

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
  NoResolver resolver;
  CurlSender sender(resolver, Private());
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
  NoResolver resolver;
  CurlSender sender(resolver, Private());
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
  NoResolver resolver;
  CurlSender sender(resolver, Private());
  EXPECT_EQ(sender.Send(Post(receiver.url())).retry_after, std::optional<std::string>("120"));
  EXPECT_EQ(sender.Send(Post(receiver.url())).retry_after, std::optional<std::string>("7"));
}

TEST(CurlSenderTest, OneKeptAliveConnectionCarriesSequentialSends) {
  RawListener listener("127.0.0.1", 0, RawListener::Answers(200));
  NoResolver resolver;
  CurlSender sender(resolver, Private());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sender.Send(Post(listener.url())).status_code, std::optional<int>(200));
  }
  EXPECT_EQ(listener.requests(), 5);
  EXPECT_EQ(listener.accepted(), 1);
}

TEST(CurlSenderTest, AnAttemptThatNeverGetsAnAnswerTimesOut) {
  RawListener listener("127.0.0.1", 0, RawListener::NeverAnswers());
  NoResolver resolver;
  CurlSender::Options o = Private();
  o.attempt_timeout = 300ms;
  CurlSender sender(resolver, o);
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
  NoResolver resolver;
  CurlSender::Options o = Private();
  o.attempt_timeout = 500ms;
  CurlSender sender(resolver, o);
  const SendResult r = sender.Send(Post(listener.url()));
  EXPECT_TRUE(r.timed_out) << r.error.value_or("");
}

TEST(CurlSenderTest, AHugeAnswerIsReadNoFurtherThanTheLimit) {
  RawListener listener("127.0.0.1", 0, RawListener::HugeBody(64 * 1024 * 1024));
  NoResolver resolver;
  CurlSender::Options o = Private();
  o.max_response_read = 100 * 1024;
  CurlSender sender(resolver, o);
  const SendResult r = sender.Send(Post(listener.url()));
  EXPECT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  EXPECT_EQ(r.body.size(), 4096u);
  // The connection is dropped, not drained: the next send opens a new one.
  EXPECT_EQ(sender.Send(Post(listener.url())).status_code, std::optional<int>(200));
  EXPECT_EQ(listener.accepted(), 2);
}

TEST(CurlSenderTest, AConnectionClosedMidAnswerIsAnErrorWithoutAStatus) {
  RawListener listener("127.0.0.1", 0, RawListener::ClosesMidResponse());
  NoResolver resolver;
  CurlSender sender(resolver, Private());
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
  NoResolver resolver;
  CurlSender sender(resolver, Private());
  const SendResult r = sender.Send(Post("http://127.0.0.1:" + std::to_string(port) + "/hook"));
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_TRUE(r.error.has_value());
  EXPECT_FALSE(r.refused);
  EXPECT_FALSE(r.timed_out);
}

TEST(CurlSenderTest, ANameIsResolvedVettedAndItsAddressConnectedTo) {
  Receiver receiver;
  FixedResolver resolver({kLoopback});
  CurlSender sender(resolver, Private());
  const SendResult r =
      sender.Send(Post("http://hooks.example.test:" + std::to_string(receiver.port()) + "/h"));
  EXPECT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  EXPECT_EQ(resolver.calls, 1);
  ASSERT_EQ(receiver.count(), 1u);
  // The Host header still names the destination, not the address.
  EXPECT_EQ(receiver.requests()[0].header("Host"),
            "hooks.example.test:" + std::to_string(receiver.port()));
}

TEST(CurlSenderTest, PrivateAddressesAreRefusedUnlessAllowed) {
  RawListener listener("127.0.0.1", 0, RawListener::Answers(200));
  NoResolver no_dns;
  CurlSender::Options o = Private();
  o.allow_private = false;
  CurlSender guarded(no_dns, o);
  SendResult r = guarded.Send(Post(listener.url()));
  EXPECT_TRUE(r.refused);
  EXPECT_FALSE(r.status_code.has_value());

  FixedResolver resolver({kLoopback});
  CurlSender named(resolver, o);
  r = named.Send(Post("http://hooks.example.test:" + std::to_string(listener.port()) + "/h"));
  EXPECT_TRUE(r.refused);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(listener.accepted(), 0);
}

TEST(CurlSenderTest, AnInvalidUrlIsRefusedWithoutTheNetwork) {
  NoResolver resolver;
  CurlSender sender(resolver, Private());
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
  NoResolver resolver;
  CurlSender sender(resolver, Private());
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
  // A resolver that holds every lookup until told: those sends have not reached the
  // network when they are cancelled.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  class HeldResolver final : public Resolver {
   public:
    explicit HeldResolver(std::shared_future<void> f) : f_(std::move(f)) {}
    Result<std::vector<IpAddress>> Resolve(const std::string&) override {
      f_.wait();
      return std::vector<IpAddress>{kLoopback};
    }

   private:
    std::shared_future<void> f_;
  } resolver(released);
  Receiver receiver;
  CurlSender::Options o = Private();
  o.resolvers = 1;
  CurlSender sender(resolver, o);
  std::vector<std::future<SendResult>> results;
  for (int i = 0; i < 3; ++i) {
    auto p = std::make_shared<std::promise<SendResult>>();
    results.push_back(p->get_future());
    sender.Start(Post("http://held.example.test:" + std::to_string(receiver.port()) + "/h"),
                 [p](SendResult r) { p->set_value(std::move(r)); });
  }
  std::this_thread::sleep_for(100ms);  // the first is now inside Resolve
  sender.CancelUnstarted();
  release.set_value();
  int not_started = 0;
  for (auto& f : results) not_started += f.get().not_started ? 1 : 0;
  // The one already resolving may go either way; the two behind it never started.
  EXPECT_GE(not_started, 2);
  EXPECT_EQ(receiver.count(), static_cast<size_t>(3 - not_started));
}

}  // namespace
}  // namespace webhookd
