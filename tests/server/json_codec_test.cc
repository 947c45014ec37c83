#include "server/json_codec.h"

#include <gtest/gtest.h>

#include <chrono>

#include "core/signing.h"
#include "core/validation.h"
#include "server/admin_codec.h"
#include "server/dead_letter_codec.h"
#include "server/destination_codec.h"
#include "server/erasure_codec.h"
#include "server/event_codec.h"
#include "server/event_type_codec.h"

namespace webhookd::json_codec_test {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> Fields(const Error& e) {
  std::vector<std::string> out;
  for (const auto& f : e.fields) out.push_back(f.field);
  return out;
}

TEST(JsonCodecTest, ABodyIsJsonOfBoundedDepth) {
  EXPECT_TRUE(ParseJsonBody(R"({"a": [1, 2]})"));
  EXPECT_EQ(ParseJsonBody("{").error().kind, ErrorKind::kMalformed);
  EXPECT_EQ(ParseJsonBody("\xff").error().kind, ErrorKind::kMalformed);
  EXPECT_EQ(ParseJsonBody(std::string(65, '[') + std::string(65, ']')).error().kind,
            ErrorKind::kInvalid);
}

TEST(JsonCodecTest, ARotationBodyIsOptionalAndEachFieldChecked) {
  auto none = ParseSecretRotation("", 24h);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->secret, std::nullopt);
  EXPECT_EQ(none->grace, Duration(24h));

  const std::string secret = GenerateSecret();
  auto given = ParseSecretRotation(R"({"secret": ")" + secret + R"(", "grace_period": "0"})", 24h);
  ASSERT_TRUE(given);
  EXPECT_EQ(given->secret, secret);
  EXPECT_EQ(given->grace, Duration::zero());
  EXPECT_EQ(ParseSecretRotation(R"({"grace_period": "7d"})", 24h)->grace, Duration(168h));

  auto bad = ParseSecretRotation(R"({"secret": "nope", "grace_period": "8d"})", 24h);
  ASSERT_FALSE(bad);
  EXPECT_EQ(Fields(bad.error()), (std::vector<std::string>{"secret", "grace_period"}));
  EXPECT_EQ(Fields(ParseSecretRotation(R"({"grace_period": 5})", 24h).error()),
            (std::vector<std::string>{"grace_period"}));
  EXPECT_EQ(Fields(ParseSecretRotation("[]", 24h).error()), (std::vector<std::string>{"body"}));
  EXPECT_EQ(ParseSecretRotation("{", 24h).error().kind, ErrorKind::kMalformed);
}

TEST(JsonCodecTest, APortalLinkTtlIsAboveZeroAndAtMostSevenDays) {
  EXPECT_EQ(ParsePortalLinkTtl("", 1h).value(), Duration(1h));
  EXPECT_EQ(ParsePortalLinkTtl(R"({"ttl": null})", 1h).value(), Duration(1h));
  EXPECT_EQ(ParsePortalLinkTtl(R"({"ttl": "30m"})", 1h).value(), Duration(30min));
  EXPECT_EQ(ParsePortalLinkTtl(R"({"ttl": "7d"})", 1h).value(), Duration(168h));
  for (const char* bad :
       {R"({"ttl": "0"})", R"({"ttl": "8d"})", R"({"ttl": 60})", R"({"ttl": "soon"})"}) {
    auto r = ParsePortalLinkTtl(bad, 1h);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(Fields(r.error()), (std::vector<std::string>{"ttl"})) << bad;
  }
}

TEST(JsonCodecTest, AReplayFilterBodyIsTheListsQueryInJson) {
  auto q = ParseReplayFilterBody(R"({"destination_id": "dst_1", "reason": "exhausted",
                                     "since": null})");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->size(), 2u);
  EXPECT_EQ(q->find("destination_id")->second, "dst_1");
  EXPECT_EQ(q->find("reason")->second, "exhausted");
  EXPECT_TRUE(ParseReplayFilterBody(R"({"all": true})")->empty());
  EXPECT_EQ(Fields(ParseReplayFilterBody(R"({"until": 5, "tenant_id": true})").error()),
            (std::vector<std::string>{"until", "tenant_id"}));
}

