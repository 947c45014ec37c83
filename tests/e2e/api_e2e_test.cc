// The REST API of docs/api.md end to end: the real binary, a real database and a real
// receiver on loopback. Auth, every route's happy path, idempotent replays, 404/405, and
// the SSRF guard on destination URLs.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <thread>
#include <tuple>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::api_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

Json Body(const httplib::Response& res) { return Json::parse(res.body, nullptr, false); }

bool IsRfc3339Utc(const Json& value) {
  static const std::regex kTime(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$)");
  return value.is_string() && std::regex_match(value.get<std::string>(), kTime);
}

// Standard base64 (with padding) to bytes; nullopt when not base64.
std::optional<std::string> Base64Decode(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') {
      if (i + 2 < text.size()) return std::nullopt;
      continue;
    }
    const size_t v = kAlphabet.find(c);
    if (v == std::string::npos) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

// Asserts the RFC 9457 shape and returns the parsed problem.
Json ExpectProblem(const httplib::Response& res, int status) {
  EXPECT_EQ(res.status, status) << res.body;
  EXPECT_EQ(res.get_header_value("Content-Type"), "application/problem+json") << res.body;
  Json problem = Body(res);
  EXPECT_TRUE(problem.is_object()) << res.body;
  if (!problem.is_object()) return Json::object();
  EXPECT_EQ(problem.value("status", 0), status);
  for (const char* field : {"type", "title", "detail"}) {
    EXPECT_TRUE(problem.contains(field) && problem[field].is_string()) << field << " " << res.body;
  }
  return problem;
}

std::unique_ptr<httplib::Client> NoAuthClient(const WebhookdProcess& webhookd) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", webhookd.port());
  client->set_read_timeout(30, 0);
  return client;
}

httplib::Response Unwrap(const httplib::Result& r) { return r ? r.value() : httplib::Response{}; }

// `webhookd keys create --role <role>` against `db`: {key id, key}.
std::pair<std::string, std::string> CreateKey(const TestDatabase& db, const std::string& role) {
  auto [code, out] = WebhookdProcess::RunCommand({"keys", "create", "--role", role, "--name", "t"},
                                                 {{"DATABASE_URL", db.url()}});
  EXPECT_EQ(code, 0) << out;
  std::string text = out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::string key = text.substr(text.rfind('\n') + 1);
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex(R"(key_[0-9]+)"))) << out;
  return {m.str(), key};
}

std::string EventCounts(TestDatabase& db) {
  return db.Scalar(
      "SELECT (SELECT count(*) FROM events) || '/' || (SELECT count(*) FROM delivery_rows) || '/' "
      "|| (SELECT count(*) FROM destinations)");
}

// ---------------------------------------------------------------------------------------
// Auth
// ---------------------------------------------------------------------------------------

