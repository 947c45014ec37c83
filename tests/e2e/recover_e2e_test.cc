// Recoveries end to end (docs/operations.md "An endpoint was down"): an endpoint that was
// down gets every dead letter of the window delivered once; a recovery outlives a
// kill -9 of the process carrying it out and still sends nothing twice; a tenant's key
// recovers its own destinations alone; bad input writes nothing.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "tests/testing/process.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::recover_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

Json Body(const httplib::Response& res) { return Json::parse(res.body, nullptr, false); }

// The JSON a command printed: its last line that is a JSON object and not a log line
// (those carry "ts").
Json Printed(const std::string& out) {
  size_t end = out.size();
  while (end > 0) {
    const size_t start = out.rfind('\n', end - 1);
    const size_t from = start == std::string::npos ? 0 : start + 1;
    Json line = Json::parse(out.substr(from, end - from), nullptr, false);
    if (line.is_object() && !line.contains("ts")) return line;
    if (start == std::string::npos) break;
    end = start;
  }
  return Json();
}

std::string Now() { return FormatRfc3339(SystemClock().Now()); }

// Every attempt is counted: no circuit turns one into a skip.
std::map<std::string, std::string> Env() {
  return {{"WEBHOOKD_RETRY_SCHEDULE", RetrySchedule("100ms", 4)},
          {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
          {"WEBHOOKD_CIRCUIT_THRESHOLD", "1000000"}};
}

class RecoverE2eTest : public ::testing::Test {
 protected:
  Json Call(WebhookdProcess& w, const std::string& method, const std::string& path,
            const Json& body, int want, const std::string& key = "") {
    auto res = w.Call(method, path, body, key);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return res.status == want ? Body(res) : Json::object();
  }

  std::string Scalar(const std::string& sql) { return db_.Scalar(sql); }

  // Waits until recovery `id` is done; returns it as GET shows it.
  Json WaitDone(WebhookdProcess& w, const std::string& id, std::chrono::milliseconds timeout) {
    Json rec;
    WaitUntil(
        [&] {
          rec = Body(w.Call("GET", "/v1/recoveries/" + id));
          return rec.value("status", "") == "done";
        },
        timeout, 100ms);
    return rec;
  }

  TestDatabase db_;
};

TEST_F(RecoverE2eTest, AnEndpointThatWasDownGetsItsWindowDeliveredOnce) {
  WebhookdProcess webhookd(db_.url(), "all", Env());
  std::atomic<bool> fixed{false};
  std::mutex mu;
  std::vector<Received> after_fix;  // the requests the fixed endpoint answered 200
  Receiver receiver([&](const Received& r, int) {
    if (!fixed) return Status(503);
    std::lock_guard lock(mu);
    after_fix.push_back(r);
    return Status(200);
  });
  const std::string dst =
      Call(webhookd, "POST", "/v1/destinations", {{"url", receiver.url()}}, 201)["id"];
  auto publish = [&](int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      ids.push_back(Call(webhookd, "POST", "/v1/events",
                         {{"type", "order.created"}, {"payload", {{"i", i}}}}, 202)["id"]);
    }
    return ids;
  };
  auto dead_letters = [&] {
    return std::stoi(Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"));
  };
  // Three before the window, ten in it.
  publish(3);
  ASSERT_TRUE(WaitUntil([&] { return dead_letters() == 3; }, 20s)) << dead_letters();
  std::this_thread::sleep_for(50ms);
  const std::string since = Now();
  const std::vector<std::string> in_window = publish(10);
  ASSERT_TRUE(WaitUntil([&] { return dead_letters() == 13; }, 20s)) << dead_letters();

  fixed = true;
  const Json started =
      Call(webhookd, "POST", "/v1/destinations/" + dst + "/recover", {{"since", since}}, 202);
  ASSERT_TRUE(started["id"].is_string()) << started.dump();
  EXPECT_TRUE(started["id"].get<std::string>().starts_with("rec_"));
  EXPECT_EQ(started["status"], "running");
  EXPECT_EQ(started.size(), 2u) << started.dump();

  const Json done = WaitDone(webhookd, started["id"], 20s);
  EXPECT_EQ(done["status"], "done") << done.dump();
  EXPECT_EQ(done["replayed"], 10);
  EXPECT_EQ(done["destination_id"], dst);
  EXPECT_TRUE(done["finished_at"].is_string());
  EXPECT_EQ(FormatRfc3339(*ParseRfc3339(done["since"].get<std::string>())),
            FormatRfc3339(*ParseRfc3339(since)));
  ASSERT_TRUE(receiver.WaitFor(13 * 5 + 10, 20s)) << receiver.count();

  // A second recovery of the same window, from the command line, finds nothing left.
  const std::map<std::string, std::string> env = {{"DATABASE_URL", db_.url()}};
  auto [code, out] = WebhookdProcess::RunCommand(
      {"destinations", "recover", dst, "--since", since, "--wait"}, env);
  ASSERT_EQ(code, 0) << out;
  const Json again = Printed(out);
  EXPECT_EQ(again["status"], "done") << out;
  EXPECT_EQ(again["replayed"], 0) << out;
  auto [get_code, get_out] = WebhookdProcess::RunCommand({"recoveries", "get", started["id"]}, env);
  ASSERT_EQ(get_code, 0) << get_out;
  EXPECT_EQ(Printed(get_out), done);
  // Bad usage exits 2; what the API refuses, 1, with its problem.
  EXPECT_EQ(WebhookdProcess::RunCommand({"destinations", "recover", dst}, env).first, 2);
  auto [bad_code, bad_out] =
      WebhookdProcess::RunCommand({"destinations", "recover", dst, "--since",
                                   "2026-01-02T00:00:00Z", "--until", "2026-01-01T00:00:00Z"},
                                  env);
  EXPECT_EQ(bad_code, 1) << bad_out;
  EXPECT_NE(bad_out.find("must be after since"), std::string::npos) << bad_out;
  EXPECT_EQ(Scalar("SELECT count(*) FROM recoveries"), "2");
  std::this_thread::sleep_for(500ms);

  std::map<std::string, int> seen;
  {
    std::lock_guard lock(mu);
    for (const Received& r : after_fix) ++seen[r.header("webhook-id")];
  }
  ASSERT_EQ(seen.size(), 10u);
  for (const std::string& id : in_window) EXPECT_EQ(seen[id], 1) << id;
  EXPECT_EQ(receiver.count(), 13u * 5u + 10u);
  EXPECT_EQ(dead_letters(), 3);
}

TEST_F(RecoverE2eTest, ARecoveryKilledHalfWayResumesAndSendsNothingTwice) {
  constexpr int kEvents = 3000;
  // The recovery runs in the server; the deliveries in a worker of their own, which is
  // never killed, so every duplicate the receiver could see would be the recovery's.
  auto server = std::make_unique<WebhookdProcess>(db_.url(), "server", Env());
  WebhookdProcess worker(db_.url(), "worker", Env());
  std::atomic<bool> fixed{false};
  std::mutex mu;
  std::map<std::string, int> successes;
  Receiver receiver([&](const Received& r, int) {
    if (!fixed) return Status(400);  // permanent: a dead letter at once
    std::lock_guard lock(mu);
    ++successes[r.header("webhook-id")];
    return Status(200);
  });
  const std::string dst =
      Call(*server, "POST", "/v1/destinations", {{"url", receiver.url()}}, 201)["id"];
  const std::string since = Now();
  db_.Exec(
      "SELECT count(webhookd.publish('bulk.recover', json_build_object('i', i)::text))"
      " FROM generate_series(1, " +
      std::to_string(kEvents) + ") i");
  ASSERT_TRUE(WaitUntil(
      [&] { return Scalar("SELECT count(*) FROM dead_letters") == std::to_string(kEvents); }, 120s,
      200ms))
      << Scalar("SELECT count(*) FROM dead_letters");

  // The worker stops taking deliveries: the recovery fills the destination's queue to its
  // cap and waits there, half-way.
  fixed = true;
  StopAndWait(worker.process().pid());
  const std::string id =
      Call(*server, "POST", "/v1/destinations/" + dst + "/recover", {{"since", since}}, 202)["id"];
  ASSERT_TRUE(WaitUntil(
      [&] { return Scalar("SELECT replayed FROM recoveries WHERE status = 'running'") == "1000"; },
      30s, 100ms))
      << Scalar("SELECT replayed FROM recoveries");
  server->process().Signal(SIGKILL);
  EXPECT_EQ(server->process().Wait(5s), 128 + SIGKILL);
  server.reset();
  EXPECT_EQ(Scalar("SELECT status || ' ' || replayed FROM recoveries"), "running 1000");

  // A new server takes the recovery up where it was, and the worker goes on.
  server = std::make_unique<WebhookdProcess>(db_.url(), "server", Env());
  kill(worker.process().pid(), SIGCONT);
  const Json done = WaitDone(*server, id, 120s);
  EXPECT_EQ(done["status"], "done") << done.dump();
  EXPECT_EQ(done["replayed"], kEvents);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Scalar("SELECT count(*) FROM deliveries WHERE status = 'succeeded'") ==
               std::to_string(kEvents);
      },
      120s, 200ms))
      << Scalar("SELECT count(*) FROM deliveries WHERE status = 'succeeded'");
  std::this_thread::sleep_for(500ms);
  std::lock_guard lock(mu);
  EXPECT_EQ(successes.size(), static_cast<size_t>(kEvents));
  int twice = 0;
  for (const auto& [webhook_id, n] : successes) twice += n > 1;
  EXPECT_EQ(twice, 0);
  EXPECT_EQ(Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"), "0");
}

