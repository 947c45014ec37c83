// Subjects and erasure through the API of `webhookd all` (docs/privacy.md): subjects are
// refused as the rule says and never sent to a receiver, a list by subject stays within
// the key's tenant, and an erasure is seen from the API, from the receiver and from a dump
// of the whole database.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tests/testing/process.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::subjects_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

Json Body(const httplib::Response& res) { return Json::parse(res.body, nullptr, false); }

class SubjectsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<WebhookdProcess>(
        db_.url(), "all", std::map<std::string, std::string>{{"WEBHOOKD_RETRY_SCHEDULE", "1h"}});
    tenant_t_ = WebhookdProcess::CreateKey(db_.url(), {"--role", "tenant", "--tenant", "T"});
    tenant_u_ = WebhookdProcess::CreateKey(db_.url(), {"--role", "tenant", "--tenant", "U"});
    ASSERT_FALSE(tenant_t_.empty());
    ASSERT_FALSE(tenant_u_.empty());
  }

  std::string Destination(const std::string& tenant, const std::string& url,
                          const std::string& type = "user.updated") {
    auto d = server_->Call("POST", "/v1/destinations",
                           {{"url", url}, {"tenant_id", tenant}, {"event_types", {type}}});
    EXPECT_EQ(d.status, 201) << d.body;
    return Body(d).value("id", "");
  }

  std::string Publish(const std::string& tenant, const Json& subjects, const Json& payload,
                      const std::string& type = "user.updated") {
    auto e = server_->Call(
        "POST", "/v1/events",
        {{"type", type}, {"payload", payload}, {"tenant_id", tenant}, {"subjects", subjects}});
    EXPECT_EQ(e.status, 202) << e.body;
    return Body(e).value("id", "");
  }

  std::vector<std::string> Named(const std::string& subject, const std::string& key,
                                 const std::string& query = "") {
    httplib::Params params{{"subject", subject}};
    auto res = server_->Client(key)->Get("/v1/events?" +
                                         httplib::detail::params_to_query_str(params) + query);
    EXPECT_TRUE(res);
    if (!res) return {};
    EXPECT_EQ(res->status, 200) << res->body;
    std::vector<std::string> ids;
    for (const Json& e : Body(*res).value("data", Json::array())) ids.push_back(e["id"]);
    return ids;
  }

  // The data of the database as `pg_dump` writes it: what a backup taken now would hold.
  std::string Dump() {
    const char* bin = std::getenv("WEBHOOKD_TEST_PG_BIN");
    const std::string pg_dump =
        bin != nullptr && *bin != '\0' ? std::string(bin) + "/pg_dump" : "pg_dump";
    const std::string command =
        pg_dump + " --data-only --schema=webhookd --dbname='" + db_.url() + "'";
    auto [status, out] = RunCommand(command);
    EXPECT_EQ(status, 0) << "pg_dump failed";
    return out;
  }

  TestDatabase db_;
  std::unique_ptr<WebhookdProcess> server_;
  std::string tenant_t_, tenant_u_;
};