TEST(ApiE2eTest, AuthFailuresAre401WithOneBodyAndWrongRoleIs403) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  auto [revoked_id, revoked_key] = CreateKey(db, "publisher");
  auto [publisher_id, publisher_key] = CreateKey(db, "publisher");
  // The revoked key worked before it was revoked.
  ASSERT_EQ(webhookd.Call("GET", "/v1/events", nullptr, revoked_key).status, 200);
  auto [code, out] =
      WebhookdProcess::RunCommand({"keys", "revoke", revoked_id}, {{"DATABASE_URL", db.url()}});
  ASSERT_EQ(code, 0) << out;

  auto client = NoAuthClient(webhookd);
  const std::string before = EventCounts(db);
  struct Attempt {
    std::string name;
    httplib::Headers headers;
  };
  const std::vector<Attempt> attempts = {
      {"missing header", {}},
      {"Basic scheme", {{"Authorization", "Basic YWRtaW46YWRtaW4="}}},
      {"Bearer without a key", {{"Authorization", "Bearer"}}},
      {"Bearer and a space", {{"Authorization", "Bearer "}}},
      {"the key without a scheme", {{"Authorization", webhookd.admin_key()}}},
      {"unknown key", {{"Authorization", "Bearer whk_not_a_key_0123456789abcdef"}}},
      {"admin key with a suffix", {{"Authorization", "Bearer " + webhookd.admin_key() + "x"}}},
      {"revoked key", {{"Authorization", "Bearer " + revoked_key}}},
  };
  std::set<std::string> bodies;
  for (const Attempt& a : attempts) {
    SCOPED_TRACE(a.name);
    auto get = Unwrap(client->Get("/v1/events", a.headers));
    ExpectProblem(get, 401);
    bodies.insert(get.body);
    // A POST with a bad body is refused for auth first, and writes nothing.
    auto post = Unwrap(client->Post("/v1/events", a.headers, "{not json", "application/json"));
    ExpectProblem(post, 401);
    bodies.insert(post.body);
    auto admin = Unwrap(client->Get("/v1/admin/dead-letters", a.headers));
    ExpectProblem(admin, 401);
    bodies.insert(admin.body);
  }
  EXPECT_EQ(bodies.size(), 1u) << "401 bodies differ";
  EXPECT_EQ(EventCounts(db), before);

  // The scheme is case-insensitive (RFC 9110 §11.1).
  for (const std::string scheme : {"bearer ", "BEARER "}) {
    auto r = Unwrap(client->Get("/v1/events", {{"Authorization", scheme + webhookd.admin_key()}}));
    EXPECT_EQ(r.status, 200) << scheme << r.body;
  }

  // Wrong role: 403 on every admin route; the same key is fine elsewhere.
  EXPECT_EQ(webhookd.Call("GET", "/v1/events", nullptr, publisher_key).status, 200);
  ExpectProblem(webhookd.Call("GET", "/v1/admin/dead-letters", nullptr, publisher_key), 403);
  ExpectProblem(webhookd.Call("GET", "/v1/admin/stats", nullptr, publisher_key), 403);
  ExpectProblem(
      webhookd.Call("POST", "/v1/admin/dead-letters/replay", Json::object(), publisher_key), 403);
  ExpectProblem(
      webhookd.Call("POST", "/v1/admin/dead-letters/dlq_1/replay", nullptr, publisher_key), 403);
  // The admin key may use them.
  EXPECT_EQ(webhookd.Call("GET", "/v1/admin/dead-letters").status, 200);
  EXPECT_EQ(webhookd.Call("GET", "/v1/admin/stats").status, 200);
  // Operations routes need no key.
  EXPECT_EQ(Unwrap(client->Get("/healthz")).status, 200);
  EXPECT_EQ(Unwrap(client->Get("/readyz")).status, 200);
}

// Ingest does not look a recently seen key up again (the hot path checks it inside the
// ingest's own transaction), so this proves a revocation still bites on the very next
// request, on every ingest path: grouped, keyed and targeted, valid body or not.
TEST(ApiE2eTest, RevokedKeyIsRefusedAtOnceOnIngest) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  const std::string body = R"({"type": "order.created", "payload": {"id": 1}})";
  auto destination =
      webhookd.Call("POST", "/v1/destinations",
                    {{"url", "http://127.0.0.1:9/hooks"}, {"event_types", Json::array()}});
  ASSERT_EQ(destination.status, 201) << destination.body;
  const std::string destination_id = Json::parse(destination.body)["id"];
  struct Attempt {
    std::string name;
    httplib::Headers headers;
    std::string body;
    std::string key_id, key;
  };
  // One key per path: a refused key is forgotten, so each path needs its own seen key.
  std::vector<Attempt> attempts = {
      {"grouped", {}, body, {}, {}},
      {"keyed", {{"Idempotency-Key", "revoked-1"}}, body, {}, {}},
      {"targeted",
       {},
       R"({"type": "order.created", "payload": {}, "destination_id": ")" + destination_id + R"("})",
       {},
       {}},
      {"invalid body", {}, R"({"type": 7})", {}, {}},
  };
  for (Attempt& a : attempts) {
    std::tie(a.key_id, a.key) = CreateKey(db, "publisher");
    for (int i = 0; i < 2; ++i) {  // seen live, so the next one is deferred
      ASSERT_EQ(Unwrap(webhookd.Client(a.key)->Post("/v1/events", body, "application/json")).status,
                202);
    }
    auto [code, out] =
        WebhookdProcess::RunCommand({"keys", "revoke", a.key_id}, {{"DATABASE_URL", db.url()}});
    ASSERT_EQ(code, 0) << out;
  }

  const std::string before = EventCounts(db);
  const std::string unauthorized =
      Unwrap(NoAuthClient(webhookd)->Post("/v1/events", body, "application/json")).body;
  for (const Attempt& a : attempts) {
    SCOPED_TRACE(a.name);
    auto r =
        Unwrap(webhookd.Client(a.key)->Post("/v1/events", a.headers, a.body, "application/json"));
    ExpectProblem(r, 401);
    EXPECT_EQ(r.body, unauthorized);
  }
  EXPECT_EQ(EventCounts(db), before);
  // Other keys are unaffected.
  EXPECT_EQ(webhookd.Call("POST", "/v1/events", Json::parse(body)).status, 202);
}

