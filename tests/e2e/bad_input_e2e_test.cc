// A table of malformed and invalid requests against the real binary and database: each
// gets the contract's 4xx as RFC 9457 problem+json, none writes a row, and the process
// keeps answering afterwards (docs/api.md, "Errors").
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::bad_input_e2e_test {
namespace {

using Json = nlohmann::json;

struct RawResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// One HTTP/1.1 request written byte for byte (so bodies and headers can be anything),
// with Connection: close; the response is read to EOF. A body the server refuses early
// (413) stops being sent as soon as the answer is there.
RawResponse RawRequest(int port, const std::string& method, const std::string& target,
                       const std::vector<std::pair<std::string, std::string>>& headers,
                       const std::optional<std::string>& body) {
  RawResponse out;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return out;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string head =
      method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) head += name + ": " + value + "\r\n";
  if (body) head += "Content-Length: " + std::to_string(body->size()) + "\r\n";
  head += "\r\n";
  const auto send_all = [&](std::string_view data) {
    while (!data.empty()) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) return false;  // answered (or closed) early
      const ssize_t n = ::send(fd, data.data(), std::min<size_t>(data.size(), 16384), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  };
  if (send_all(head) && body) send_all(*body);
  std::string response;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t end = response.find("\r\n\r\n");
  if (!response.starts_with("HTTP/1.1 ") || end == std::string::npos) return out;
  out.status = std::stoi(response.substr(9, 3));
  out.body = response.substr(end + 4);
  size_t line = response.find("\r\n") + 2;
  while (line < end) {
    const size_t next = response.find("\r\n", line);
    const std::string header = response.substr(line, next - line);
    const size_t colon = header.find(':');
    std::string name = header.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == "content-type" && colon != std::string::npos) {
      out.content_type = header.substr(colon + 1);
      while (out.content_type.starts_with(' ')) out.content_type.erase(0, 1);
    }
    line = next + 2;
  }
  return out;
}

struct Case {
  std::string name;
  std::string method;
  std::string target;
  std::optional<std::string> body;
  int status;
  std::string field;  // for 422: the field errors[0] names
  std::optional<std::string> content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers = {};
};

std::string Event(const std::string& type_json, const std::string& payload_json) {
  return R"({"type": )" + type_json + R"(, "payload": )" + payload_json + "}";
}

std::string Dest(const std::string& fields) {
  return R"({"url": "http://127.0.0.1:9/hook")" + (fields.empty() ? "" : ", " + fields) + "}";
}

// Everything the API could have written, in one string: counts, and the destinations
// in full (a PATCH changes a row without changing a count).
std::string Fingerprint(TestDatabase& db) {
  return db.Scalar(
      "SELECT (SELECT count(*) FROM events) || '/' || (SELECT count(*) FROM delivery_rows) || '/' "
      "|| (SELECT count(*) FROM destinations) || '/' || (SELECT count(*) FROM idempotency_keys) "
      "|| '/' || (SELECT count(*) FROM attempts) || '/' "
      "|| (SELECT md5(coalesce(string_agg(d::text, '|' ORDER BY id), '')) FROM destinations d) "
      "|| '/' || (SELECT md5(string_agg(t::text, '|' ORDER BY name)) FROM event_types t)");
}