TEST(JsonCodecTest, AReplayOfEveryDeadLetterMustSaySo) {
  for (const char* body : {"", "{}", R"({"all": false})", R"({"all": null, "since": null})"}) {
    auto r = ParseReplayFilterBody(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalid) << body;
    EXPECT_EQ(Fields(r.error()), (std::vector<std::string>{"all"})) << body;
  }
  EXPECT_EQ(Fields(ParseReplayFilterBody(R"({"all": "yes"})").error()),
            (std::vector<std::string>{"all"}));
  for (const char* body :
       {R"({"all": true})", R"({"since": "2026-01-01T00:00:00Z"})",
        R"({"until": "2026-01-01T00:00:00Z", "all": false})", R"({"reason": "exhausted"})",
        R"({"tenant_id": "acme"})", R"({"destination_id": "dst_1"})"}) {
    EXPECT_TRUE(ParseReplayFilterBody(body)) << body;
  }
}

// The errors of `r`, as "field: message".
template <typename T>
std::vector<std::string> Errors(const Result<T>& r) {
  std::vector<std::string> out;
  if (!r) {
    for (const auto& f : r.error().fields) out.push_back(f.field + ": " + f.message);
  }
  return out;
}

TEST(JsonCodecTest, AnUnknownMemberIsRefusedAndNamed) {
  // A misspelt member used to be ignored: this destination took every event.
  auto destination =
      ParseDestinationFields(Json::parse(R"({"url": "https://example.com/h", "event_type": ["a.b"],
                      "filtr": "$.x == 1", "colour": "red"})"),
                             /*creating=*/true);
  EXPECT_EQ(Errors(destination),
            (std::vector<std::string>{"colour: unknown member",
                                      "event_type: unknown member; did you mean event_types?",
                                      "filtr: unknown member; did you mean filter?"}));
  EXPECT_EQ(Errors(ParseDestinationFields(Json::parse(R"({"tenant": "acme"})"), false)),
            (std::vector<std::string>{"tenant: unknown member; did you mean tenant_id?"}));
  EXPECT_EQ(
      Errors(ParseDestinationFields(Json::parse(R"({"tls": {"client_cert": "x"}, "auth": {"type":
                    "oauth2_client_credentials", "token_url": "https://a.example/t",
                    "client_id": "c", "client_secret": "s", "scopes": "x"}})"),
                                    false)),
      (std::vector<std::string>{"tls.client_cert: unknown member; did you mean client_certificate?",
                                "auth.scopes: unknown member; did you mean scope?"}));

  EXPECT_EQ(Errors(ParseNewEvent(R"({"type": "a.b", "payload": {}, "tenant": "acme",
                                     "idempotency_key": "k"})")),
            (std::vector<std::string>{"tenant: unknown member; did you mean tenant_id?",
                                      "idempotency_key: unknown member"}));
  EXPECT_EQ(Errors(ParseSecretRotation(R"({"grace": "1h"})", 24h)),
            (std::vector<std::string>{"grace: unknown member; did you mean grace_period?"}));
  EXPECT_EQ(Errors(ParsePortalLinkTtl(R"({"tll": "1h"})", 1h)),
            (std::vector<std::string>{"tll: unknown member; did you mean ttl?"}));
  EXPECT_EQ(
      Errors(ParseReplayFilterBody(R"({"destination": "dst_1", "all": true})")),
      (std::vector<std::string>{"destination: unknown member; did you mean destination_id?"}));
  EXPECT_EQ(Errors(ParseEmptyBody(R"({"reason": "x"})")),
            (std::vector<std::string>{"reason: unknown member"}));
  EXPECT_TRUE(ParseEmptyBody(""));
  EXPECT_TRUE(ParseEmptyBody("{}"));
}