// ---------------------------------------------------------------------------------------
// Destinations
// ---------------------------------------------------------------------------------------

TEST(ApiE2eTest, DestinationRoutesHappyPath) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  const Json request = {{"url", "http://127.0.0.1:9/hooks/orders"},
                        {"description", "orders for ACME"},
                        {"event_types", {"order.created", "order.*"}},
                        {"headers", {{"X-Tenant", "acme"}}},
                        {"enabled", true},
                        {"max_in_flight", 7}};
  auto created = webhookd.Call("POST", "/v1/destinations", request);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.get_header_value("Content-Type"), "application/json");
  const Json d = Body(created);
  for (const auto& [field, value] : request.items()) {
    // Header values are write-only: the name with "set".
    EXPECT_EQ(d[field], field == "headers" ? Json({{"X-Tenant", "set"}}) : value) << field;
  }
  ASSERT_TRUE(d["id"].is_string());
  const std::string id = d["id"];
  EXPECT_FALSE(id.empty());
  EXPECT_TRUE(IsRfc3339Utc(d["created_at"])) << d;
  EXPECT_TRUE(IsRfc3339Utc(d["updated_at"])) << d;
  ASSERT_TRUE(d["secret"].is_string());
  const std::string secret = d["secret"];
  ASSERT_TRUE(secret.starts_with("whsec_")) << secret;
  auto raw = Base64Decode(secret.substr(6));
  ASSERT_TRUE(raw.has_value()) << secret;
  EXPECT_EQ(raw->size(), 32u);

  // A second one with its own secret and defaults.
  const std::string given_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  auto second = webhookd.Call("POST", "/v1/destinations",
                              {{"url", "https://127.0.0.1/x"}, {"secret", given_secret}});
  ASSERT_EQ(second.status, 201) << second.body;
  const Json d2 = Body(second);
  EXPECT_EQ(d2["secret"], given_secret);
  EXPECT_EQ(d2["enabled"], true);
  EXPECT_EQ(d2["event_types"], Json::array());
  EXPECT_EQ(d2["headers"], Json::object());
  EXPECT_EQ(d2["description"], "");
  EXPECT_TRUE(d2["max_in_flight"].is_number_integer());
  const std::string id2 = d2["id"];
  EXPECT_NE(id2, id);
  // Two generated secrets differ.
  auto third = webhookd.Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/3"}});
  ASSERT_EQ(third.status, 201);
  const std::string id3 = Body(third)["id"];
  EXPECT_NE(Body(third)["secret"], secret);

  // GET one: every field but the secret.
  auto got = webhookd.Call("GET", "/v1/destinations/" + id);
  ASSERT_EQ(got.status, 200) << got.body;
  Json expected = d;
  expected.erase("secret");
  EXPECT_EQ(Body(got), expected);
  EXPECT_EQ(got.body.find(secret), std::string::npos);

  // GET the list: newest first, no secrets, paged by cursor.
  auto list = webhookd.Call("GET", "/v1/destinations");
  ASSERT_EQ(list.status, 200) << list.body;
  const Json page = Body(list);
  ASSERT_TRUE(page["data"].is_array());
  ASSERT_TRUE(page.contains("next_cursor"));
  EXPECT_TRUE(page["next_cursor"].is_null());
  ASSERT_EQ(page["data"].size(), 3u);
  EXPECT_EQ(page["data"][0]["id"], id3);
  EXPECT_EQ(page["data"][1]["id"], id2);
  EXPECT_EQ(page["data"][2], expected);
  for (const Json& item : page["data"]) EXPECT_FALSE(item.contains("secret")) << item;

  auto first = webhookd.Call("GET", "/v1/destinations?limit=2");
  ASSERT_EQ(first.status, 200);
  const Json p1 = Body(first);
  ASSERT_EQ(p1["data"].size(), 2u);
  EXPECT_EQ(p1["data"][0]["id"], id3);
  ASSERT_TRUE(p1["next_cursor"].is_string()) << p1;
  auto rest = webhookd.Call(
      "GET", "/v1/destinations?limit=2&cursor=" + p1["next_cursor"].get<std::string>());
  ASSERT_EQ(rest.status, 200) << rest.body;
  const Json p2 = Body(rest);
  ASSERT_EQ(p2["data"].size(), 1u) << p2;
  EXPECT_EQ(p2["data"][0]["id"], id);
  EXPECT_TRUE(p2["next_cursor"].is_null());

  // GET /secret.
  auto got_secret = webhookd.Call("GET", "/v1/destinations/" + id + "/secret");
  ASSERT_EQ(got_secret.status, 200) << got_secret.body;
  EXPECT_EQ(Body(got_secret), (Json{{"secret", secret}}));

  // PATCH: a subset changes, the rest stays.
  std::this_thread::sleep_for(5ms);
  auto patched = webhookd.Call("PATCH", "/v1/destinations/" + id,
                               {{"description", "renamed"},
                                {"enabled", false},
                                {"event_types", {"invoice.paid"}},
                                {"max_in_flight", 3}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  const Json p = Body(patched);
  EXPECT_EQ(p["id"], id);
  EXPECT_EQ(p["description"], "renamed");
  EXPECT_EQ(p["enabled"], false);
  EXPECT_EQ(p["event_types"], Json::array({"invoice.paid"}));
  EXPECT_EQ(p["max_in_flight"], 3);
  EXPECT_EQ(p["url"], request["url"]);
  EXPECT_EQ(p["headers"], Json({{"X-Tenant", "set"}}));
  EXPECT_EQ(p["created_at"], d["created_at"]);
  EXPECT_NE(p["updated_at"], d["updated_at"]);
  EXPECT_FALSE(p.contains("secret"));
  EXPECT_EQ(Body(webhookd.Call("GET", "/v1/destinations/" + id)), p);
  // A new URL and secret through PATCH. The URL is another receiver: the header value
  // given for the old one goes with it only when sent again.
  auto patched2 = webhookd.Call("PATCH", "/v1/destinations/" + id,
                                {{"url", "https://127.0.0.1:8443/new"},
                                 {"secret", given_secret},
                                 {"headers", {{"X-Tenant", "acme-new"}}}});
  ASSERT_EQ(patched2.status, 200) << patched2.body;
  EXPECT_EQ(Body(patched2)["url"], "https://127.0.0.1:8443/new");
  EXPECT_EQ(Body(webhookd.Call("GET", "/v1/destinations/" + id + "/secret"))["secret"],
            given_secret);

  // DELETE: 204 without a body, then 404 everywhere.
  auto deleted = webhookd.Call("DELETE", "/v1/destinations/" + id);
  EXPECT_EQ(deleted.status, 204);
  EXPECT_TRUE(deleted.body.empty());
  ExpectProblem(webhookd.Call("GET", "/v1/destinations/" + id), 404);
  ExpectProblem(webhookd.Call("GET", "/v1/destinations/" + id + "/secret"), 404);
  ExpectProblem(webhookd.Call("PATCH", "/v1/destinations/" + id, {{"enabled", true}}), 404);
  ExpectProblem(webhookd.Call("DELETE", "/v1/destinations/" + id), 404);
  auto after = Body(webhookd.Call("GET", "/v1/destinations"));
  ASSERT_EQ(after["data"].size(), 2u);
  for (const Json& item : after["data"]) EXPECT_NE(item["id"], id);
}

// ---------------------------------------------------------------------------------------
// Events, deliveries, attempts
// ---------------------------------------------------------------------------------------

TEST(ApiE2eTest, EventsDeliveriesAndAttemptsHappyPath) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  Receiver receiver;
  auto make = [&](const Json& body) {
    auto r = webhookd.Call("POST", "/v1/destinations", body);
    EXPECT_EQ(r.status, 201) << r.body;
    return Body(r)["id"].get<std::string>();
  };
  const std::string a = make({{"url", receiver.url("/a")},
                              {"event_types", {"order.*"}},
                              {"headers", {{"X-Tenant", "acme"}}}});
  const std::string b = make({{"url", receiver.url("/b")}, {"event_types", {"invoice.paid"}}});
  const std::string disabled = make({{"url", receiver.url("/c")}, {"enabled", false}});

  // POST /v1/events: 202, the receipt's shape, one pending delivery for the one match.
  const Json payload = {{"id", 123}, {"items", {1, 2, 3}}, {"note", "é ✓"}};
  auto posted =
      webhookd.Call("POST", "/v1/events", {{"type", "order.created"}, {"payload", payload}});
  ASSERT_EQ(posted.status, 202) << posted.body;
  EXPECT_EQ(posted.get_header_value("Content-Type"), "application/json");
  EXPECT_FALSE(posted.has_header("Idempotent-Replayed"));
  const Json receipt = Body(posted);
  std::set<std::string> keys;
  for (const auto& [k, v] : receipt.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"id", "type", "created_at", "ordering_key", "deliveries"}))
      << receipt;
  EXPECT_EQ(receipt["ordering_key"], nullptr);
  ASSERT_TRUE(receipt["id"].is_string());
  const std::string event_id = receipt["id"];
  EXPECT_EQ(receipt["type"], "order.created");
  EXPECT_TRUE(IsRfc3339Utc(receipt["created_at"])) << receipt;
  ASSERT_EQ(receipt["deliveries"].size(), 1u) << receipt;
  const Json& rd = receipt["deliveries"][0];
  EXPECT_EQ(rd.size(), 3u) << rd;
  EXPECT_EQ(rd["destination_id"], a);
  EXPECT_EQ(rd["status"], "pending");
  const std::string delivery_id = rd["id"];

  // The worker delivers it.
  ASSERT_TRUE(receiver.WaitFor(1, 10s));
  const Received sent = receiver.requests()[0];
  EXPECT_EQ(sent.path, "/a");
  EXPECT_EQ(sent.header("webhook-id"), event_id);
  EXPECT_EQ(sent.header("X-Tenant"), "acme");
  EXPECT_TRUE(sent.header("webhook-signature").starts_with("v1,"));
  const Json wire = Json::parse(sent.body, nullptr, false);
  EXPECT_EQ(wire["type"], "order.created");
  EXPECT_EQ(wire["data"], payload);

  // GET /v1/deliveries/{id}: succeeded, once recorded.
  Json delivery;
  ASSERT_TRUE(WaitUntil(
      [&] {
        delivery = Body(webhookd.Call("GET", "/v1/deliveries/" + delivery_id));
        return delivery.is_object() && delivery.value("status", "") == "succeeded";
      },
      10s))
      << delivery;
  EXPECT_EQ(delivery["id"], delivery_id);
  EXPECT_EQ(delivery["event_id"], event_id);
  EXPECT_EQ(delivery["destination_id"], a);
  EXPECT_EQ(delivery["attempt_count"], 1);
  EXPECT_EQ(delivery["last_status_code"], 200);
  EXPECT_TRUE(delivery["last_error"].is_null()) << delivery;
  EXPECT_TRUE(IsRfc3339Utc(delivery["last_attempt_at"])) << delivery;
  EXPECT_TRUE(IsRfc3339Utc(delivery["created_at"])) << delivery;
  EXPECT_TRUE(IsRfc3339Utc(delivery["updated_at"])) << delivery;
  EXPECT_TRUE(delivery.contains("next_attempt_at")) << delivery;
  for (const char* field :
       {"id", "event_id", "destination_id", "status", "attempt_count", "next_attempt_at",
        "last_attempt_at", "last_status_code", "last_error", "created_at", "updated_at"}) {
    EXPECT_TRUE(delivery.contains(field)) << field;
  }

  // GET /v1/deliveries/{id}/attempts: one successful attempt.
  auto attempts_res = webhookd.Call("GET", "/v1/deliveries/" + delivery_id + "/attempts");
  ASSERT_EQ(attempts_res.status, 200) << attempts_res.body;
  const Json attempts = Body(attempts_res)["data"];
  ASSERT_EQ(attempts.size(), 1u) << attempts_res.body;
  const Json& attempt = attempts[0];
  EXPECT_EQ(attempt["attempt_number"], 1);
  EXPECT_EQ(attempt["outcome"], "success");
  EXPECT_EQ(attempt["status_code"], 200);
  EXPECT_TRUE(attempt["error"].is_null());
  EXPECT_TRUE(IsRfc3339Utc(attempt["started_at"])) << attempt;
  EXPECT_TRUE(attempt["duration_ms"].is_number() && attempt["duration_ms"].get<double>() >= 0);
  EXPECT_TRUE(attempt["response_body"].is_string());

  // GET /v1/events/{id}: payload and the deliveries in full.
  auto event_res = webhookd.Call("GET", "/v1/events/" + event_id);
  ASSERT_EQ(event_res.status, 200) << event_res.body;
  const Json event = Body(event_res);
  EXPECT_EQ(event["id"], event_id);
  EXPECT_EQ(event["type"], "order.created");
  EXPECT_EQ(event["created_at"], receipt["created_at"]);
  EXPECT_EQ(event["payload"], payload);
  ASSERT_EQ(event["deliveries"].size(), 1u);
  EXPECT_EQ(event["deliveries"][0], delivery);

  // More events: one for b, one matching nobody (stored, no deliveries), and one named
  // for b by destination_id, which ignores b's filter.
  auto invoice =
      webhookd.Call("POST", "/v1/events", {{"type", "invoice.paid"}, {"payload", Json::object()}});
  ASSERT_EQ(invoice.status, 202) << invoice.body;
  ASSERT_EQ(Body(invoice)["deliveries"].size(), 1u);
  EXPECT_EQ(Body(invoice)["deliveries"][0]["destination_id"], b);
  auto nobody =
      webhookd.Call("POST", "/v1/events", {{"type", "misc.thing"}, {"payload", Json::object()}});
  ASSERT_EQ(nobody.status, 202) << nobody.body;
  EXPECT_EQ(Body(nobody)["deliveries"], Json::array());
  const std::string nobody_id = Body(nobody)["id"];
  auto nobody_get = webhookd.Call("GET", "/v1/events/" + nobody_id);
  ASSERT_EQ(nobody_get.status, 200);
  EXPECT_EQ(Body(nobody_get)["deliveries"], Json::array());
  auto targeted =
      webhookd.Call("POST", "/v1/events",
                    {{"type", "misc.thing"}, {"payload", Json::object()}, {"destination_id", b}});
  ASSERT_EQ(targeted.status, 202) << targeted.body;
  ASSERT_EQ(Body(targeted)["deliveries"].size(), 1u);
  EXPECT_EQ(Body(targeted)["deliveries"][0]["destination_id"], b);
  const std::string targeted_id = Body(targeted)["id"];
  // The disabled destination got nothing.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM delivery_rows WHERE destination_id = " +
                      disabled.substr(disabled.find('_') + 1)),
            "0");

  // GET /v1/events: newest first; ?type= filters.
  auto all_events = Body(webhookd.Call("GET", "/v1/events"));
  ASSERT_EQ(all_events["data"].size(), 4u) << all_events;
  EXPECT_EQ(all_events["data"][0]["id"], targeted_id);
  EXPECT_EQ(all_events["data"][3]["id"], event_id);
  EXPECT_TRUE(all_events["next_cursor"].is_null());
  auto by_type = webhookd.Call("GET", "/v1/events?type=order.created");
  ASSERT_EQ(by_type.status, 200) << by_type.body;
  const Json typed = Body(by_type);
  ASSERT_EQ(typed["data"].size(), 1u) << typed;
  EXPECT_EQ(typed["data"][0]["id"], event_id);
  EXPECT_EQ(typed["data"][0]["payload"], payload);
  auto misc = Body(webhookd.Call("GET", "/v1/events?type=misc.thing"));
  ASSERT_EQ(misc["data"].size(), 2u);
  EXPECT_EQ(misc["data"][0]["id"], targeted_id);
  EXPECT_EQ(misc["data"][1]["id"], nobody_id);
  EXPECT_EQ(Body(webhookd.Call("GET", "/v1/events?type=no.such"))["data"], Json::array());
  auto paged = Body(webhookd.Call("GET", "/v1/events?limit=3"));
  ASSERT_EQ(paged["data"].size(), 3u);
  ASSERT_TRUE(paged["next_cursor"].is_string());
  auto paged2 = Body(
      webhookd.Call("GET", "/v1/events?limit=3&cursor=" + paged["next_cursor"].get<std::string>()));
  ASSERT_EQ(paged2["data"].size(), 1u);
  EXPECT_EQ(paged2["data"][0]["id"], event_id);

  // GET /v1/deliveries?destination_id=&status=.
  auto for_a = Body(webhookd.Call("GET", "/v1/deliveries?destination_id=" + a));
  ASSERT_EQ(for_a["data"].size(), 1u) << for_a;
  EXPECT_EQ(for_a["data"][0]["id"], delivery_id);
  auto for_b = Body(webhookd.Call("GET", "/v1/deliveries?destination_id=" + b));
  ASSERT_EQ(for_b["data"].size(), 2u) << for_b;
  for (const Json& item : for_b["data"]) EXPECT_EQ(item["destination_id"], b);
  auto a_succeeded =
      Body(webhookd.Call("GET", "/v1/deliveries?destination_id=" + a + "&status=succeeded"));
  ASSERT_EQ(a_succeeded["data"].size(), 1u) << a_succeeded;
  EXPECT_EQ(a_succeeded["data"][0], delivery);
  auto a_pending =
      Body(webhookd.Call("GET", "/v1/deliveries?destination_id=" + a + "&status=pending"));
  EXPECT_EQ(a_pending["data"], Json::array()) << a_pending;
  // Wait for b's two and check the status filter across destinations.
  ASSERT_TRUE(receiver.WaitFor(3, 10s));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto s = Body(webhookd.Call("GET", "/v1/deliveries?status=succeeded"));
        return s["data"].size() == 3u;
      },
      10s));
  auto all_deliveries = Body(webhookd.Call("GET", "/v1/deliveries"));
  EXPECT_EQ(all_deliveries["data"].size(), 3u);
  EXPECT_EQ(all_deliveries["data"][2]["id"], delivery_id) << "newest first";
  EXPECT_EQ(Body(webhookd.Call("GET", "/v1/deliveries?status=cancelled"))["data"], Json::array());

  // DELETE a destination: its deliveries stay readable.
  EXPECT_EQ(webhookd.Call("DELETE", "/v1/destinations/" + disabled).status, 204);
  EXPECT_EQ(webhookd.Call("GET", "/v1/deliveries/" + delivery_id).status, 200);
}

