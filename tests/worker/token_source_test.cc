// TokenSource with an injected clock and a sender the test answers by hand: the token
// request of RFC 6749 section 4.4, one request for many askers, reuse until 60 s before
// expiry, a new one after a 401 or a change of credentials, and the errors of a failed
// request (which never quote a token).
#include "worker/token_source.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "tests/testing/fakes.h"

namespace webhookd::token_source_test {
namespace {

using namespace std::chrono_literals;

// Holds each request until the test answers it.
class HeldSender final : public AsyncSender {
 public:
  void Start(Outgoing request, Done done) override {
    requests.push_back(std::move(request));
    pending.push_back(std::move(done));
  }
  void CancelUnstarted() override {}
  void Answer(int status, const std::string& body) {
    SendResult r;
    r.status_code = status;
    r.body = body;
    auto done = std::move(pending.front());
    pending.erase(pending.begin());
    done(std::move(r));
  }
  std::vector<Outgoing> requests;
  std::vector<Done> pending;
};

const DestinationAuth kAuth{"https://auth.example.com/token", "client 1", "s3cr:et", "webhooks"};

std::string Header(const Outgoing& out, const std::string& name) {
  for (const auto& [n, v] : out.headers) {
    if (n == name) return v;
  }
  return "";
}

TEST(TokenSourceTest, TheRequestIsAClientCredentialsGrantWithBasicAuthentication) {
  const Outgoing out = TokenSource::Request(kAuth);
  EXPECT_EQ(out.url, "https://auth.example.com/token");
  EXPECT_EQ(out.body, "grant_type=client_credentials&scope=webhooks");
  EXPECT_EQ(Header(out, "Content-Type"), "application/x-www-form-urlencoded");
  // Each part form-encoded, then base64 (RFC 6749 section 2.3.1).
  EXPECT_EQ(Header(out, "Authorization"), "Basic " + Base64Encode("client+1:s3cr%3Aet"));
}

TEST(TokenSourceTest, OneRequestServesEveryoneAndTheTokenIsReusedUntilAMinuteBeforeExpiry) {
  testing::FakeClock clock;
  HeldSender sender;
  TokenSource tokens(sender, clock);
  std::vector<std::string> got;
  const auto ask = [&] {
    tokens.Get(7, kAuth, [&](TokenSource::Token t) { got.push_back(t.value.value_or("-")); });
  };
  ask();
  ask();
  ask();
  ASSERT_EQ(sender.requests.size(), 1u);  // coalesced
  sender.Answer(200, R"({"access_token":"t1","token_type":"Bearer","expires_in":300})");
  EXPECT_EQ(got, (std::vector<std::string>{"t1", "t1", "t1"}));
  clock.Advance(239s);  // 61 s left
  ask();
  EXPECT_EQ(sender.requests.size(), 1u);
  clock.Advance(1s);  // 60 s left: refreshed before it expires
  ask();
  ASSERT_EQ(sender.requests.size(), 2u);
  sender.Answer(200, R"({"access_token":"t2","expires_in":300})");
  EXPECT_EQ(got.back(), "t2");
}

TEST(TokenSourceTest, ADroppedTokenOrNewCredentialsAskAgain) {
  testing::FakeClock clock;
  HeldSender sender;
  TokenSource tokens(sender, clock);
  std::string got;
  const auto ask = [&](const DestinationAuth& auth) {
    tokens.Get(7, auth, [&](TokenSource::Token t) { got = t.value.value_or("-"); });
  };
  ask(kAuth);
  sender.Answer(200, R"({"access_token":"t1","expires_in":3600})");
  tokens.Drop(7, "t1");  // the receiver answered 401 with it
  ask(kAuth);
  ASSERT_EQ(sender.requests.size(), 2u);
  sender.Answer(200, R"({"access_token":"t2","expires_in":3600})");
  EXPECT_EQ(got, "t2");
  DestinationAuth rotated = kAuth;
  rotated.client_secret = "new";
  ask(rotated);
  EXPECT_EQ(sender.requests.size(), 3u);
  // Another destination with the same credentials has a token of its own.
  tokens.Get(8, kAuth, [](TokenSource::Token) {});
  EXPECT_EQ(sender.requests.size(), 4u);
}

TEST(TokenSourceTest, ATokenWithoutExpiresInLastsTheDefaultLifetime) {
  testing::FakeClock clock;
  HeldSender sender;
  TokenSource tokens(sender, clock);
  tokens.Get(7, kAuth, [](TokenSource::Token) {});
  sender.Answer(200, R"({"access_token":"t1","token_type":"Bearer"})");
  clock.Advance(TokenSource::kDefaultLifetime - TokenSource::kMargin - 1s);
  tokens.Get(7, kAuth, [](TokenSource::Token) {});
  EXPECT_EQ(sender.requests.size(), 1u);
  clock.Advance(1s);
  tokens.Get(7, kAuth, [](TokenSource::Token) {});
  EXPECT_EQ(sender.requests.size(), 2u);
}

TEST(TokenSourceTest, AFailedRequestIsAnErrorForEveryoneWaitingAndIsNotCached) {
  testing::FakeClock clock;
  HeldSender sender;
  TokenSource tokens(sender, clock);
  std::vector<std::string> errors;
  for (int i = 0; i < 2; ++i) {
    tokens.Get(7, kAuth, [&](TokenSource::Token t) {
      EXPECT_FALSE(t.value.has_value());
      errors.push_back(t.error);
    });
  }
  sender.Answer(503, "busy");
  EXPECT_EQ(errors,
            (std::vector<std::string>{"token request failed: 503", "token request failed: 503"}));
  tokens.Get(7, kAuth, [&](TokenSource::Token t) { errors.push_back(t.error); });
  sender.Answer(200, R"({"token_type":"Bearer"})");
  EXPECT_EQ(errors.back(), "token request failed: the answer holds no access_token");
  tokens.Get(7, kAuth, [&](TokenSource::Token t) { errors.push_back(t.error); });
  EXPECT_EQ(sender.requests.size(), 3u);
}

// expires_in was read with get<int64_t>(): a fraction was cut silently, and a number past
// int64's range, or one that overflowed when added to the clock, was undefined behaviour.
TEST(TokenSourceTest, ExpiresInIsReadSafelyWhateverTheEndpointSays) {
  using std::chrono::seconds;
  const auto lifetime = [](const std::string& json) {
    return TokenSource::LifetimeOf(nlohmann::json::parse(json));
  };
  EXPECT_EQ(lifetime("3600"), seconds(3600));
  EXPECT_EQ(lifetime("3600.9"), seconds(3600));
  EXPECT_EQ(lifetime("0"), seconds(0));
  EXPECT_EQ(lifetime("-5"), seconds(0));
  EXPECT_EQ(lifetime("-1e300"), seconds(0));
  EXPECT_EQ(lifetime("1e300"), TokenSource::kMaxLifetime);
  EXPECT_EQ(lifetime("18446744073709551615"), TokenSource::kMaxLifetime);
  EXPECT_EQ(lifetime("9223372036854775807"), TokenSource::kMaxLifetime);
  EXPECT_EQ(lifetime("-9223372036854775808"), seconds(0));
  EXPECT_EQ(lifetime(R"("3600")"), TokenSource::kDefaultLifetime);
  EXPECT_EQ(lifetime("null"), TokenSource::kDefaultLifetime);
  EXPECT_EQ(lifetime("[1]"), TokenSource::kDefaultLifetime);

  // Through a real answer: a huge expires_in is a day at most.
  testing::FakeClock clock;
  HeldSender sender;
  TokenSource tokens(sender, clock);
  tokens.Get(7, kAuth, [](TokenSource::Token) {});
  sender.Answer(200, R"({"access_token":"t1","expires_in":1e308})");
  clock.Advance(TokenSource::kMaxLifetime - TokenSource::kMargin - 1s);
  tokens.Get(7, kAuth, [](TokenSource::Token) {});
  EXPECT_EQ(sender.requests.size(), 1u);
  clock.Advance(1s);
  tokens.Get(7, kAuth, [](TokenSource::Token) {});
  EXPECT_EQ(sender.requests.size(), 2u);
}

// The cache kept an entry for every destination and every set of credentials it ever
// saw, for the life of the process.
TEST(TokenSourceTest, TheCacheStaysWithinItsBound) {
  testing::FakeClock clock;
  HeldSender sender;
  TokenSource tokens(sender, clock, /*max_entries=*/8);
  const auto fetch = [&](int64_t destination, int expires_in) {
    tokens.Get(destination, kAuth, [](TokenSource::Token) {});
    sender.Answer(200, R"({"access_token":"t)" + std::to_string(destination) +
                           R"(","expires_in":)" + std::to_string(expires_in) + "}");
  };
  for (int64_t d = 0; d < 8; ++d) fetch(d, 120);
  EXPECT_EQ(tokens.cached(), 8u);
  // Expired entries go first, and all of them.
  clock.Advance(61s);
  fetch(100, 3600);
  EXPECT_EQ(tokens.cached(), 1u);

