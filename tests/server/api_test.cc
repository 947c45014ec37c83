// The API's validation and error mapping, against a scripted store: bad input never
// reaches the store, and each store error becomes the contract's status.
#include "server/api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/problem.h"
#include "tests/testing/stub_stores.h"

namespace webhookd::api_test {
namespace {

using testing::StubApiStores;

class FixedResolver final : public Resolver {
 public:
  std::vector<IpAddress> answer;
  Result<std::vector<IpAddress>> Resolve(const std::string&) override { return answer; }
};

// Holds every lookup of a name under "slow." until released (or 30 s); answers others at
// once.
class HeldResolver final : public Resolver {
 public:
  Result<std::vector<IpAddress>> Resolve(const std::string& host) override {
    if (host.starts_with("slow.")) {
      std::unique_lock lock(mu_);
      ++held_;
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::seconds(30), [&] { return released_; });
    }
    return std::vector<IpAddress>{IpAddress::V4(0x5DB8D822)};
  }
  bool WaitHeld(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return held_ >= n; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int held_ = 0;
  bool released_ = false;
};

class ApiTest : public ::testing::Test {
 protected:
  ApiTest() : api_(store_.stores(), resolver_, ApiOptions{}) {
    resolver_.answer = {IpAddress::V4(0x5DB8D822)};  // 93.184.216.34, public
  }
  static ApiRequest Body(std::string body) {
    ApiRequest req(Scope::All());
    req.body = std::move(body);
    return req;
  }
  static nlohmann::json Problem(const Error& e) {
    return nlohmann::json::parse(ProblemReply(e).body);
  }