TEST(ApiE2eTest, IdempotencyKeyReplaysTheFirstAnswer) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/"}}).status,
            201);
  auto client = webhookd.Client();
  const std::string body = R"({"type": "order.created", "payload": {"n": 1}})";
  const httplib::Headers key = {{"Idempotency-Key", "order-1-created"}};

  auto first = Unwrap(client->Post("/v1/events", key, body, "application/json"));
  ASSERT_EQ(first.status, 202) << first.body;
  EXPECT_FALSE(first.has_header("Idempotent-Replayed"));
  ASSERT_EQ(Body(first)["deliveries"].size(), 1u);
  const std::string counts = EventCounts(db);
  EXPECT_EQ(counts, "1/1/1");

  for (int i = 0; i < 2; ++i) {
    auto again = Unwrap(client->Post("/v1/events", key, body, "application/json"));
    EXPECT_EQ(again.status, 202) << again.body;
    EXPECT_EQ(again.body, first.body);
    EXPECT_EQ(again.get_header_value("Idempotent-Replayed"), "true");
  }
  EXPECT_EQ(EventCounts(db), counts) << "a replay created rows";

  // Same key, another body: 422 naming the key, nothing written.
  auto other = Unwrap(client->Post(
      "/v1/events", key, R"({"type": "order.created", "payload": {"n": 2}})", "application/json"));
  const Json problem = ExpectProblem(other, 422);
  ASSERT_TRUE(problem.contains("errors")) << other.body;
  EXPECT_EQ(problem["errors"][0]["field"], "Idempotency-Key");
  EXPECT_FALSE(other.has_header("Idempotent-Replayed"));
  EXPECT_EQ(EventCounts(db), counts);

  // Another key with the same body is a new event; no key at all too.
  auto fresh = Unwrap(client->Post("/v1/events", {{"Idempotency-Key", "order-1-created-b"}}, body,
                                   "application/json"));
  ASSERT_EQ(fresh.status, 202) << fresh.body;
  EXPECT_NE(Body(fresh)["id"], Body(first)["id"]);
  auto keyless = Unwrap(client->Post("/v1/events", body, "application/json"));
  ASSERT_EQ(keyless.status, 202);
  EXPECT_NE(Body(keyless)["id"], Body(fresh)["id"]);
  EXPECT_EQ(EventCounts(db), "3/3/1");
}