  // Past the bound with every token live: the ones that run out soonest go.
  for (int64_t d = 0; d < 7; ++d) fetch(d, 600 + static_cast<int>(d));
  EXPECT_EQ(tokens.cached(), 8u);
  for (int64_t d = 200; d < 300; ++d) fetch(d, 7200);
  EXPECT_LE(tokens.cached(), 8u);
  // The longest-lived survive.
  const size_t asked = sender.requests.size();
  tokens.Get(299, kAuth, [](TokenSource::Token) {});
  EXPECT_EQ(sender.requests.size(), asked);
  tokens.Get(0, kAuth, [](TokenSource::Token) {});
  EXPECT_EQ(sender.requests.size(), asked + 1);

  // One being fetched is never dropped: its answer reaches whoever waits.
  TokenSource small(sender, clock, /*max_entries=*/1);
  std::string got;
  small.Get(1, kAuth, [&](TokenSource::Token t) { got = t.value.value_or("-"); });
  small.Get(2, kAuth, [](TokenSource::Token) {});
  sender.Answer(200, R"({"access_token":"pending","expires_in":600})");  // answer to 0 above
  sender.Answer(200, R"({"access_token":"one","expires_in":600})");
  EXPECT_EQ(got, "one");
}

}  // namespace
}  // namespace webhookd::token_source_test