  StubApiStores store_;
  FixedResolver resolver_;
  Api api_;
};

TEST_F(ApiTest, MalformedJsonIs400AndNeverReachesTheStore) {
  auto r = api_.CreateEvent(Body(R"({"type": "a.b", "payload": {)"));
  ASSERT_FALSE(r);
  EXPECT_EQ(StatusFor(r.error().kind), 400);
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, EachBadEventFieldIsNamed) {
  auto r = api_.CreateEvent(Body(R"({"type": "has space", "payload": [1], "destination_id": 7})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(StatusFor(r.error().kind), 422);
  std::vector<std::string> fields;
  for (const auto& f : r.error().fields) fields.push_back(f.field);
  EXPECT_THAT(fields, ::testing::UnorderedElementsAre("type", "payload", "destination_id"));
  EXPECT_EQ(Problem(r.error())["errors"].size(), 3u);
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, ReservedEventTypesAre422OnTypeAndNeverReachTheStore) {
  for (const char* type : {"webhookd.delivery.dead_lettered", "webhookd.anything", "webhookd."}) {
    auto r = api_.CreateEvent(Body(R"({"type": ")" + std::string(type) + R"(", "payload": {}})"));
    ASSERT_FALSE(r) << type;
    EXPECT_EQ(StatusFor(r.error().kind), 422) << type;
    ASSERT_EQ(r.error().fields.size(), 1u) << type;
    EXPECT_EQ(r.error().fields[0].field, "type") << type;
  }
  EXPECT_EQ(store_.calls, 0);
  // Only the "webhookd." prefix is reserved.
  store_.on_insert_event = [](const NewEvent& e, const std::optional<IdempotencyKey>&) {
    IngestReceipt receipt;
    receipt.event = Event{1, e.type, e.payload, Timestamp(std::chrono::seconds(1)), {}};
    return receipt;
  };
  for (const char* type : {"webhookd", "webhookdx.a", "my.webhookd.a"}) {
    auto r = api_.CreateEvent(Body(R"({"type": ")" + std::string(type) + R"(", "payload": {}})"));
    EXPECT_TRUE(r) << type << ": " << r.error().message;
  }
}

TEST_F(ApiTest, AnUnknownMemberIs422AndNothingIsWritten) {
  // "event_type" and "filtr" used to be ignored: the destination took every event.
  auto created = api_.CreateDestination(Body(
      R"({"url": "https://example.com/h", "event_type": ["order.created"], "filtr": "$.a == 1"})"));
  ASSERT_FALSE(created);
  ASSERT_EQ(StatusFor(created.error().kind), 422);
  const nlohmann::json problem = Problem(created.error());
  ASSERT_EQ(problem["errors"].size(), 2u) << problem;
  EXPECT_EQ(problem["errors"][0]["field"], "event_type");
  EXPECT_EQ(problem["errors"][0]["message"], "unknown member; did you mean event_types?");
  EXPECT_EQ(problem["errors"][1]["field"], "filtr");

  ApiRequest patch = Body(R"({"enabled": false, "enabeld": true})");
  patch.path_args = {"dst_1"};
  auto patched = api_.UpdateDestination(patch);
  ASSERT_FALSE(patched);
  EXPECT_EQ(StatusFor(patched.error().kind), 422);

  auto event = api_.CreateEvent(Body(R"({"type": "a.b", "payload": {}, "tennant_id": "x"})"));
  ASSERT_FALSE(event);
  EXPECT_EQ(StatusFor(event.error().kind), 422);

  ApiRequest dismiss = Body(R"({"reason": "x"})");
  dismiss.path_args = {"dlq_1"};
  EXPECT_EQ(StatusFor(api_.DismissDeadLetter(dismiss).error().kind), 422);
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, AReplayOfEveryDeadLetterNeedsAllTrue) {
  for (const char* body : {"", "{}", R"({"all": false})"}) {
    auto r = api_.ReplayDeadLetters(Body(body));
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(StatusFor(r.error().kind), 422) << body;
    EXPECT_EQ(r.error().fields.at(0).field, "all") << body;
  }
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, DeepNestingIsRefusedBeforeParsing) {
  std::string deep =
      R"({"type": "a", "payload": {"x": )" + std::string(5000, '[') + std::string(5000, ']') + "}}";
  auto r = api_.CreateEvent(Body(deep));
  ASSERT_FALSE(r);
  EXPECT_EQ(StatusFor(r.error().kind), 422);
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, AnOverlongIdempotencyKeyIs422) {
  ApiRequest req = Body(R"({"type": "a", "payload": {}})");
  req.idempotency_key = std::string(256, 'k');
  auto r = api_.CreateEvent(req);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().fields.at(0).field, "Idempotency-Key");
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, AnIdempotentReplayCarriesTheHeaderAndTheSameBody) {
  store_.on_insert_event = [](const NewEvent& e, const std::optional<IdempotencyKey>& key) {
    EXPECT_TRUE(key.has_value());
    EXPECT_EQ(key->request_hash.size(), 64u);  // hex SHA-256 of the body
    IngestReceipt receipt;
    receipt.event =
        Event{42, e.type, e.payload, Timestamp(std::chrono::seconds(1'700'000'000)), {}};
    receipt.replayed = true;
    return receipt;
  };
  ApiRequest req = Body(R"({"type": "order.created", "payload": {"id": 1}})");
  req.idempotency_key = "k-1";
  auto r = api_.CreateEvent(req);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_THAT(r->headers, ::testing::Contains(
                              std::pair<std::string, std::string>("Idempotent-Replayed", "true")));
  EXPECT_EQ(nlohmann::json::parse(r->body)["id"], "evt_42");
}

TEST_F(ApiTest, StoreErrorsMapToTheContractsStatuses) {
  for (auto [kind, status] : std::vector<std::pair<ErrorKind, int>>{{ErrorKind::kUnavailable, 503},
                                                                    {ErrorKind::kConflict, 409},
                                                                    {ErrorKind::kInvalid, 422}}) {
    store_.on_insert_event = [kind](const NewEvent&,
                                    const std::optional<IdempotencyKey>&) -> Result<IngestReceipt> {
      return Fail(kind, "scripted");
    };
    auto r = api_.CreateEvent(Body(R"({"type": "a", "payload": {}})"));
    ASSERT_FALSE(r);
    EXPECT_EQ(StatusFor(r.error().kind), status);
  }
}

TEST_F(ApiTest, AnInternalErrorNeverLeaksItsDetail) {
  const Reply reply = ProblemReply(Error{ErrorKind::kInternal, "password=hunter2 in SQL", {}});
  EXPECT_EQ(reply.status, 500);
  EXPECT_EQ(reply.body.find("hunter2"), std::string::npos);
  EXPECT_EQ(reply.content_type, "application/problem+json");
}

TEST_F(ApiTest, APrivateDestinationIsRefusedUnlessAllowed) {
  resolver_.answer = {IpAddress::V4(0x0A000001)};  // 10.0.0.1
  auto r = api_.CreateDestination(Body(R"({"url": "https://internal.example/hook"})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(StatusFor(r.error().kind), 422);
  EXPECT_EQ(r.error().fields.at(0).field, "url");
  EXPECT_EQ(store_.calls, 0);

  ApiOptions allow;
  allow.allow_private_destinations = true;
  Api allowing(store_.stores(), resolver_, allow);
  store_.on_create_destination = [](const Destination& d) { return d; };
  EXPECT_TRUE(allowing.CreateDestination(Body(R"({"url": "https://internal.example/hook"})")));
}

// With private destinations allowed (a local try), a name that does not resolve is
// kept, but the answer says why its deliveries will fail; one that resolves, or a
// literal, says nothing more. Without that setting, such a name is refused (above).
TEST_F(ApiTest, ANameThatDoesNotResolveIsKeptWithAWarning) {
  ApiOptions allow;
  allow.allow_private_destinations = true;
  Api allowing(store_.stores(), resolver_, allow);
  store_.on_create_destination = [](const Destination& d) { return d; };
  store_.on_update_destination = [](int64_t id, const DestinationFields& f) {
    Destination d;
    d.id = id;
    d.url = f.url.value_or("http://127.0.0.1/");
    return d;
  };
  resolver_.answer = {};
  auto created = allowing.CreateDestination(Body(R"({"url": "https://acme.example.com/hooks"})"));
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201);
  const auto warnings = nlohmann::json::parse(created->body)["warnings"];
  ASSERT_EQ(warnings.size(), 1u) << created->body;
  EXPECT_EQ(warnings[0]["field"], "url");
  EXPECT_EQ(warnings[0]["message"],
            "acme.example.com does not resolve now: deliveries fail until it does");

  ApiRequest patch = Body(R"({"url": "https://acme.example.com/other"})");
  patch.path_args = {"dst_1"};
  auto updated = allowing.UpdateDestination(patch);
  ASSERT_TRUE(updated) << updated.error().message;
  EXPECT_EQ(nlohmann::json::parse(updated->body)["warnings"].size(), 1u);

  for (const char* url : {"http://127.0.0.1:9999/hook", "https://resolves.example/hook"}) {
    resolver_.answer = {IpAddress::V4(0x7F000001)};
    auto r = allowing.CreateDestination(Body(std::string(R"({"url": ")") + url + "\"}"));
    ASSERT_TRUE(r) << url;
    EXPECT_FALSE(nlohmann::json::parse(r->body).contains("warnings")) << url;
  }
}

TEST_F(ApiTest, OneTenantCannotTakeEveryNameLookup) {
  HeldResolver resolver;
  ApiOptions options;
  options.lookups_per_tenant = 2;
  Api api(store_.stores(), resolver, options);
  store_.on_create_destination = [](const Destination& d) { return d; };
  const auto create = [&](const std::string& tenant, const std::string& host) {
    ApiRequest req(Scope::Tenant(tenant));
    req.body = R"({"url": "https://)" + host + R"(/hook"})";
    return api.CreateDestination(req);
  };
  // Tenant a's two lookups hang on a name that does not answer.
  std::vector<std::thread> hung;
  for (int i = 0; i < 2; ++i) {
    hung.emplace_back([&] { EXPECT_TRUE(create("a", "slow.example")); });
  }
  if (resolver.WaitHeld(2)) {
    // A third from a is told to retry: 503, which ProblemReply gives a Retry-After.
    auto refused = create("a", "fast.example");
    EXPECT_FALSE(refused);
    if (!refused) {
      EXPECT_EQ(StatusFor(refused.error().kind), 503);
      EXPECT_THAT(ProblemReply(refused.error()).headers,
                  ::testing::Contains(::testing::Key("Retry-After")));
    }
    // A literal address needs no lookup, and tenant b has its own share.
    EXPECT_TRUE(create("a", "93.184.216.34"));
    EXPECT_TRUE(create("b", "fast.example"));
  } else {
    ADD_FAILURE() << "the two lookups were never held";
  }
  resolver.Release();  // the threads end whatever happened above
  for (auto& t : hung) t.join();
  EXPECT_TRUE(create("a", "fast.example"));  // the share came back
}

TEST_F(ApiTest, AResolverOutOfSlotsIs503NotAnInvalidUrl) {
  class FullResolver final : public Resolver {
   public:
    Result<std::vector<IpAddress>> Resolve(const std::string&) override {
      return Fail(ErrorKind::kUnavailable, "too many name lookups in progress; retry shortly");
    }
  } full;
  Api api(store_.stores(), full, ApiOptions{});
  auto r = api.CreateDestination(Body(R"({"url": "https://example.com/hook"})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(StatusFor(r.error().kind), 503);
  EXPECT_THAT(ProblemReply(r.error()).headers, ::testing::Contains(::testing::Key("Retry-After")));
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, AGeneratedSecretIsWhsecAndThirtyTwoBytes) {
  store_.on_create_destination = [](const Destination& d) { return d; };
  auto r = api_.CreateDestination(Body(R"({"url": "https://example.com/hook"})"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  const std::string secret = nlohmann::json::parse(r->body)["secret"];
  ASSERT_TRUE(secret.starts_with("whsec_"));
  EXPECT_EQ(secret.size(), 6u + 44u);  // base64 of 32 bytes
}

TEST_F(ApiTest, ReservedAndIllegalHeadersAreRefused) {
  for (const char* headers :
       {R"({"webhook-id": "x"})", R"({"Content-Type": "x"})", R"({"Host": "x"})",
        R"({"bad name": "x"})", R"({"X-Ok": "a\nb"})", R"({"X-Ok": 5})"}) {
    auto r = api_.CreateDestination(
        Body(std::string(R"({"url": "https://example.com/", "headers": )") + headers + "}"));
    ASSERT_FALSE(r) << headers;
    EXPECT_EQ(StatusFor(r.error().kind), 422) << headers;
  }
  EXPECT_EQ(store_.calls, 0);
}

TEST_F(ApiTest, BadListParametersAre422) {
  for (const char* limit : {"0", "1001", "abc", "-5", "10x"}) {
    ApiRequest req(Scope::All());
    req.query.emplace("limit", limit);
    auto r = api_.ListEvents(req);
    ASSERT_FALSE(r) << limit;
    EXPECT_EQ(StatusFor(r.error().kind), 422) << limit;
  }
  ApiRequest req(Scope::All());
  req.query.emplace("cursor", "dst_5");  // a cursor of another list
  EXPECT_FALSE(api_.ListEvents(req));
  EXPECT_EQ(store_.calls, 0);
}

}  // namespace
}  // namespace webhookd::api_test
