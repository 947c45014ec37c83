// The real `webhookd send` binary against a scripted API on loopback: what it sends, what
// it prints, how it exits, and that a failing API gets no retry storm.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/testing/process.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::cmd::send_e2e_test {
namespace {

using nlohmann::json;
using testing::Process;
using testing::ReadFile;
using testing::TestLogDir;
using testing::WebhookdBinary;

constexpr const char* kKey = "whk_test_e2e_never_printed_9876543210";

// POST /v1/events answered by the event's type: "ok" 202, "bad" 422, "down" always 503,
// "flaky" 503 to the first request with a given Idempotency-Key and 202 after.
class ScriptedApi {
 public:
  struct Seen {
    std::string body;
    std::string key;
    std::string authorization;
  };

  ScriptedApi() {
    // More threads than the client's connections, so that kept-alive ones never queue.
    server_.new_task_queue = [] { return new httplib::ThreadPool(40); };
    server_.set_keep_alive_max_count(100000);
    server_.Post("/v1/events",
                 [this](const httplib::Request& req, httplib::Response& res) { Answer(req, res); });
    // cpp-httplib listens with a backlog of 5, fewer than the connections a batch opens
    // at once: listen again with room, or SYNs are dropped and connects stall.
    int listen_fd = -1;
    server_.set_socket_options([&listen_fd](socket_t sock) {
      httplib::default_socket_options(sock);
      listen_fd = sock;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (listen_fd >= 0) ::listen(listen_fd, 1024);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedApi() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  void Answer(const httplib::Request& req, httplib::Response& res) {
    const int n = ++requests_;
    const std::string key = req.get_header_value("Idempotency-Key");
    int tries = 0;
    {
      std::lock_guard lock(mu_);
      seen_.push_back({req.body, key, req.get_header_value("Authorization")});
      tries = ++tries_by_key_[key];
    }
    const json body = json::parse(req.body, nullptr, false);
    const std::string type = body.is_object() ? body.value("type", "") : "";
    const bool unavailable = type == "down" || (type == "flaky" && tries == 1);
    if (unavailable) {
      res.status = 503;
      res.set_content(R"({"type":"about:blank","title":"Service Unavailable","status":503})",
                      "application/problem+json");
    } else if (type == "bad" || !body.is_object()) {
      res.status = 422;
      res.set_content(R"({"type":"about:blank","title":"Unprocessable Content","status":422,)"
                      R"("errors":[{"field":"type","message":"bad"}]})",
                      "application/problem+json");
    } else {
      res.status = 202;
      res.set_content(json{{"id", "evt_" + std::to_string(n)},
                           {"type", type},
                           {"n", body["payload"].value("n", -1)},
                           {"deliveries", json::array()}}
                          .dump(),
                      "application/json");
    }
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::vector<Seen> seen_;
  std::map<std::string, int> tries_by_key_;
};

struct SendRun {
  int code = -1;
  std::string out;
  std::string err;
  // stdout, parsed line by line; non-const so that a missing member reads as null rather
  // than aborting.
  std::vector<json> lines;
};

std::string Unique() {
  static std::atomic<int> n{0};
  return std::to_string(::getpid()) + "-" + std::to_string(++n);
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TestLogDir() + "/send-" + Unique() + "-" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Runs `webhookd send ARGS` with `stdin_text` on stdin, stdout and stderr kept apart.
SendRun SendTo(const std::string& url, const std::string& key, const std::vector<std::string>& args,
               const std::string& stdin_text = "") {
  const std::string in = WriteTemp("stdin", stdin_text);
  const std::string err = TestLogDir() + "/send-" + Unique() + ".err";
  const std::string out = TestLogDir() + "/send-" + Unique() + ".out";
  std::vector<std::string> argv = {"/bin/sh", "-c", R"(exec "$0" "$@" <"$SEND_IN" 2>"$SEND_ERR")",
                                   WebhookdBinary(), "send"};
  argv.insert(argv.end(), args.begin(), args.end());
  Process process(
      argv, {{"WEBHOOKD_URL", url}, {"WEBHOOKD_API_KEY", key}, {"SEND_IN", in}, {"SEND_ERR", err}},
      out);
  SendRun run;
  run.code = process.Wait(std::chrono::seconds(120)).value_or(-1);
  run.out = ReadFile(out);
  run.err = ReadFile(err);
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    run.lines.push_back(json::parse(line, nullptr, false));
    EXPECT_FALSE(run.lines.back().is_discarded()) << line;
  }
  EXPECT_EQ(run.out.find(key), std::string::npos);
  EXPECT_EQ(run.err.find(key), std::string::npos);
  return run;
}

SendRun Send(const ScriptedApi& api, const std::vector<std::string>& args,
             const std::string& stdin_text = "") {
  return SendTo(api.url(), kKey, args, stdin_text);
}

std::string Batch(const std::vector<std::string>& types) {
  std::string text;
  for (size_t i = 0; i < types.size(); ++i) {
    text += R"({"type":")" + types[i] + R"(","payload":{"n":)" + std::to_string(i) + "}}\n";
  }
  return text;
}

TEST(SendE2eTest, AnUnavailableApiGetsAtMostTwentyPercentRetries) {
  ScriptedApi api;
  const std::string batch = WriteTemp("down.jsonl", Batch(std::vector<std::string>(200, "down")));
  SendRun run = Send(api, {"--batch", batch, "--max-wait", "200ms"});
  EXPECT_EQ(run.code, 3) << run.err;
  EXPECT_GE(api.requests(), 200);
  EXPECT_LE(api.requests(), 1.2 * 200 + 10);
  ASSERT_EQ(run.lines.size(), 200u);
  for (size_t i = 0; i < run.lines.size(); ++i) {
    EXPECT_EQ(run.lines[i]["status"], 503);
    EXPECT_EQ(run.lines[i]["line"], i + 1);
    EXPECT_TRUE(run.lines[i]["error"].is_string());
  }
  EXPECT_NE(run.err.find("200 events: 0 accepted, 0 refused, 200 gave up; " +
                         std::to_string(api.requests()) + " requests"),
            std::string::npos)
      << run.err;
}

TEST(SendE2eTest, AllAcceptedExitsZeroWithOneLinePerEventInOrder) {
  ScriptedApi api;
  std::vector<std::string> types;
  // Few enough flaky ones for the retry budget (20 % of the requests) to cover them.
  for (int i = 0; i < 40; ++i) types.push_back(i % 8 == 1 ? "flaky" : "ok");
  const std::string batch = WriteTemp("ok.jsonl", "\n" + Batch(types) + "   \n");
  SendRun run = Send(api, {"--batch", batch, "--concurrency", "8"});
  EXPECT_EQ(run.code, 0) << run.err;
  ASSERT_EQ(run.lines.size(), 40u);
  for (size_t i = 0; i < run.lines.size(); ++i)
    EXPECT_EQ(run.lines[i].value("n", -1), i) << run.out;
  EXPECT_EQ(api.requests(), 40 + 5);  // each flaky event once more
  // A retry repeats the key and the body: the API can tell it from a new event.
  std::map<std::string, std::vector<std::string>> bodies_by_key;
  for (const auto& seen : api.seen()) {
    bodies_by_key[seen.key].push_back(seen.body);
    EXPECT_EQ(seen.authorization, std::string("Bearer ") + kKey);
  }
  EXPECT_EQ(bodies_by_key.size(), 40u);
  for (const auto& [key, bodies] : bodies_by_key) {
    EXPECT_FALSE(key.empty());
    for (const auto& body : bodies) EXPECT_EQ(body, bodies.front());
  }
  EXPECT_NE(run.err.find("40 events: 40 accepted, 0 refused, 0 gave up; 45 requests"),
            std::string::npos)
      << run.err;
}

TEST(SendE2eTest, ARefusalExitsOne) {
  ScriptedApi api;
  const std::string batch = WriteTemp(
      "refused.jsonl", Batch({"ok", "bad", "flaky"}) + R"({"type":"ok","payload":[1]})" + "\n");
  SendRun run = Send(api, {"--batch", batch});
  EXPECT_EQ(run.code, 1) << run.err;
  ASSERT_EQ(run.lines.size(), 4u);
  EXPECT_EQ(run.lines[0]["n"], 0);
  EXPECT_EQ(run.lines[1]["status"], 422);
  EXPECT_EQ(run.lines[1]["line"], 2);
  EXPECT_EQ(run.lines[1]["attempts"], 1);
  EXPECT_EQ(run.lines[1]["error"]["errors"][0]["field"], "type");  // the problem, as sent
  EXPECT_EQ(run.lines[2]["n"], 2);
  // A line that is not an event is refused without a request.
  EXPECT_EQ(run.lines[3]["line"], 4);
  EXPECT_EQ(run.lines[3]["status"], nullptr);
  EXPECT_NE(run.lines[3]["error"].get<std::string>().find("payload"), std::string::npos);
  EXPECT_EQ(api.requests(), 4);  // ok, bad, flaky twice
}

TEST(SendE2eTest, GivingUpExitsThreeEvenWithRefusals) {
  ScriptedApi api;
  const std::string batch = WriteTemp("gave-up.jsonl", Batch({"ok", "bad", "down"}));
  SendRun run = Send(api, {"--batch", batch, "--max-attempts", "2", "--max-wait", "50ms"});
  EXPECT_EQ(run.code, 3) << run.err;
  ASSERT_EQ(run.lines.size(), 3u);
  EXPECT_EQ(run.lines[2]["status"], 503);
  EXPECT_EQ(run.lines[2]["attempts"], 2);
  EXPECT_EQ(api.requests(), 1 + 1 + 2);
}

TEST(SendE2eTest, BatchPayloadBytesAndFieldsArriveAsWritten) {
  ScriptedApi api;
  const std::string line =
      R"({"idempotency_key":"order-1","tenant_id":"acme","destination_id":"dst_9",)"
      R"("payload":{ "n" : 1.50, "big": 123456789012345678901234567890 },"type":"ok"})";
  SendRun run = Send(api, {"--batch", WriteTemp("exact.jsonl", line + "\n")});
  EXPECT_EQ(run.code, 0) << run.err;
  const auto seen = api.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].key, "order-1");
  EXPECT_EQ(seen[0].body,
            R"({"type":"ok","payload":{ "n" : 1.50, "big": 123456789012345678901234567890 },)"
            R"("tenant_id":"acme","destination_id":"dst_9"})");
}

TEST(SendE2eTest, OneEventFromDataOrStdin) {
  ScriptedApi api;
  SendRun from_flag = Send(api, {"--type", "ok", "--tenant", "acme", "--idempotency-key", "k-1",
                                 "--data", R"({"n": 7,  "x": [1.0]})"});
  EXPECT_EQ(from_flag.code, 0) << from_flag.err;
  ASSERT_EQ(from_flag.lines.size(), 1u);
  EXPECT_EQ(from_flag.lines[0]["n"], 7);
  EXPECT_NE(from_flag.err.find("1 event: 1 accepted"), std::string::npos) << from_flag.err;

  SendRun from_stdin = Send(api, {"--type", "flaky"}, "\n  {\"n\": 8}\n");
  EXPECT_EQ(from_stdin.code, 0) << from_stdin.err;
  ASSERT_EQ(from_stdin.lines.size(), 1u);
  EXPECT_EQ(from_stdin.lines[0]["n"], 8);

  SendRun refused = Send(api, {"--type", "bad", "--data", "{}"});
  EXPECT_EQ(refused.code, 1) << refused.err;
  ASSERT_EQ(refused.lines.size(), 1u);
  EXPECT_EQ(refused.lines[0]["status"], 422);
  EXPECT_FALSE(refused.lines[0].contains("line"));

  const auto seen = api.seen();
  ASSERT_EQ(seen.size(), 4u);  // ok, flaky twice, bad
  EXPECT_EQ(seen[0].key, "k-1");
  EXPECT_EQ(seen[0].body, R"({"type":"ok","payload":{"n": 7,  "x": [1.0]},"tenant_id":"acme"})");
  EXPECT_EQ(seen[1].body, R"({"type":"flaky","payload":{"n": 8}})");
  EXPECT_EQ(seen[2].key, seen[1].key);
}

TEST(SendE2eTest, BadUsageExitsTwo) {
  ScriptedApi api;
  SendRun run = Send(api, {"--type", "ok", "--concurrency", "-3"});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("--concurrency"), std::string::npos) << run.err;
  EXPECT_EQ(api.requests(), 0);
}

// Against the real server and database: events are stored, a refusal is reported, and a
// second run of the same file publishes again only the events without a key.
TEST(SendE2eTest, PublishesToWebhookdIdempotently) {
  testing::TestDatabase db;
  testing::WebhookdProcess webhookd(db.url(), "server");
  const std::string url = "http://127.0.0.1:" + std::to_string(webhookd.port());
  const std::string batch = WriteTemp(
      "real.jsonl",
      R"({"type":"order.created","payload":{"id": 1},"idempotency_key":"order-1-created"})"
      "\n"
      R"({"type":"order.created","payload":{"id": 2}})"
      "\n"
      R"({"type":"not a type!","payload":{}})"
      "\n");

  SendRun first = SendTo(url, webhookd.admin_key(), {"--batch", batch});
  EXPECT_EQ(first.code, 1) << first.err;
  ASSERT_EQ(first.lines.size(), 3u) << first.out;
  EXPECT_TRUE(first.lines[0]["id"].get<std::string>().starts_with("evt_")) << first.out;
  EXPECT_EQ(first.lines[2]["status"], 422);
  EXPECT_EQ(first.lines[2]["error"]["status"], 422);

  SendRun again = SendTo(url, webhookd.admin_key(), {"--batch", batch});
  EXPECT_EQ(again.code, 1) << again.err;
  ASSERT_EQ(again.lines.size(), 3u) << again.out;
  EXPECT_EQ(again.lines[0]["id"], first.lines[0]["id"]);  // replayed by its key
  EXPECT_NE(again.lines[1]["id"], first.lines[1]["id"]);  // a fresh key each run
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM events"), "3");
}

// --traceparent joins the event to the caller's trace: the event keeps that trace id,
// under webhookd's ingest span, and the tracestate as given.
TEST(SendE2eTest, TheTraceparentJoinsTheEventToTheCallersTrace) {
  testing::TestDatabase db;
  testing::WebhookdProcess webhookd(db.url(), "server");
  const std::string url = "http://127.0.0.1:" + std::to_string(webhookd.port());
  SendRun run =
      SendTo(url, webhookd.admin_key(),
             {"--type", "order.created", "--data", "{}", "--traceparent",
              "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "--tracestate", "rojo=1"});
  EXPECT_EQ(run.code, 0) << run.err;
  const std::string stored = db.Scalar("SELECT traceparent FROM events");
  EXPECT_TRUE(stored.starts_with("00-0af7651916cd43dd8448eb211c80319c-")) << stored;
  EXPECT_FALSE(stored.starts_with("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"))
      << "the event names webhookd's ingest span, a child of the caller's";
  EXPECT_EQ(db.Scalar("SELECT tracestate FROM events"), "rojo=1");
}

// --subject, repeated, and a batch line's subjects reach the database's index of subjects.
TEST(SendE2eTest, SubjectsAreStoredFromTheFlagAndFromABatchLine) {
  testing::TestDatabase db;
  testing::WebhookdProcess webhookd(db.url(), "server");
  const std::string url = "http://127.0.0.1:" + std::to_string(webhookd.port());
  SendRun flag = SendTo(url, webhookd.admin_key(),
                        {"--type", "user.updated", "--data", "{}", "--subject", "user:42",
                         "--subject", "email:ann@example.com"});
  EXPECT_EQ(flag.code, 0) << flag.err;
  SendRun batch =
      SendTo(url, webhookd.admin_key(),
             {"--batch", WriteTemp("subjects.jsonl",
                                   R"({"type":"user.updated","payload":{},"subjects":["user:42"]})"
                                   "\n")});
  EXPECT_EQ(batch.code, 0) << batch.err;
  EXPECT_EQ(db.Scalar("SELECT string_agg(array_to_string(subjects, '|'), ',' ORDER BY id) FROM "
                      "events"),
            "user:42|email:ann@example.com,user:42");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM event_subjects"), "3");
}

// --tenant and a batch line's tenant_id route the event to that tenant's destinations.
TEST(SendE2eTest, TenantsReachTheirOwnDestinations) {
  testing::TestDatabase db;
  testing::WebhookdProcess webhookd(db.url(), "server");
  const std::string url = "http://127.0.0.1:" + std::to_string(webhookd.port());
  std::map<std::string, std::string> ids;
  for (const char* tenant : {"acme", "beta"}) {
    auto res = webhookd.Call(
        "POST", "/v1/destinations",
        {{"url", "http://127.0.0.1:9/" + std::string(tenant)}, {"tenant_id", tenant}});
    ASSERT_EQ(res.status, 201) << res.body;
    ids[tenant] = json::parse(res.body)["id"];
  }
  SendRun one = SendTo(url, webhookd.admin_key(),
                       {"--type", "order.created", "--tenant", "acme", "--data", "{}"});
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(one.lines.size(), 1u) << one.out;
  ASSERT_EQ(one.lines[0]["deliveries"].size(), 1u) << one.out;
  EXPECT_EQ(one.lines[0]["deliveries"][0]["destination_id"], ids["acme"]);
  const std::string batch =
      WriteTemp("tenants.jsonl", R"({"type":"order.created","payload":{},"tenant_id":"beta"})"
                                 "\n");
  SendRun many = SendTo(url, webhookd.admin_key(), {"--batch", batch});
  ASSERT_EQ(many.code, 0) << many.err;
  ASSERT_EQ(many.lines.size(), 1u) << many.out;
  ASSERT_EQ(many.lines[0]["deliveries"].size(), 1u) << many.out;
  EXPECT_EQ(many.lines[0]["deliveries"][0]["destination_id"], ids["beta"]);
  EXPECT_EQ(db.Scalar("SELECT string_agg(tenant_id, ',' ORDER BY id) FROM events"), "acme,beta");
}

}  // namespace
}  // namespace webhookd::cmd::send_e2e_test