// ---------------------------------------------------------------------------------------
// 404 and 405
// ---------------------------------------------------------------------------------------

TEST(ApiE2eTest, UnknownRoutesAndIdsAre404AndWrongMethodsAre405) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  for (const std::string path : {"/v1/nope", "/v1", "/v1/events/evt_1/nope", "/nope",
                                 "/v1/destinations/dst_1/secret/x", "/V1/events"}) {
    SCOPED_TRACE(path);
    ExpectProblem(webhookd.Call("GET", path), 404);
  }
  for (const std::string path :
       {"/v1/events/evt_999999", "/v1/deliveries/dlv_999999", "/v1/deliveries/dlv_999999/attempts",
        "/v1/destinations/dst_999999", "/v1/destinations/dst_999999/secret"}) {
    SCOPED_TRACE(path);
    const Json problem = ExpectProblem(webhookd.Call("GET", path), 404);
    EXPECT_FALSE(problem.contains("errors"));
  }
  ExpectProblem(webhookd.Call("DELETE", "/v1/destinations/dst_999999"), 404);
  ExpectProblem(webhookd.Call("PATCH", "/v1/destinations/dst_999999", {{"enabled", false}}), 404);
  ExpectProblem(webhookd.Call("POST", "/v1/admin/dead-letters/dlq_999999/replay"), 404);

  auto client = webhookd.Client();
  struct Wrong {
    std::string method, path, allow_contains;
  };
  const std::vector<Wrong> wrong = {
      {"PUT", "/v1/events", "POST"},
      {"DELETE", "/v1/events", "GET"},
      {"PATCH", "/v1/events/evt_1", "GET"},
      {"PUT", "/v1/destinations/dst_1", "PATCH"},
      {"POST", "/v1/deliveries", "GET"},
      {"DELETE", "/v1/admin/dead-letters", "GET"},
      {"GET", "/v1/admin/dead-letters/replay", "POST"},
  };
  for (const Wrong& w : wrong) {
    SCOPED_TRACE(w.method + " " + w.path);
    httplib::Result r =
        w.method == "PUT"      ? client->Put(w.path.c_str(), "{}", "application/json")
        : w.method == "DELETE" ? client->Delete(w.path.c_str())
        : w.method == "PATCH"  ? client->Patch(w.path.c_str(), "{}", "application/json")
        : w.method == "POST"   ? client->Post(w.path.c_str(), "{}", "application/json")
                               : client->Get(w.path.c_str());
    const auto res = Unwrap(r);
    ExpectProblem(res, 405);
    EXPECT_NE(res.get_header_value("Allow").find(w.allow_contains), std::string::npos)
        << res.get_header_value("Allow");
  }
  // A method httplib has no handlers for.
  httplib::Request trace;
  trace.method = "TRACE";
  trace.path = "/v1/events";
  trace.headers = {{"Authorization", "Bearer " + webhookd.admin_key()}};
  ExpectProblem(Unwrap(client->send(trace)), 405);
  EXPECT_EQ(EventCounts(db), "0/0/0");
}

