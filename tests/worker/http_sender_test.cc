// HttpSender against a real HTTP server on loopback: what it reports for each kind of
// answer, over one reused keep-alive connection.
#include "worker/http_sender.h"

#include <gtest/gtest.h>

#include "tests/testing/receiver.h"

namespace webhookd {
namespace {

using testing::Answer;
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

Outgoing Post(const Receiver& receiver) {
  return Outgoing{receiver.url(), {{"Content-Type", "application/json"}}, R"({"a":1})"};
}

// 204 No Content is a success many receivers answer with; it has no body, and must still
// come back as a status, not as a send that got no answer.
TEST(HttpSenderTest, EveryStatusComesBackWithOrWithoutABody) {
  const std::vector<int> statuses = {200, 204, 202, 204, 401, 204, 500, 201};
  Receiver receiver([&](const Received&, int nth) {
    Answer answer;
    answer.status = statuses.at(static_cast<size_t>(nth));
    if (answer.status != 204) answer.body = "status " + std::to_string(answer.status);
    return answer;
  });
  NoResolver resolver;
  HttpSender sender(resolver, HttpSender::Options{.allow_private = true});
  for (int status : statuses) {
    const SendResult r = sender.Send(Post(receiver));
    EXPECT_EQ(r.status_code, std::optional<int>(status)) << status;
    EXPECT_FALSE(r.error.has_value()) << status << ": " << r.error.value_or("");
    EXPECT_FALSE(r.refused);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.body, status == 204 ? "" : "status " + std::to_string(status));
  }
  EXPECT_EQ(receiver.count(), statuses.size());
}

TEST(HttpSenderTest, RetryAfterComesBackWithAnyStatus) {
  Receiver receiver([](const Received&, int nth) {
    Answer answer;
    answer.status = nth == 0 ? 503 : 204;
    answer.headers.emplace("Retry-After", nth == 0 ? "120" : "7");
    return answer;
  });
  NoResolver resolver;
  HttpSender sender(resolver, HttpSender::Options{.allow_private = true});
  EXPECT_EQ(sender.Send(Post(receiver)).retry_after, std::optional<std::string>("120"));
  EXPECT_EQ(sender.Send(Post(receiver)).retry_after, std::optional<std::string>("7"));
}

}  // namespace
}  // namespace webhookd