TEST(BadInputE2eTest, EveryMalformedRequestIsA4xxProblemAndWritesNothing) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  // A destination that takes every type: an event that slipped through would make a
  // delivery, and PATCHes below have something to (not) change.
  auto created = webhookd.Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/hook"}});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string dst = Json::parse(created.body)["id"];
  const std::string patch = "/v1/destinations/" + dst;
  // A type with a schema: a payload breaking it must write nothing either.
  auto typed = webhookd.Call(
      "POST", "/v1/event-types",
      {{"name", "typed.event"},
       {"schema", {{"type", "object"}, {"properties", {{"amount", {{"type", "integer"}}}}}}}});
  ASSERT_EQ(typed.status, 201) << typed.body;

  const std::string deep_open(10000, '[');
  const std::string deep_balanced = deep_open + std::string(10000, ']');
  const std::string big(300 * 1024, 'a');
  const std::string nul_description =
      R"({"url": "http://127.0.0.1:9/", "description": "a\u0000b"})";

  const std::vector<Case> cases = {
      // ---- POST /v1/events: syntax ----
      {"truncated JSON", "POST", "/v1/events", R"({"type": "a.b", "payload": {)", 400, ""},
      {"empty body", "POST", "/v1/events", "", 400, ""},
      {"trailing garbage", "POST", "/v1/events", Event(R"("a")", "{}") + " x", 400, ""},
      {"NaN literal", "POST", "/v1/events", Event(R"("a")", R"({"n": NaN})"), 400, ""},
      {"single quotes", "POST", "/v1/events", "{'type': 'a', 'payload': {}}", 400, ""},
      {"invalid UTF-8 bytes", "POST", "/v1/events", Event(R"("a")", "{\"x\": \"\xff\xfe\xc3\"}"),
       400, ""},
      {"lone surrogate escape", "POST", "/v1/events", Event(R"("a")", R"({"x": "\ud800"})"), 400,
       ""},
      {"10000-deep unterminated [[[[", "POST", "/v1/events", deep_open, 400, ""},
      {"10000-deep balanced nesting", "POST", "/v1/events", deep_balanced, 422, "body"},
      {"10000-deep nesting inside payload", "POST", "/v1/events",
       Event(R"("a")", R"({"x": )" + deep_balanced + "}"), 422, "body"},
      {"300 KB string over the 262144 limit", "POST", "/v1/events",
       Event(R"("a")", R"({"x": ")" + big + R"("})"), 413, ""},
      // ---- POST /v1/events: well-formed but invalid ----
      {"whole body an array", "POST", "/v1/events", "[]", 422, "body"},
      {"whole body null", "POST", "/v1/events", "null", 422, "body"},
      {"whole body a string", "POST", "/v1/events", R"("order.created")", 422, "body"},
      {"type a number", "POST", "/v1/events", Event("123", "{}"), 422, "type"},
      {"type missing", "POST", "/v1/events", R"({"payload": {}})", 422, "type"},
      {"type empty", "POST", "/v1/events", Event(R"("")", "{}"), 422, "type"},
      {"type with spaces", "POST", "/v1/events", Event(R"("order created")", "{}"), 422, "type"},
      {"type of 256 chars", "POST", "/v1/events", Event('"' + std::string(256, 't') + '"', "{}"),
       422, "type"},
      {"payload an array", "POST", "/v1/events", Event(R"("a")", "[1, 2]"), 422, "payload"},
      {"payload a string", "POST", "/v1/events", Event(R"("a")", R"("x")"), 422, "payload"},
      {"payload null", "POST", "/v1/events", Event(R"("a")", "null"), 422, "payload"},
      {"payload missing", "POST", "/v1/events", R"({"type": "a"})", 422, "payload"},
      {"destination_id a number", "POST", "/v1/events",
       R"({"type": "a", "payload": {}, "destination_id": 7})", 422, "destination_id"},
      {"destination_id unknown", "POST", "/v1/events",
       R"({"type": "a", "payload": {}, "destination_id": "dst_999999"})", 422, "destination_id"},
      {"Idempotency-Key of 300 chars",
       "POST",
       "/v1/events",
       Event(R"("a")", "{}"),
       422,
       "Idempotency-Key",
       "application/json",
       {{"Idempotency-Key", std::string(300, 'k')}}},
      // ---- POST /v1/events: content type ----
      {"no Content-Type", "POST", "/v1/events", Event(R"("a")", "{}"), 415, "", std::nullopt},
      {"text/plain", "POST", "/v1/events", Event(R"("a")", "{}"), 415, "", "text/plain"},
      {"application/jsonx", "POST", "/v1/events", Event(R"("a")", "{}"), 415, "",
       "application/jsonx"},
      // No body and no Content-Length (curl -X POST): a bodiless request, answered at once.
      {"POST without a body or a length", "POST", "/v1/events", std::nullopt, 400, ""},
      {"POST without a body, a length or a type", "POST", "/v1/events", std::nullopt, 415, "",
       std::nullopt},
      {"PUT without a body", "PUT", "/v1/events", std::nullopt, 405, ""},
      // ---- POST /v1/destinations ----
      {"destination truncated JSON", "POST", "/v1/destinations", R"({"url": "http://x)", 400, ""},
      {"destination body an array", "POST", "/v1/destinations", R"(["http://x/"])", 422, "body"},
      {"destination body null", "POST", "/v1/destinations", "null", 422, "body"},
      {"url missing", "POST", "/v1/destinations", R"({"description": "d"})", 422, "url"},
      {"url a number", "POST", "/v1/destinations", R"({"url": 42})", 422, "url"},
      {"url ftp://x", "POST", "/v1/destinations", R"({"url": "ftp://x/"})", 422, "url"},
      {"url without host", "POST", "/v1/destinations", R"({"url": "http:///hook"})", 422, "url"},
      {"url relative", "POST", "/v1/destinations", R"({"url": "/hook"})", 422, "url"},
      {"url with user-info", "POST", "/v1/destinations", R"({"url": "http://u:p@127.0.0.1/"})", 422,
       "url"},
      {"url of 3000 chars", "POST", "/v1/destinations",
       R"({"url": "http://127.0.0.1/)" + std::string(3000, 'p') + R"("})", 422, "url"},
      {"url port 0", "POST", "/v1/destinations", R"({"url": "http://127.0.0.1:0/"})", 422, "url"},
      {"event_types a string", "POST", "/v1/destinations", Dest(R"("event_types": "order.a")"), 422,
       "event_types"},
      {"event_types holding a number", "POST", "/v1/destinations", Dest(R"("event_types": [1])"),
       422, "event_types[0]"},
      {"event_types with a space", "POST", "/v1/destinations",
       Dest(R"("event_types": ["ok", "not ok"])"), 422, "event_types[1]"},
      {"headers an array", "POST", "/v1/destinations", Dest(R"("headers": ["X-A: b"])"), 422,
       "headers"},
      {"header value a number", "POST", "/v1/destinations", Dest(R"("headers": {"X-Tenant": 5})"),
       422, "headers.X-Tenant"},
      {"header value with CR LF", "POST", "/v1/destinations",
       Dest(R"("headers": {"X-Tenant": "a\r\nX-Evil: 1"})"), 422, "headers.X-Tenant"},
      {"reserved header webhook-id", "POST", "/v1/destinations",
       Dest(R"("headers": {"webhook-id": "x"})"), 422, "headers.webhook-id"},
      {"reserved header Content-Type", "POST", "/v1/destinations",
       Dest(R"("headers": {"Content-Type": "text/plain"})"), 422, "headers.Content-Type"},
      {"reserved header Host", "POST", "/v1/destinations", Dest(R"("headers": {"Host": "evil"})"),
       422, "headers.Host"},
      {"header name not a token", "POST", "/v1/destinations", Dest(R"("headers": {"X Bad": "v"})"),
       422, "headers"},
      {"enabled \"yes\"", "POST", "/v1/destinations", Dest(R"("enabled": "yes")"), 422, "enabled"},
      {"ordering lifo", "POST", "/v1/destinations", Dest(R"("ordering": "lifo")"), 422, "ordering"},
      {"on_dead_letter drop", "POST", "/v1/destinations", Dest(R"("on_dead_letter": "drop")"), 422,
       "on_dead_letter"},
      {"ordering_key empty", "POST", "/v1/events",
       R"({"type": "a.b", "payload": {}, "ordering_key": ""})", 422, "ordering_key"},
      {"ordering_key with a newline", "POST", "/v1/events",
       R"({"type": "a.b", "payload": {}, "ordering_key": "a\nb"})", 422, "ordering_key"},
      {"ordering_key a number", "POST", "/v1/events",
       R"({"type": "a.b", "payload": {}, "ordering_key": 5})", 422, "ordering_key"},
      {"ordering_key of 256 chars", "POST", "/v1/events",
       R"({"type": "a.b", "payload": {}, "ordering_key": ")" + std::string(256, 'k') + R"("})", 422,
       "ordering_key"},
      {"max_in_flight 0", "POST", "/v1/destinations", Dest(R"("max_in_flight": 0)"), 422,
       "max_in_flight"},
      {"max_in_flight -1", "POST", "/v1/destinations", Dest(R"("max_in_flight": -1)"), 422,
       "max_in_flight"},
      {"max_in_flight 1.5", "POST", "/v1/destinations", Dest(R"("max_in_flight": 1.5)"), 422,
       "max_in_flight"},
      {"max_in_flight \"3\"", "POST", "/v1/destinations", Dest(R"("max_in_flight": "3")"), 422,
       "max_in_flight"},
      {"max_in_flight 2^64", "POST", "/v1/destinations",
       Dest(R"("max_in_flight": 18446744073709551616)"), 422, "max_in_flight"},
      {"rate_limit 0", "POST", "/v1/destinations", Dest(R"("rate_limit": 0)"), 422, "rate_limit"},
      {"rate_limit 100001", "POST", "/v1/destinations", Dest(R"("rate_limit": 100001)"), 422,
       "rate_limit"},
      {"rate_limit 2.5", "POST", "/v1/destinations", Dest(R"("rate_limit": 2.5)"), 422,
       "rate_limit"},
      {"rate_limit \"50\"", "POST", "/v1/destinations", Dest(R"("rate_limit": "50")"), 422,
       "rate_limit"},
      {"secret not whsec_", "POST", "/v1/destinations",
       Dest(R"("secret": "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")"), 422, "secret"},
      {"secret too short", "POST", "/v1/destinations", Dest(R"("secret": "whsec_c2hvcnQ=")"), 422,
       "secret"},
      {"secret not base64", "POST", "/v1/destinations", Dest(R"("secret": "whsec_!!!!")"), 422,
       "secret"},
      {"description a number", "POST", "/v1/destinations", Dest(R"("description": 5)"), 422,
       "description"},
      {"description of 2000 bytes", "POST", "/v1/destinations",
       Dest(R"("description": ")" + std::string(2000, 'd') + "\""), 422, "description"},
      {"description holding NUL", "POST", "/v1/destinations", nul_description, 422, "description"},
      {"destination text/plain", "POST", "/v1/destinations", Dest(""), 415, "", "text/plain"},
      // ---- PATCH /v1/destinations/{id} ----
      {"patch truncated", "PATCH", patch, R"({"enabled": tr)", 400, ""},
      {"patch body an array", "PATCH", patch, "[]", 422, "body"},
      {"patch enabled \"yes\"", "PATCH", patch, R"({"enabled": "yes"})", 422, "enabled"},
      {"patch url null", "PATCH", patch, R"({"url": null})", 422, "url"},
      {"patch rate_limit -5", "PATCH", patch, R"({"rate_limit": -5})", 422, "rate_limit"},
      {"patch url ftp", "PATCH", patch, R"({"url": "ftp://x/"})", 422, "url"},
      {"patch max_in_flight 1.5", "PATCH", patch, R"({"max_in_flight": 1.5})", 422,
       "max_in_flight"},
      {"patch reserved header", "PATCH", patch, R"({"headers": {"User-Agent": "x"}})", 422,
       "headers.User-Agent"},
      {"patch description NUL", "PATCH", patch, R"({"description": "x\u0000y"})", 422,
       "description"},
      {"patch unknown id", "PATCH", "/v1/destinations/dst_999999", R"({"enabled": false})", 404,
       ""},
      {"patch bad id", "PATCH", "/v1/destinations/abc", R"({"enabled": false})", 404, ""},
      {"patch ordering 1", "PATCH", patch, R"({"ordering": 1})", 422, "ordering"},
      {"dismiss unknown dead letter", "POST", "/v1/admin/dead-letters/dlq_999999/dismiss",
       std::nullopt, 404, ""},
      {"dismiss bad id", "POST", "/v1/admin/dead-letters/dlv_1/dismiss", std::nullopt, 404, ""},
      // ---- the event catalog, schemas and filters ----
      {"event breaking its type's schema", "POST", "/v1/events",
       Event(R"("typed.event")", R"({"amount": "12"})"), 422, "/payload/amount"},
      {"type without a name", "POST", "/v1/event-types", R"({"description": "x"})", 422, "name"},
      {"type name with a space", "POST", "/v1/event-types", R"({"name": "a b"})", 422, "name"},
      {"type name a pattern", "POST", "/v1/event-types", R"({"name": "order.*"})", 422, "name"},
      {"type name reserved", "POST", "/v1/event-types", R"({"name": "webhookd.x"})", 422, "name"},
      {"type name taken", "POST", "/v1/event-types", R"({"name": "typed.event"})", 409, ""},
      {"type schema a string", "POST", "/v1/event-types", R"({"name": "t.a", "schema": "s"})", 422,
       "/schema"},
      {"type schema bad keyword value", "POST", "/v1/event-types",
       R"({"name": "t.a", "schema": {"properties": {"n": {"minimum": "0"}}}})", 422,
       "/schema/properties/n/minimum"},
      {"type examples not an array", "POST", "/v1/event-types",
       R"({"name": "t.a", "examples": {}})", 422, "examples"},
      {"type example not an object", "POST", "/v1/event-types",
       R"({"name": "t.a", "examples": [1]})", 422, "/examples/0"},
      {"type example breaking the schema", "POST", "/v1/event-types",
       R"({"name": "t.a", "schema": {"required": ["id"]}, "examples": [{}]})", 422,
       "/examples/0/id"},
      {"type deprecated a string", "POST", "/v1/event-types",
       R"({"name": "t.a", "deprecated": "yes"})", 422, "deprecated"},
      {"type description NUL", "POST", "/v1/event-types",
       R"({"name": "t.a", "description": "a\u0000"})", 422, "description"},
      {"type body truncated", "POST", "/v1/event-types", R"({"name": )", 400, ""},
      {"type body an array", "POST", "/v1/event-types", "[]", 422, "body"},
      {"patch type's name", "PATCH", "/v1/event-types/typed.event", R"({"name": "x.y"})", 422,
       "name"},
      {"patch type schema refusing nothing valid", "PATCH", "/v1/event-types/typed.event",
       R"({"schema": {"type": "objekt"}})", 422, "/schema/type"},
      {"patch unknown type", "PATCH", "/v1/event-types/no.such", R"({"deprecated": true})", 404,
       ""},
      {"patch a builtin type", "PATCH", "/v1/event-types/webhookd.destination.disabled",
       R"({"deprecated": true})", 403, ""},
      {"delete a builtin type", "DELETE", "/v1/event-types/webhookd.delivery.dead_lettered",
       std::nullopt, 403, ""},
      {"type list limit 0", "GET", "/v1/event-types?limit=0", std::nullopt, 422, "limit"},
      {"type list cursor with a space", "GET", "/v1/event-types?cursor=a%20b", std::nullopt, 422,
       "cursor"},
      {"destination filter not a predicate", "POST", "/v1/destinations",
       Dest(R"("filter": "$.amount")"), 422, "filter"},
      {"destination filter a number", "POST", "/v1/destinations", Dest(R"("filter": 5)"), 422,
       "filter"},
      {"destination filter with a variable", "POST", "/v1/destinations",
       Dest(R"("filter": "$.a > $max")"), 422, "filter"},
      {"destination filter over 4096 bytes", "POST", "/v1/destinations",
       Dest(R"("filter": "$.a == \")" + std::string(4100, 'x') + R"(\"")"), 422, "filter"},
      {"patch filter bad syntax", "PATCH", patch, R"({"filter": "$.a >"})", 422, "filter"},
      {"tls a string", "POST", "/v1/destinations", Dest(R"("tls": "pem")"), 422, "tls"},
      {"tls unknown setting", "POST", "/v1/destinations", Dest(R"("tls": {"password": "x"})"), 422,
       "tls.password"},
      {"tls certificate not PEM", "POST", "/v1/destinations",
       Dest(R"("tls": {"client_certificate": "x", "client_key": "y"})"), 422,
       "tls.client_certificate"},
      {"tls key without certificate", "POST", "/v1/destinations",
       Dest(R"("tls": {"client_key": "y"})"), 422, "tls.client_certificate"},
      {"tls ca not PEM", "POST", "/v1/destinations", Dest(R"("tls": {"ca_certificate": "z"})"), 422,
       "tls.ca_certificate"},
      {"tls certificate a number", "POST", "/v1/destinations",
       Dest(R"("tls": {"client_certificate": 5})"), 422, "tls.client_certificate"},
      {"auth a string", "POST", "/v1/destinations", Dest(R"("auth": "basic")"), 422, "auth"},
      {"auth type unknown", "POST", "/v1/destinations",
       Dest(R"("auth": {"type": "password", "token_url": "https://a.example/t",)"
            R"( "client_id": "i", "client_secret": "s"})"),
       422, "auth.type"},
      {"auth without client_secret", "POST", "/v1/destinations",
       Dest(R"("auth": {"type": "oauth2_client_credentials", "token_url": "https://a.example/t",)"
            R"( "client_id": "i"})"),
       422, "auth.client_secret"},
      {"auth token_url not http", "POST", "/v1/destinations",
       Dest(R"("auth": {"type": "oauth2_client_credentials", "token_url": "file:///etc/x",)"
            R"( "client_id": "i", "client_secret": "s"})"),
       422, "auth.token_url"},
      {"auth client_id with a line break", "POST", "/v1/destinations",
       Dest(R"("auth": {"type": "oauth2_client_credentials", "token_url": "https://a.example/t",)"
            R"( "client_id": "i\nj", "client_secret": "s"})"),
       422, "auth.client_id"},
      {"patch auth secret set without a stored one", "PATCH", patch,
       R"({"auth": {"type": "oauth2_client_credentials", "token_url": "https://a.example/t",)"
       R"( "client_id": "i", "client_secret": "set"}})",
       422, "auth.client_secret"},
      {"patch tls key set without a stored one", "PATCH", patch,
       R"({"tls": {"client_certificate": "x", "client_key": "set"}})", 422, "tls.client_key"},
      {"filter test without a filter", "POST", "/v1/filters/test", R"({"payload": {}})", 422,
       "filter"},
      {"filter test filter a number", "POST", "/v1/filters/test", R"({"filter": 1, "payload": {}})",
       422, "filter"},
      {"filter test bad filter", "POST", "/v1/filters/test",
       R"({"filter": "$.a ==", "payload": {}})", 422, "filter"},
      {"filter test payload an array", "POST", "/v1/filters/test",
       R"({"filter": "$.a == 1", "payload": [1]})", 422, "payload"},
      {"filter test without a payload", "POST", "/v1/filters/test", R"({"filter": "$.a == 1"})",
       422, "payload"},
      {"filter test truncated", "POST", "/v1/filters/test", R"({"filter": )", 400, ""},
      // ---- lists ----
      {"cursor zzz", "GET", "/v1/events?cursor=zzz", std::nullopt, 422, "cursor"},
      {"attempts cursor not a number", "GET", "/v1/deliveries/dlv_1/attempts?cursor=dlv_1",
       std::nullopt, 422, "cursor"},
      {"attempts limit 0", "GET", "/v1/deliveries/dlv_1/attempts?limit=0", std::nullopt, 422,
       "limit"},
      {"cursor of another kind", "GET", "/v1/destinations?cursor=evt_1", std::nullopt, 422,
       "cursor"},
      {"cursor overflowing int64", "GET", "/v1/deliveries?cursor=dlv_99999999999999999999",
       std::nullopt, 422, "cursor"},
      {"limit=0", "GET", "/v1/events?limit=0", std::nullopt, 422, "limit"},
      {"limit=1001", "GET", "/v1/events?limit=1001", std::nullopt, 422, "limit"},
      {"limit=abc", "GET", "/v1/destinations?limit=abc", std::nullopt, 422, "limit"},
      {"limit=-1", "GET", "/v1/deliveries?limit=-1", std::nullopt, 422, "limit"},
      {"limit=1.5", "GET", "/v1/events?limit=1.5", std::nullopt, 422, "limit"},
      {"type filter with a space", "GET", "/v1/events?type=a%20b", std::nullopt, 422, "type"},
      {"after not a time", "GET", "/v1/events?after=yesterday", std::nullopt, 422, "after"},
      {"status filter unknown", "GET", "/v1/deliveries?status=done", std::nullopt, 422, "status"},
      {"destination_id filter bad", "GET", "/v1/deliveries?destination_id=7", std::nullopt, 422,
       "destination_id"},
      {"stats window banana", "GET", "/v1/admin/stats?window=banana", std::nullopt, 422, "window"},
      {"dead letters since bad", "GET", "/v1/admin/dead-letters?since=2026-13-45T00:00:00Z",
       std::nullopt, 422, "since"},
      // ---- ids in paths ----
      {"event id 123", "GET", "/v1/events/123", std::nullopt, 404, ""},
      {"event id evt_abc", "GET", "/v1/events/evt_abc", std::nullopt, 404, ""},
      {"event id evt_0", "GET", "/v1/events/evt_0", std::nullopt, 404, ""},
      {"event id evt_-1", "GET", "/v1/events/evt_-1", std::nullopt, 404, ""},
      {"event id overflowing", "GET", "/v1/events/evt_99999999999999999999", std::nullopt, 404, ""},
      {"event id of another kind", "GET", "/v1/events/" + dst, std::nullopt, 404, ""},
      {"delivery id bad", "GET", "/v1/deliveries/dlv_x", std::nullopt, 404, ""},
      {"attempts of a bad delivery id", "GET", "/v1/deliveries/zzz/attempts", std::nullopt, 404,
       ""},
      {"secret of a bad id", "GET", "/v1/destinations/dst_01/secret", std::nullopt, 404, ""},
      {"delete a bad id", "DELETE", "/v1/destinations/dst_", std::nullopt, 404, ""},
      {"replay a bad dead letter id", "POST", "/v1/admin/dead-letters/dlq_x/replay", std::nullopt,
       404, ""},
      // ---- bulk replay body ----
      {"bulk replay body an array", "POST", "/v1/admin/dead-letters/replay", "[1]", 422, "body"},
      {"bulk replay reason bogus", "POST", "/v1/admin/dead-letters/replay",
       R"({"reason": "bogus"})", 422, "reason"},
      {"bulk replay since a number", "POST", "/v1/admin/dead-letters/replay", R"({"since": 5})",
       422, "since"},
      {"bulk replay truncated", "POST", "/v1/admin/dead-letters/replay", R"({"reason": )", 400, ""},
      // Replaying every dead letter there is must be asked for with "all": true.
      {"bulk replay {}", "POST", "/v1/admin/dead-letters/replay", "{}", 422, "all"},
      {"bulk replay all false", "POST", "/v1/admin/dead-letters/replay", R"({"all": false})", 422,
       "all"},
      {"bulk replay without a body", "POST", "/v1/admin/dead-letters/replay", "", 422, "all"},
      // ---- a member no route knows: 422 naming it, never ignored ----
      {"destination with event_type and filtr", "POST", "/v1/destinations",
       Dest(R"("event_type": ["a.b"], "filtr": "$.a == 1")"), 422, "event_type"},
      {"patch with a misspelt member beside a good one", "PATCH", patch,
       R"({"description": "changed", "enabeld": false})", 422, "enabeld"},
      {"patch with an unknown tls member", "PATCH", patch, R"({"tls": {"client_cert": "x"}})", 422,
       "tls.client_cert"},
      {"event with tenant for tenant_id", "POST", "/v1/events",
       R"({"type": "a", "payload": {}, "tenant": "acme"})", 422, "tenant"},
      {"rotate with grace for grace_period", "POST", patch + "/secret/rotate", R"({"grace": "1h"})",
       422, "grace"},
      {"event type with shema", "POST", "/v1/event-types",
       R"({"name": "new.type", "shema": {"type": "object"}})", 422, "shema"},
      {"event type patch with deprecatd", "PATCH", "/v1/event-types/typed.event",
       R"({"description": "changed", "deprecatd": true})", 422, "deprecatd"},
      {"filter test with data for payload", "POST", "/v1/filters/test",
       R"({"filter": "$.a == 1", "data": {}})", 422, "data"},
      {"portal link with tll", "POST", "/v1/admin/tenants/acme/portal-links", R"({"tll": "1h"})",
       422, "tll"},
      {"bulk replay with destination", "POST", "/v1/admin/dead-letters/replay",
       R"({"destination": ")" + dst + R"(", "all": true})", 422, "destination"},
      {"dismiss with a body", "POST", "/v1/admin/dead-letters/dlq_1/dismiss",
       R"({"reason": "done"})", 422, "reason"},
  };
  ASSERT_GE(cases.size(), 30u);

  const std::string auth = "Bearer " + webhookd.admin_key();
  const std::string log_before = ReadFile(webhookd.log_path());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + " (" + c.method + " " + c.target.substr(0, 80) + ")");
    const std::string before = Fingerprint(db);
    std::vector<std::pair<std::string, std::string>> headers = {{"Authorization", auth}};
    if (c.content_type) headers.emplace_back("Content-Type", *c.content_type);
    for (const auto& h : c.headers) headers.push_back(h);
    const RawResponse res = RawRequest(webhookd.port(), c.method, c.target, headers, c.body);

    EXPECT_EQ(res.status, c.status) << res.body.substr(0, 500);
    EXPECT_GE(res.status, 400);
    EXPECT_LT(res.status, 500);
    EXPECT_EQ(res.content_type, "application/problem+json");
    const Json problem = Json::parse(res.body, nullptr, false);
    ASSERT_TRUE(problem.is_object()) << res.body.substr(0, 500);
    EXPECT_TRUE(problem.contains("type") && problem["type"].is_string());
    EXPECT_TRUE(problem.contains("title") && problem["title"].is_string());
    EXPECT_TRUE(problem.contains("detail") && problem["detail"].is_string());
    EXPECT_EQ(problem.value("status", 0), res.status);
    if (c.status == 422) {
      ASSERT_TRUE(problem.contains("errors") && problem["errors"].is_array() &&
                  !problem["errors"].empty())
          << res.body;
      EXPECT_EQ(problem["errors"][0].value("field", ""), c.field) << res.body;
      EXPECT_TRUE(problem["errors"][0].contains("message") &&
                  problem["errors"][0]["message"].is_string());
    }
    EXPECT_EQ(Fingerprint(db), before) << "the request wrote to the database";
  }

  // A payload value of the wrong type hears what its schema expected and what came.
  auto mistyped = webhookd.Call("POST", "/v1/events",
                                {{"type", "typed.event"}, {"payload", {{"amount", "9.99"}}}});
  ASSERT_EQ(mistyped.status, 422) << mistyped.body;
  EXPECT_EQ(
      Json::parse(mistyped.body)["errors"],
      Json::parse(R"([{"field": "/payload/amount", "message": "expected integer, got string"}])"));

  // Nothing crashed, nothing was logged as a server-side failure.
  EXPECT_TRUE(webhookd.process().Running());
  EXPECT_EQ(RawRequest(webhookd.port(), "GET", "/healthz", {}, std::nullopt).status, 200);
  const std::string log = ReadFile(webhookd.log_path()).substr(log_before.size());
  EXPECT_EQ(log.find(R"("level":"error")"), std::string::npos) << log.substr(0, 2000);
  // The destination is untouched and still served.
  auto got = webhookd.Call("GET", patch);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(Json::parse(got.body)["description"], "");
  EXPECT_EQ(Json::parse(got.body)["enabled"], true);
}

TEST(BadInputE2eTest, ADestinationAsGetShowsItCanBePatchedBackUnchanged) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  auto created =
      webhookd.Call("POST", "/v1/destinations",
                    Json::parse(R"({"url": "http://127.0.0.1:9/hook", "description": "orders",
                      "event_types": ["order.*"], "filter": "$.total > 10",
                      "headers": {"X-Team": "payments"}, "rate_limit": 5, "ordering": "fifo",
                      "tenant_id": "acme", "auth": {"type": "oauth2_client_credentials",
                      "token_url": "http://127.0.0.1:9/token", "client_id": "c",
                      "client_secret": "s", "scope": "w"}})"));
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string path = "/v1/destinations/" + Json::parse(created.body)["id"].get<std::string>();
  auto got = webhookd.Call("GET", path);
  ASSERT_EQ(got.status, 200) << got.body;
  Json view = Json::parse(got.body);
  const std::string stored_before = db.Scalar("SELECT headers::text FROM destinations");

  // Every member of the view goes back, the read-only ones (id, health, created_at, ...)
  // included: accepted and ignored.
  auto patched = webhookd.Call("PATCH", path, view);
  ASSERT_EQ(patched.status, 200) << patched.body;
  Json after = Json::parse(patched.body);
  for (Json* j : {&view, &after}) j->erase("updated_at");
  EXPECT_EQ(after, view);
  EXPECT_EQ(db.Scalar("SELECT headers::text FROM destinations"), stored_before);

  // The same view with one member more is refused whole.
  view["filtr"] = "$.total > 99";
  view["description"] = "changed";
  auto refused = webhookd.Call("PATCH", path, view);
  ASSERT_EQ(refused.status, 422) << refused.body;
  EXPECT_EQ(Json::parse(refused.body)["errors"][0]["field"], "filtr");
  EXPECT_EQ(Json::parse(webhookd.Call("GET", path).body)["description"], "orders");

  // An event type, likewise: its view, name and read-only members included, goes back.
  auto type = webhookd.Call("POST", "/v1/event-types",
                            Json::parse(R"({"name": "order.paid", "description": "paid",
                      "schema": {"type": "object", "properties": {"total": {"type": "number"}}},
                      "examples": [{"total": 9.99}]})"));
  ASSERT_EQ(type.status, 201) << type.body;
  Json type_view = Json::parse(webhookd.Call("GET", "/v1/event-types/order.paid").body);
  auto type_patched = webhookd.Call("PATCH", "/v1/event-types/order.paid", type_view);
  ASSERT_EQ(type_patched.status, 200) << type_patched.body;
  Json type_after = Json::parse(type_patched.body);
  for (Json* j : {&type_view, &type_after}) j->erase("updated_at");
  EXPECT_EQ(type_after, type_view);

  // A bulk replay of everything says so.
  auto all = webhookd.Call("POST", "/v1/admin/dead-letters/replay", {{"all", true}});
  EXPECT_EQ(all.status, 202) << all.body;
}

TEST(BadInputE2eTest, AValidBodyAtTheSizeLimitIsAcceptedAndOneByteOverIsNot) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_MAX_PAYLOAD_BYTES", "2048"}});
  const std::string auth = "Bearer " + webhookd.admin_key();
  const auto event_of_size = [](size_t size) {
    const std::string shell = Event(R"("a")", R"({"x": ""})");
    std::string body = shell;
    body.insert(shell.size() - 3, std::string(size - shell.size(), 'p'));
    return body;
  };
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"Authorization", auth}, {"Content-Type", "application/json"}};
  auto at = RawRequest(webhookd.port(), "POST", "/v1/events", headers, event_of_size(2048));
  EXPECT_EQ(at.status, 202) << at.body;
  const std::string before = Fingerprint(db);
  auto over = RawRequest(webhookd.port(), "POST", "/v1/events", headers, event_of_size(2049));
  EXPECT_EQ(over.status, 413) << over.body;
  EXPECT_EQ(over.content_type, "application/problem+json");
  EXPECT_EQ(Json::parse(over.body, nullptr, false).value("status", 0), 413);
  EXPECT_EQ(Fingerprint(db), before);
  EXPECT_EQ(RawRequest(webhookd.port(), "GET", "/healthz", {}, std::nullopt).status, 200);
}

}  // namespace
}  // namespace webhookd::testing::bad_input_e2e_test