// ---------------------------------------------------------------------------------------
// SSRF
// ---------------------------------------------------------------------------------------

TEST(ApiE2eTest, PrivateDestinationsAreRefusedUnlessAllowed) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "false"}});
  for (const std::string url :
       {"http://127.0.0.1/", "http://localhost/", "http://2130706433/", "http://0x7f.1/",
        "http://127.1/", "http://[::1]/", "http://10.0.0.1/", "http://169.254.169.254/",
        "http://0177.0.0.1/", "http://0.0.0.0/", "http://[::ffff:127.0.0.1]/",
        "https://192.168.1.1:8443/x", "http://[fe80::1]/", "http://LOCALHOST./"}) {
    SCOPED_TRACE(url);
    const Json problem =
        ExpectProblem(webhookd.Call("POST", "/v1/destinations", {{"url", url}}), 422);
    ASSERT_TRUE(problem.contains("errors") && !problem["errors"].empty());
    EXPECT_EQ(problem["errors"][0]["field"], "url");
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations"), "0");

  // A public address literal is fine, and cannot be PATCHed to a private one.
  auto ok = webhookd.Call("POST", "/v1/destinations", {{"url", "http://93.184.216.34/hook"}});
  ASSERT_EQ(ok.status, 201) << ok.body;
  const std::string id = Body(ok)["id"];
  const Json problem = ExpectProblem(
      webhookd.Call("PATCH", "/v1/destinations/" + id, {{"url", "http://169.254.169.254/"}}), 422);
  ASSERT_TRUE(problem.contains("errors"));
  EXPECT_EQ(problem["errors"][0]["field"], "url");
  EXPECT_EQ(Body(webhookd.Call("GET", "/v1/destinations/" + id))["url"],
            "http://93.184.216.34/hook");

  // The same private URL is accepted by a process that allows it (the harness default).
  WebhookdProcess permissive(db.url(), "server");
  auto allowed = permissive.Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1/"}});
  EXPECT_EQ(allowed.status, 201) << allowed.body;
}

}  // namespace
}  // namespace webhookd::testing::api_e2e_test