TEST(JsonCodecTest, TheCatalogsBodiesRefuseUnknownMembersToo) {
  EXPECT_EQ(Errors(ParseEventTypeBody(R"({"name": "a.b", "shema": {"type": "object"}})", true,
                                      std::nullopt, "[]")),
            (std::vector<std::string>{"shema: unknown member; did you mean schema?"}));
  // The type's own view, its name included, which a patch cannot change.
  EXPECT_TRUE(ParseEventTypeBody(
      R"({"name": "a.b", "description": "d", "deprecated": false, "builtin": false,
                                    "created_at": "2026-01-01T00:00:00Z",
                                    "updated_at": "2026-01-01T00:00:00Z", "schema": null,
                                    "examples": []})",
      false, std::nullopt, "[]", "a.b"));
  EXPECT_EQ(Errors(ParseEventTypeBody(R"({"name": "a.c"})", false, std::nullopt, "[]", "a.b")),
            (std::vector<std::string>{"name: is the type's identity and cannot be changed"}));
  EXPECT_EQ(Errors(ParseFilterTest(R"({"filter": "$.a == 1", "payload": {}, "data": {}})")),
            (std::vector<std::string>{"data: unknown member"}));
}

TEST(JsonCodecTest, ADestinationsOwnViewIsAcceptedBack) {
  Destination d;
  d.id = 7;
  d.url = "https://example.com/h";
  d.event_types = {"order.*"};
  d.headers = {{"X-Team", "payments"}};
  d.filter = "$.total > 10";
  d.disabled_reason = DisabledReason::kManual;
  d.tenant_id = "acme";
  d.secret = GenerateSecret();
  Json view = DestinationJson(d, 16, /*with_secret=*/true);
  view["tls"] = {{"client_certificate", nullptr},
                 {"client_key", nullptr},
                 {"ca_certificate", nullptr},
                 {"expires_at", nullptr}};
  // The answer to a write may carry warnings (a host that does not resolve yet).
  view["warnings"] = Json::array({{{"field", "url"}, {"message", "does not resolve now"}}});
  for (bool creating : {true, false}) {
    auto fields = ParseDestinationFields(view, creating);
    ASSERT_TRUE(fields) << view.dump() << ": " << Errors(fields).front();
    EXPECT_EQ(fields->url, d.url);
    EXPECT_EQ(fields->filter, std::optional<std::optional<std::string>>(d.filter));
  }
  // A large body of made-up names hears of a bounded number of them.
  Json many = Json::object();
  for (int i = 0; i < 1000; ++i) many["made_up_" + std::to_string(i)] = i;
  EXPECT_EQ(ParseDestinationFields(many, false).error().fields.size(), 20u);
}

TEST(JsonCodecTest, ADestinationShowsItsSecretOnlyWhenAsked) {
  Destination d;
  d.id = 7;
  d.url = "https://example.com/hook";
  d.secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const Json shown = DestinationJson(d, 16, /*with_secret=*/true);
  EXPECT_EQ(shown["id"], "dst_7");
  EXPECT_EQ(shown["secret"], d.secret);
  EXPECT_EQ(shown["max_in_flight"], 16);  // the default in force
  const Json listed = DestinationJson(d, 16, /*with_secret=*/false);
  EXPECT_FALSE(listed.contains("secret"));
  EXPECT_EQ(Dump(listed).find("whsec_"), std::string::npos);
}

