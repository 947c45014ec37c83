// What is delivered is what was sent: the bytes of the posted `payload` are the bytes of
// `data` at a real receiver and of `payload` in GET /v1/events/{id}, whatever the numbers,
// key order, escapes, spacing or size.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::payload_fidelity_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string Nested(int depth) {
  // `depth` objects deep inside the payload, which itself sits one level inside the body.
  std::string s;
  for (int i = 0; i < depth; ++i) s += R"({"a":)";
  s += "1";
  for (int i = 0; i < depth; ++i) s += "}";
  return s;
}

std::vector<std::string> Payloads() {
  return {
      R"({"big":12345678901234567890123})",
      R"({"small":-9223372036854775809})",
      R"({"price":19.99,"qty":3,"cents":1999})",
      R"({"z":1,"a":2,"m":{"y":[3,2,1],"b":null}})",
      R"({"negative_zero":-0,"exp":1e400,"tiny":1.5E-7,"trailing":0.1000,"frac":2.50})",
      R"({"escapes":"\" \\ \/ \b \f \n \r \t \u0000 \u00e9 \ud83d\ude00"})",
      "{\"utf8\":\"d\xc3\xa9j\xc3\xa0 vu \xe2\x82\xac \xf0\x9f\x98\x80\"}",
      "{ \"spaced\" :\t[ 1 ,  2 ]\n ,\"x\":  { }  }",
      R"({"dup":1,"dup":2})",
      Nested(62),
      R"({"long":")" + std::string(200 * 1024, 'x') + R"("})",
      R"({})",
  };
}

TEST(PayloadFidelityE2eTest, TheBytesPostedAreTheBytesDeliveredAndRead) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  Receiver receiver;
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}}).status, 201);
  auto client = webhookd.Client();

  const std::vector<std::string> payloads = Payloads();
  std::vector<std::string> ids;
  for (const std::string& payload : payloads) {
    const std::string body = R"({"type":"fidelity.test","payload":)" + payload + "}";
    auto res = client->Post("/v1/events", body, "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 202) << payload.substr(0, 80) << " " << res->body;
    ids.push_back(Json::parse(res->body)["id"]);
  }
  ASSERT_TRUE(receiver.WaitFor(payloads.size(), 30s));

  for (const Received& r : receiver.requests()) {
    const std::string id = r.header("webhook-id");
    const size_t i = std::find(ids.begin(), ids.end(), id) - ids.begin();
    ASSERT_LT(i, ids.size()) << id;
    // {"type":"fidelity.test","timestamp":"…","data":<payload>}
    const std::string marker = R"(,"data":)";
    const size_t at = r.body.find(marker);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(r.body.substr(at + marker.size(), r.body.size() - at - marker.size() - 1),
              payloads[i])
        << "payload " << i;
    EXPECT_EQ(r.body.back(), '}');
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    auto res = client->Get("/v1/events/" + ids[i]);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
    // The payload is the last member of the answer, spliced in as stored.
    const std::string marker = R"(,"payload":)";
    const size_t at = res->body.rfind(marker, res->body.size() - payloads[i].size() - 2);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(res->body.substr(at + marker.size(), res->body.size() - at - marker.size() - 1),
              payloads[i])
        << "payload " << i;
  }
  // The list shows the same bytes.
  auto list = client->Get("/v1/events?type=fidelity.test&limit=100");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200);
  EXPECT_NE(list->body.find(R"("payload":{"big":12345678901234567890123})"), std::string::npos);
  EXPECT_NE(list->body.find(R"("payload":{"price":19.99,"qty":3,"cents":1999})"),
            std::string::npos);
}

TEST(PayloadFidelityE2eTest, ReservedTypesAndBadPayloadsAreRefusedAndWriteNothing) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  auto client = webhookd.Client();
  const std::vector<std::pair<std::string, int>> cases = {
      {R"({"type":"webhookd.delivery.dead_lettered","payload":{}})", 422},
      {R"({"type":"webhookd.anything","payload":{}})", 422},
      {R"({"type":"t","payload":[1]})", 422},
      {R"({"type":"t","payload":{"a":01}})", 400},
      {R"({"type":"t","payload":{"a":1},})", 400},
      {R"({"type":"t","payload":)" + Nested(64) + "}", 422},
  };
  for (const auto& [body, status] : cases) {
    auto res = client->Post("/v1/events", body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, status) << body.substr(0, 80) << " " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/problem+json");
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM events"), "0");
  // A type that only starts like the reserved prefix is fine.
  auto ok =
      client->Post("/v1/events", R"({"type":"webhookdx.ok","payload":{}})", "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 202) << ok->body;
}

}  // namespace
}  // namespace webhookd::testing::payload_fidelity_e2e_test
