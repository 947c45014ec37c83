// The ingest address against a counting store: verification, and every refusal before
// it (unknown source, forged request), is answered from the process's copy of the
// sources, so a flood of them costs the database nothing beyond a check a second.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "server/api.h"
#include "tests/testing/stub_stores.h"

namespace webhookd::testing::sources_api_test {
namespace {

std::string HmacSha256ForTest(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

class NoResolver final : public Resolver {
 public:
  Result<std::vector<IpAddress>> Resolve(const std::string&) override {
    return Fail(ErrorKind::kUnavailable, "no lookups here");
  }
};

// One live GitHub source (id 7), every call counted.
class CountingSources final : public SourceStore {
 public:
  std::atomic<int> loads{0};
  std::atomic<int> generation_checks{0};
  std::atomic<int> inserts{0};

  Result<Source> CreateSource(const Source&) override { return Other(); }
  Result<Source> GetSource(int64_t, const Scope&) override { return Other(); }
  Result<Listing<Source>> ListSources(const SourceFilter&, const Page&, const Scope&) override {
    return Other();
  }
  Result<Source> UpdateSource(int64_t, const SourcePatch&, const Scope&) override {
    return Other();
  }
  Result<Timestamp> RotateSourceSecret(int64_t, const std::string&, Duration,
                                       const Scope&) override {
    return Other();
  }
  Result<void> DeleteSource(int64_t, const Scope&) override { return Other(); }
  Result<SourceSnapshot> LoadSources() override {
    ++loads;
    Source s;
    s.id = 7;
    s.settings.provider = InboundProvider::kGithub;
    s.secret = "s3cret";
    return SourceSnapshot{1, {s}};
  }
  Result<int64_t> SourceGeneration() override {
    ++generation_checks;
    return 1;
  }
  Result<InboundReceipt> InsertInboundEvent(const InboundEvent&) override {
    ++inserts;
    return InboundReceipt{42, false};
  }

 private:
  static std::unexpected<Error> Other() { return Fail(ErrorKind::kInternal, "not in this test"); }
};

class SourcesApiTest : public ::testing::Test {
 protected:
  SourcesApiTest() : api_(Stores(), resolver_, ApiOptions{}) {}

  ApiStores Stores() {
    ApiStores stores = stub_.stores();
    stores.sources = &sources_;
    return stores;
  }

  ApiRequest Request(const std::string& source, const std::string& signature) {
    ApiRequest req(Scope::All());
    req.path_args = {source};
    req.body = R"({"action":"opened"})";
    req.headers.Add("X-Hub-Signature-256", signature);
    req.headers.Add("X-GitHub-Delivery", "d-1");
    req.headers.Add("X-GitHub-Event", "pull_request");
    return req;
  }

  StubApiStores stub_;
  CountingSources sources_;
  NoResolver resolver_;
  Api api_;
};

TEST_F(SourcesApiTest, AFloodOfForgedAndUnknownRequestsAsksTheStoreAtMostOnceASecond) {
  const auto start = std::chrono::steady_clock::now();
  constexpr int kFlood = 2000;
  for (int i = 0; i < kFlood; ++i) {
    auto forged = api_.ReceiveInbound(Request("src_7", "sha256=" + std::string(64, '0')));
    ASSERT_TRUE(forged);
    ASSERT_EQ(forged->status, 401);
    auto unknown = api_.ReceiveInbound(Request("src_" + std::to_string(1000 + i), "x"));
    ASSERT_FALSE(unknown);
    ASSERT_EQ(unknown.error().kind, ErrorKind::kNotFound);
  }
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(sources_.loads.load(), 1);
  // One generation check a second at most, however many requests came.
  EXPECT_LE(sources_.generation_checks.load(), seconds + 1);
  EXPECT_EQ(sources_.inserts.load(), 0);
  EXPECT_EQ(stub_.calls, 0);
}

TEST_F(SourcesApiTest, AVerifiedRequestIsWrittenOnce) {
  const std::string body = R"({"action":"opened"})";
  ApiRequest req = Request("src_7", "");
  req.headers = HeaderLookup{
      {"X-Hub-Signature-256", "sha256=" + HexEncode(HmacSha256ForTest("s3cret", body))},
      {"X-GitHub-Delivery", "d-1"},
      {"X-GitHub-Event", "pull_request"}};
  auto reply = api_.ReceiveInbound(req);
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(nlohmann::json::parse(reply->body)["event_id"], "evt_42");
  EXPECT_EQ(sources_.inserts.load(), 1);
}

}  // namespace
}  // namespace webhookd::testing::sources_api_test