TEST_F(RecoverE2eTest, ATenantsKeyRecoversItsOwnDestinationsAlone) {
  WebhookdProcess webhookd(db_.url(), "all", Env());
  const std::string acme =
      WebhookdProcess::CreateKey(db_.url(), {"--role", "tenant", "--tenant", "acme"});
  const std::string globex =
      WebhookdProcess::CreateKey(db_.url(), {"--role", "tenant", "--tenant", "globex"});
  const std::string publisher = WebhookdProcess::CreateKey(db_.url(), {"--role", "publisher"});
  ASSERT_FALSE(acme.empty());
  ASSERT_FALSE(globex.empty());
  ASSERT_FALSE(publisher.empty());
  Receiver receiver;
  const Json url = {{"url", receiver.url()}};
  const std::string acme_dst = Call(webhookd, "POST", "/v1/destinations", url, 201, acme)["id"];
  const std::string globex_dst = Call(webhookd, "POST", "/v1/destinations", url, 201, globex)["id"];
  const std::string none_dst = Call(webhookd, "POST", "/v1/destinations", url, 201)["id"];
  const Json window = {{"since", "2020-01-01T00:00:00Z"}};
  auto recover = [&](const std::string& dst, const std::string& key) {
    return webhookd.Call("POST", "/v1/destinations/" + dst + "/recover", window, key);
  };

  const std::string own =
      Call(webhookd, "POST", "/v1/destinations/" + acme_dst + "/recover", window, 202, acme)["id"];
  EXPECT_EQ(Call(webhookd, "GET", "/v1/recoveries/" + own, nullptr, 200, acme)["destination_id"],
            acme_dst);
  // Another tenant's destination, one of no tenant and an unknown one answer alike.
  const auto unknown = recover("dst_999999", acme);
  EXPECT_EQ(unknown.status, 404);
  for (const std::string& dst : {globex_dst, none_dst}) {
    const auto res = recover(dst, acme);
    EXPECT_EQ(res.status, 404) << dst;
    EXPECT_EQ(res.body, unknown.body) << dst;
  }
  // So does another tenant's recovery, to the other tenant.
  const auto unknown_rec = webhookd.Call("GET", "/v1/recoveries/rec_999999", nullptr, globex);
  EXPECT_EQ(unknown_rec.status, 404);
  const auto theirs = webhookd.Call("GET", "/v1/recoveries/" + own, nullptr, globex);
  EXPECT_EQ(theirs.status, 404);
  EXPECT_EQ(theirs.body, unknown_rec.body);
  // A publisher replays no dead letters.
  EXPECT_EQ(recover(acme_dst, publisher).status, 403);
  EXPECT_EQ(webhookd.Call("GET", "/v1/recoveries/" + own, nullptr, publisher).status, 403);
  EXPECT_EQ(recover(acme_dst, "not-a-key").status, 401);
  // An admin recovers any, and reads every recovery.
  EXPECT_EQ(recover(globex_dst, "").status, 202);
  EXPECT_EQ(webhookd.Call("GET", "/v1/recoveries/" + own).status, 200);
  EXPECT_EQ(Scalar("SELECT count(*) FROM recoveries"), "2");
  EXPECT_EQ(Scalar("SELECT string_agg(coalesce(tenant_id, '-'), ',' ORDER BY id) FROM recoveries"),
            "acme,globex");
}