TEST(JsonCodecTest, StatsAndTheirSeriesNameTheirWindow) {
  HealthStats stats;
  stats.attempts = 10;
  stats.retry_rate = 0.25;
  const Json j = StatsJson(1h, stats);
  EXPECT_EQ(j["window"], "1h");
  EXPECT_EQ(j["attempts"], 10);
  EXPECT_EQ(j["retry_rate"], 0.25);
  const Json series = StatsSeriesJson(1h, 1min, {StatsPoint{Timestamp{}, 3, 2, 1, 0}});
  EXPECT_EQ(series["step"], "1m");
  ASSERT_EQ(series["points"].size(), 1u);
  EXPECT_EQ(series["points"][0]["at"], "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(series["points"][0]["successes"], 2);
}

TEST(JsonCodecTest, AnEventListKeepsEachPayloadsBytes) {
  Listing<Event> listing;
  Event e;
  e.id = 3;
  e.type = "order.created";
  e.payload = R"({"total": 1e400, "k": 1, "k": 2})";
  listing.items.push_back(e);
  listing.next_before_id = 3;
  const std::string text = EventListText(listing);
  EXPECT_NE(text.find(R"({"total": 1e400, "k": 1, "k": 2})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("next_cursor":"evt_3")"), std::string::npos) << text;
}

TEST(JsonCodecTest, AnEventsSubjectsAreKeptOnceInOrderAndHeldToTheRule) {
  auto event = ParseNewEvent(
      R"({"type": "a.b", "payload": {}, "subjects": ["user:42", "email:ann@example.com", "user:42"]})");
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_EQ(event->subjects, (std::vector<std::string>{"user:42", "email:ann@example.com"}));
  EXPECT_TRUE(
      ParseNewEvent(R"({"type": "a.b", "payload": {}, "subjects": null})")->subjects.empty());
  std::string seventeen = R"({"type": "a.b", "payload": {}, "subjects": ["s0)";
  for (int i = 1; i < 17; ++i) seventeen += R"(", "s)" + std::to_string(i);
  seventeen += R"("]})";
  for (const std::string& body :
       {std::string(R"({"type": "a.b", "payload": {}, "subjects": "user:42"})"),
        std::string(R"({"type": "a.b", "payload": {}, "subjects": [42]})"),
        std::string(R"({"type": "a.b", "payload": {}, "subjects": [""]})"),
        std::string(R"({"type": "a.b", "payload": {}, "subjects": ["a\u0000b"]})"),
        std::string(R"({"type": "a.b", "payload": {}, "subjects": ["a\u0085b"]})"),
        std::string(R"({"type": "a.b", "payload": {}, "subjects": [")") + std::string(257, 'x') +
            R"("]})",
        seventeen}) {
    EXPECT_EQ(Errors(ParseNewEvent(body)),
              (std::vector<std::string>{std::string("subjects: ") + kSubjectsRule}))
        << body;
  }
}

TEST(JsonCodecTest, AnErasureNamesItsIdStatusAndCountsNeverItsSubject) {
  auto request = ParseErasureRequest(R"({"subject": "user:42", "tenant_id": "acme"})");
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->subject, "user:42");
  EXPECT_EQ(request->tenant_id, "acme");
  EXPECT_FALSE(ParseErasureRequest(R"({"subject": ""})"));
  EXPECT_FALSE(ParseErasureRequest(R"({"subject": "a", "tenant_id": "a b"})"));
  EXPECT_FALSE(ParseErasureRequest(R"({})"));
  EXPECT_FALSE(ParseErasureRequest(R"(["user:42"])"));
  Erasure e;
  e.id = 7;
  e.status = ErasureStatus::kDone;
  e.events = 3;
  e.cancelled_deliveries = 1;
  e.finished_at = e.created_at;
  const Json json = ErasureJson(e);
  EXPECT_EQ(json["id"], "era_7");
  EXPECT_EQ(json["status"], "done");
  EXPECT_EQ(json["events"], 3);
  EXPECT_EQ(json["cancelled_deliveries"], 1);
  EXPECT_TRUE(json["tenant_id"].is_null());
}

TEST(JsonCodecTest, AnErasedEventShowsANullPayload) {
  Event e;
  e.id = 3;
  e.type = "user.updated";
  e.subjects = {"order:7"};
  e.erased_at = e.created_at;
  const Json json = Json::parse(EventText(e, /*with_deliveries=*/false));
  EXPECT_TRUE(json["payload"].is_null());
  EXPECT_TRUE(json["erased_at"].is_string());
  EXPECT_EQ(json["subjects"], Json::array({"order:7"}));
}

}  // namespace
}  // namespace webhookd::json_codec_test
