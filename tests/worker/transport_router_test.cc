// The router sends each message by its url's scheme (worker/transport_router.h).
#include "worker/transport_router.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace webhookd::transport_router_test {
namespace {

// Answers at once, on the caller's thread (enough here), and remembers what it got.
class Recording final : public AsyncSender {
 public:
  void Start(Outgoing request, Done done) override {
    urls.push_back(request.url);
    done(SendResult{});
  }
  void CancelUnstarted() override { ++cancels; }
  std::vector<std::string> urls;
  int cancels = 0;
};

Outgoing To(std::string url) {
  Outgoing out;
  out.url = std::move(url);
  return out;
}

TEST(TransportRouterTest, EachMessageGoesToItsSchemesTransportAndTheRestToHttp) {
  Recording http, redis;
  TransportRouter router(http);
  router.Add(Transport::kRedis, redis);
  for (const char* url : {"https://a.example/hook", "redis://cache.example/0",
                          "REDISS://cache.example", "amqp://rabbit.example", "no-scheme"}) {
    router.Start(To(url), [](SendResult) {});
  }
  EXPECT_EQ(redis.urls,
            (std::vector<std::string>{"redis://cache.example/0", "REDISS://cache.example"}));
  // amqp has no transport here: HTTP's sender answers it with its own error.
  EXPECT_EQ(http.urls, (std::vector<std::string>{"https://a.example/hook", "amqp://rabbit.example",
                                                 "no-scheme"}));
  router.CancelUnstarted();
  EXPECT_EQ(http.cancels, 1);
  EXPECT_EQ(redis.cancels, 1);
}

}  // namespace
}  // namespace webhookd::transport_router_test