TEST_F(RecoverE2eTest, BadInputIsRefusedAndWritesNothing) {
  WebhookdProcess webhookd(db_.url(), "all", Env());
  Receiver receiver;
  const std::string dst =
      Call(webhookd, "POST", "/v1/destinations", {{"url", receiver.url()}}, 201)["id"];
  const std::string path = "/v1/destinations/" + dst + "/recover";
  const std::string future = FormatRfc3339(SystemClock().Now() + std::chrono::hours(1));
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"{}", "since"},
      {R"({"until": "2026-01-02T00:00:00Z"})", "since"},
      {R"({"since": "yesterday"})", "since"},
      {R"({"since": 1767225600})", "since"},
      {R"({"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"})", "until"},
      {R"({"since": "2026-01-02T00:00:00Z", "until": "2026-01-02T00:00:00Z"})", "until"},
      {R"({"since": "2026-01-01T00:00:00Z", "sinse": "2026-01-01T00:00:00Z"})", "sinse"},
      {R"({"since": ")" + future + R"("})", "since"},
      {"[1]", "body"},
  };
  auto client = webhookd.Client();
  for (const auto& [body, field] : bodies) {
    auto res = client->Post(path, body, "application/json");
    ASSERT_TRUE(res) << body;
    EXPECT_EQ(res->status, 422) << body << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/problem+json") << body;
    const Json problem = Body(*res);
    ASSERT_TRUE(problem.contains("errors")) << res->body;
    EXPECT_EQ(problem["errors"][0]["field"], field) << body << ": " << res->body;
  }
  auto malformed = client->Post(path, "{\"since\":", "application/json");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400) << malformed->body;
  EXPECT_EQ(webhookd.Call("GET", "/v1/recoveries/rec_x").status, 404);
  EXPECT_EQ(webhookd.Call("GET", "/v1/recoveries/dst_1").status, 404);
  EXPECT_EQ(Scalar("SELECT count(*) FROM recoveries"), "0");
}

}  // namespace
}  // namespace webhookd::testing::recover_e2e_test