TEST_F(SubjectsE2eTest, BadSubjectsAre422AndWriteNothing) {
  const std::vector<Json> bad = {Json("user:42"),
                                 Json::array({42}),
                                 Json::array({""}),
                                 Json::array({"a\nb"}),
                                 Json::array({std::string(257, 'x')}),
                                 Json::array({Json::array({"nested"})}),
                                 Json(std::vector<std::string>(17, "s")),
                                 Json::object()};
  for (const Json& subjects : bad) {
    auto res = server_->Call(
        "POST", "/v1/events",
        {{"type", "user.updated"}, {"payload", Json::object()}, {"subjects", subjects}});
    EXPECT_EQ(res.status, 422) << subjects.dump() << ": " << res.body;
    EXPECT_EQ(Body(res)["errors"][0]["field"], "subjects") << res.body;
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "0");
  // Sixteen, repeated ones folded, and null, are fine.
  std::vector<std::string> sixteen;
  for (int i = 0; i < 16; ++i) sixteen.push_back("s" + std::to_string(i % 8));
  for (const Json& subjects : {Json(sixteen), Json()}) {
    auto res = server_->Call(
        "POST", "/v1/events",
        {{"type", "user.updated"}, {"payload", Json::object()}, {"subjects", subjects}});
    EXPECT_EQ(res.status, 202) << res.body;
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM event_subjects"), "8");
  // The erasure's body and the list's query are held to the same rule.
  EXPECT_EQ(server_->Call("POST", "/v1/subjects/erase", {{"subject", ""}}).status, 422);
  EXPECT_EQ(server_->Call("POST", "/v1/subjects/erase", Json::object()).status, 422);
  EXPECT_EQ(server_->Call("POST", "/v1/subjects/erase", {{"subject", "a"}, {"subjct", "b"}}).status,
            422);
  EXPECT_EQ(server_->Call("GET", "/v1/events?subject=" + std::string(257, 'x')).status, 422);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM erasures"), "0");
}

TEST_F(SubjectsE2eTest, AnErasureIsSeenFromTheApiTheReceiverAndADumpOfTheDatabase) {
  // T's receiver answers with a body naming the person; U's stays unreachable, so U's
  // delivery stays pending.
  Receiver receiver([](const Received&, int) {
    Answer a;
    a.body = "thanks, ann@example.com";
    return a;
  });
  Destination("T", receiver.url());
  Destination("T", "http://127.0.0.1:9/never", "user.retried");
  Destination("U", "http://127.0.0.1:9/never");
  const Json subjects = {"user:42", "email:ann@example.com"};
  const std::string delivered = Publish("T", subjects, {{"email", "ann@example.com"}});
  ASSERT_TRUE(receiver.WaitFor(1, 20s));
  // The receiver got the payload and never the subjects.
  const std::string wire = receiver.requests()[0].body;
  EXPECT_NE(wire.find("ann@example.com"), std::string::npos) << wire;
  EXPECT_EQ(wire.find("user:42"), std::string::npos) << wire;
  EXPECT_EQ(wire.find("subjects"), std::string::npos) << wire;
  ASSERT_TRUE(WaitUntil(
      [&] { return db_.Scalar("SELECT count(*) FROM attempts WHERE outcome = 'success'") == "1"; },
      10s));
  // T's second event goes to a receiver that never answers: retrying an hour later.
  const std::string pending = Publish("T", {"user:42"}, {{"note", "ann again"}}, "user.retried");
  const std::string other_tenant = Publish("U", subjects, {{"email", "ann@example.com"}});

  // Access: each tenant's key finds its own events alone.
  EXPECT_EQ(Named("user:42", tenant_t_), (std::vector<std::string>{pending, delivered}));
  EXPECT_EQ(Named("user:42", tenant_u_), (std::vector<std::string>{other_tenant}));
  EXPECT_EQ(Named("user:42", tenant_t_, "&tenant_id=U"), (std::vector<std::string>{}));
  EXPECT_EQ(Named("user:42", server_->admin_key()),
            (std::vector<std::string>{other_tenant, pending, delivered}));
  auto shown = server_->Call("GET", "/v1/events/" + delivered, nullptr, tenant_t_);
  EXPECT_EQ(Body(shown)["subjects"], subjects) << shown.body;

  // T's key erases user:42 within T.
  auto erase = server_->Call("POST", "/v1/subjects/erase", {{"subject", "user:42"}}, tenant_t_);
  ASSERT_EQ(erase.status, 202) << erase.body;
  EXPECT_EQ(Body(erase)["status"], "running");
  const std::string id = Body(erase)["id"];
  EXPECT_TRUE(id.starts_with("era_")) << id;
  Json record;
  ASSERT_TRUE(WaitUntil(
      [&] {
        record = Body(server_->Call("GET", "/v1/erasures/" + id, nullptr, tenant_t_));
        return record.value("status", "") == "done";
      },
      10s))
      << record.dump();
  EXPECT_EQ(record["events"], 2);
  EXPECT_EQ(record["cancelled_deliveries"], 1);
  EXPECT_TRUE(record["finished_at"].is_string());
  EXPECT_FALSE(record.contains("subject"));
  // U's key cannot see T's erasure: the answer of an unknown id.
  auto foreign = server_->Call("GET", "/v1/erasures/" + id, nullptr, tenant_u_);
  auto unknown = server_->Call("GET", "/v1/erasures/era_999999", nullptr, tenant_u_);
  EXPECT_EQ(foreign.status, 404);
  EXPECT_EQ(foreign.body, unknown.body);

  for (const std::string& evt : {delivered, pending}) {
    const Json e = Body(server_->Call("GET", "/v1/events/" + evt, nullptr, tenant_t_));
    EXPECT_TRUE(e["payload"].is_null()) << e.dump();
    EXPECT_TRUE(e["erased_at"].is_string()) << e.dump();
    EXPECT_EQ(e["subjects"],
              evt == delivered ? Json::array({"email:ann@example.com"}) : Json::array())
        << e.dump();
  }
  const Json cancelled = Body(server_->Call("GET", "/v1/events/" + pending))["deliveries"][0];
  EXPECT_EQ(cancelled["status"], "cancelled") << cancelled.dump();
  EXPECT_EQ(cancelled["last_error"], "erased") << cancelled.dump();
  const Json first = Body(server_->Call("GET", "/v1/events/" + delivered))["deliveries"][0];
  EXPECT_EQ(first["status"], "succeeded");
  const Json attempts =
      Body(server_->Call("GET", "/v1/deliveries/" + first["id"].get<std::string>() + "/attempts"));
  EXPECT_EQ(attempts["data"][0]["response_body"], "") << attempts.dump();
  EXPECT_EQ(attempts["data"][0]["status_code"], 200);
  EXPECT_TRUE(Named("user:42", tenant_t_).empty());
  // U's event is U's: untouched.
  EXPECT_EQ(Named("user:42", tenant_u_), (std::vector<std::string>{other_tenant}));
  EXPECT_EQ(Body(server_->Call("GET", "/v1/events/" + other_tenant))["payload"]["email"],
            "ann@example.com");

  // An operator's key erases the person everywhere; then no dump of the database holds
  // the subjects or the payloads' personal data, and the records hold hashes alone.
  auto everywhere =
      server_->Call("POST", "/v1/subjects/erase", {{"subject", "email:ann@example.com"}});
  ASSERT_EQ(everywhere.status, 202) << everywhere.body;
  auto erase_u = server_->Call("POST", "/v1/subjects/erase", {{"subject", "user:42"}});
  ASSERT_EQ(erase_u.status, 202) << erase_u.body;
  ASSERT_TRUE(WaitUntil(
      [&] { return db_.Scalar("SELECT count(*) FROM erasures WHERE status = 'running'") == "0"; },
      10s));
  const std::string dump = Dump();
  EXPECT_GT(dump.size(), 1000u);
  EXPECT_EQ(dump.find("ann@example.com"), std::string::npos);
  EXPECT_EQ(dump.find("user:42"), std::string::npos);
  EXPECT_EQ(dump.find("ann again"), std::string::npos);
  EXPECT_NE(dump.find("user.updated"), std::string::npos);  // types stay
}

// An erasure is background work of the key that asked: a tenant with 100 running has to
// wait (429, Retry-After), and writes nothing; another tenant does not. `webhookd server`
// runs no purger, so the running ones stay running.
TEST(SubjectsErasureBoundE2eTest, ATenantWithTooManyRunningErasuresIsAnswered429) {
  TestDatabase db;
  WebhookdProcess server(db.url(), "server");
  const std::string tenant_t =
      WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", "T"});
  const std::string tenant_u =
      WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", "U"});
  db.Exec(
      "INSERT INTO webhookd.erasures (subject_hash, tenant_id) "
      "SELECT sha256(convert_to('s' || g, 'UTF8')), 'T' FROM generate_series(1, 100) g");
  auto refused = server.Call("POST", "/v1/subjects/erase", {{"subject", "user:1"}}, tenant_t);
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.get_header_value("Content-Type"), "application/problem+json");
  EXPECT_FALSE(refused.get_header_value("Retry-After").empty());
  const Json problem = Body(refused);
  EXPECT_EQ(problem["status"], 429) << refused.body;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.erasures"), "100");
  EXPECT_EQ(server.Call("POST", "/v1/subjects/erase", {{"subject", "user:1"}}, tenant_u).status,
            202);
  // One finished: room for one more.
  db.Exec(
      "UPDATE webhookd.erasures SET status = 'done', finished_at = now() "
      "WHERE id = (SELECT min(id) FROM webhookd.erasures)");
  EXPECT_EQ(server.Call("POST", "/v1/subjects/erase", {{"subject", "user:1"}}, tenant_t).status,
            202);
}

}  // namespace
}  // namespace webhookd::testing::subjects_e2e_test
