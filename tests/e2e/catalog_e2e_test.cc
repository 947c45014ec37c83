// The event catalog end to end (docs/catalog.md): the routes and who may use them,
// payloads checked against their type's schema on REST and `webhookd send` with nothing
// stored for a refused one, a schema change seen at once by another server process, and
// WEBHOOKD_EVENT_TYPES=strict on every path, publish() included.
#include <gtest/gtest.h>

#include <pqxx/pqxx>
#include <set>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::catalog_e2e_test {
namespace {

using Json = nlohmann::json;

const Json kOrderSchema = {{"type", "object"},
                           {"required", {"id", "amount"}},
                           {"properties",
                            {{"id", {{"type", "string"}}},
                             {"amount", {{"type", "integer"}, {"minimum", 0}}},
                             {"currency", {{"enum", {"EUR", "USD"}}}}}}};

class CatalogE2eTest : public ::testing::Test {
 protected:
  CatalogE2eTest() : webhookd_(db_.url(), "server") {}

  Json Call(const std::string& method, const std::string& path, const Json& body, int want,
            const std::string& key = "") {
    auto res = webhookd_.Call(method, path, body, key);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return Json::parse(res.body, nullptr, false);
  }
  std::string Events() { return db_.Scalar("SELECT count(*) FROM webhookd.events"); }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(CatalogE2eTest, TheRoutesAndWhoMayUseThem) {
  const std::string publisher = WebhookdProcess::CreateKey(db_.url(), {"--role", "publisher"});
  const std::string tenant =
      WebhookdProcess::CreateKey(db_.url(), {"--role", "tenant", "--tenant", "acme"});
  ASSERT_FALSE(publisher.empty());
  ASSERT_FALSE(tenant.empty());
  const Json created = Call("POST", "/v1/event-types",
                            {{"name", "order.created"},
                             {"description", "An order was placed"},
                             {"schema", kOrderSchema},
                             {"examples", {{{"id", "o1"}, {"amount", 5}}}}},
                            201, publisher);
  EXPECT_EQ(created["schema"], kOrderSchema);
  EXPECT_EQ(created["deprecated"], false);
  EXPECT_EQ(created["builtin"], false);
  Call("POST", "/v1/event-types", {{"name", "order.created"}}, 409);
  Call("POST", "/v1/event-types", {{"name", "refund.issued"}}, 403, tenant);
  Call("PATCH", "/v1/event-types/order.created", {{"deprecated", true}}, 403, tenant);
  Call("DELETE", "/v1/event-types/order.created", nullptr, 403, tenant);
  // Every key reads the catalog: the portal shows it to the tenant's people.
  EXPECT_EQ(Call("GET", "/v1/event-types/order.created", nullptr, 200, tenant)["description"],
            "An order was placed");
  const Json all = Call("GET", "/v1/event-types", nullptr, 200, tenant);
  std::vector<std::string> names;
  for (const Json& t : all["data"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"order.created", "webhookd.delivery.dead_lettered",
                                             "webhookd.destination.circuit_opened",
                                             "webhookd.destination.disabled",
                                             "webhookd.destination.recovered"}));
  // webhookd's own types: listed with their schemas, read-only.
  const Json own = Call("GET", "/v1/event-types/webhookd.destination.disabled", nullptr, 200);
  EXPECT_EQ(own["builtin"], true);
  EXPECT_EQ(own["schema"]["properties"]["reason"]["enum"], Json({"gone", "failing"}));
  Call("PATCH", "/v1/event-types/webhookd.destination.disabled", {{"deprecated", true}}, 403);
  Call("DELETE", "/v1/event-types/webhookd.destination.disabled", nullptr, 403);
  Call("POST", "/v1/event-types", {{"name", "webhookd.mine"}}, 422);
  // Pages in name order.
  const Json page = Call("GET", "/v1/event-types?limit=2", nullptr, 200);
  ASSERT_EQ(page["data"].size(), 2u);
  const Json rest =
      Call("GET", "/v1/event-types?limit=10&cursor=" + page["next_cursor"].get<std::string>(),
           nullptr, 200);
  EXPECT_EQ(rest["data"].size(), 3u);
  EXPECT_EQ(rest["next_cursor"], nullptr);
  // PATCH: a new schema must hold the stored examples; deprecating keeps the rest.
  const Json stricter = {{"type", "object"}, {"required", {"sku"}}};
  const Json refused = Call("PATCH", "/v1/event-types/order.created", {{"schema", stricter}}, 422);
  EXPECT_EQ(refused["errors"][0]["field"], "/examples/0/sku") << refused;
  const Json patched =
      Call("PATCH", "/v1/event-types/order.created", {{"deprecated", true}}, 200, publisher);
  EXPECT_EQ(patched["deprecated"], true);
  EXPECT_EQ(patched["schema"], kOrderSchema);
  Call("GET", "/v1/event-types/no.such", nullptr, 404);
  Call("PATCH", "/v1/event-types/no.such", {{"deprecated", true}}, 404);
  Call("DELETE", "/v1/event-types/no.such", nullptr, 404);
  Call("GET", "/v1/event-types/bad%20name", nullptr, 404);
  Call("DELETE", "/v1/event-types/order.created", nullptr, 204);
  Call("GET", "/v1/event-types/order.created", nullptr, 404);
}

TEST_F(CatalogE2eTest, SchemaAndExamplesAreKeptAsWritten) {
  auto client = webhookd_.Client();
  const std::string schema =
      R"({"type":"object","properties":{"zeta":{"type":"string"},"alpha":{}}})";
  const std::string examples = R"([{"zeta":"z","alpha":123456789012345678901234567890}])";
  auto res = client->Post(
      "/v1/event-types",
      R"({"name":"kept.as.written","schema":)" + schema + R"(,"examples":)" + examples + "}",
      "application/json");
  ASSERT_EQ(res->status, 201) << res->body;
  for (const std::string& body :
       {res->body, client->Get("/v1/event-types/kept.as.written")->body}) {
    EXPECT_NE(body.find(R"("schema":)" + schema), std::string::npos) << body;
    EXPECT_NE(body.find(R"("examples":)" + examples), std::string::npos) << body;
  }
}

TEST_F(CatalogE2eTest, ABadSchemaOrExampleIsRefusedNamingWhereAndStoresNothing) {
  const Json bad_type =
      Call("POST", "/v1/event-types",
           {{"name", "a.b"}, {"schema", {{"properties", {{"n", {{"type", "integr"}}}}}}}}, 422);
  EXPECT_EQ(bad_type["errors"][0]["field"], "/schema/properties/n/type");
  const Json bad_example = Call(
      "POST", "/v1/event-types",
      {{"name", "a.b"}, {"schema", kOrderSchema}, {"examples", {{{"id", "x"}, {"amount", -1}}}}},
      422);
  EXPECT_EQ(bad_example["errors"][0]["field"], "/examples/0/amount");
  Call("POST", "/v1/event-types", {{"name", "a.b"}, {"schema", "not an object"}}, 422);
  Call("POST", "/v1/event-types", {{"name", "a.*"}}, 422);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM webhookd.event_types WHERE NOT builtin"), "0");
}

TEST_F(CatalogE2eTest, APayloadFailingItsSchemaIsA422PerViolationAndNothingIsStored) {
  Call("POST", "/v1/event-types", {{"name", "order.created"}, {"schema", kOrderSchema}}, 201);
  Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/x"}}, 201);
  const std::string before = Events();
  const Json problem =
      Call("POST", "/v1/events",
           {{"type", "order.created"}, {"payload", {{"amount", -3}, {"currency", "GBP"}}}}, 422);
  std::set<std::string> fields;
  for (const Json& e : problem["errors"]) fields.insert(e["field"]);
  EXPECT_EQ(fields, (std::set<std::string>{"/payload/id", "/payload/amount", "/payload/currency"}))
      << problem;
  EXPECT_EQ(Events(), before);
  // `webhookd send` goes the same way: refused, nothing stored, the reasons printed.
  const auto [code, out] = WebhookdProcess::RunCommand(
      {"send", "--type", "order.created", "--data", R"({"id": "o1", "amount": "5"})"},
      {{"WEBHOOKD_URL", "http://127.0.0.1:" + std::to_string(webhookd_.port())},
       {"WEBHOOKD_API_KEY", webhookd_.admin_key()}});
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("/payload/amount"), std::string::npos) << out;
  EXPECT_EQ(Events(), before);
  // A valid one is stored as posted, byte for byte (the check parses a copy).
  auto client = webhookd_.Client();
  const std::string raw = R"({"type":"order.created","payload":{ "amount" : 7 ,"id":"o2"}})";
  auto res = client->Post("/v1/events", raw, "application/json");
  ASSERT_EQ(res->status, 202) << res->body;
  const std::string id = Json::parse(res->body)["id"];
  EXPECT_EQ(db_.Scalar("SELECT payload FROM webhookd.events WHERE id = " + id.substr(4)),
            R"({ "amount" : 7 ,"id":"o2"})");
}

// A schema an earlier version stored and this one refuses (a bound added since: here a
// `\S` inside a class) is not a 500 for every event of its type: a 422 that says why and
// what to do, until the type is changed.
TEST_F(CatalogE2eTest, AStoredSchemaThisVersionRefusesIsA422ThatSaysSoNotA500) {
  Call("POST", "/v1/event-types", {{"name", "legacy.type"}}, 201);
  db_.Scalar(
      R"(UPDATE webhookd.event_types SET schema = '{"properties": {"a": {"type": "string", "pattern": "[\\S]"}}}' WHERE name = 'legacy.type' RETURNING 1)");
  const std::string before = Events();
  const Json problem =
      Call("POST", "/v1/events", {{"type", "legacy.type"}, {"payload", {{"a", "x"}}}}, 422);
  ASSERT_EQ(problem["errors"].size(), 1u) << problem;
  EXPECT_EQ(problem["errors"][0]["field"], "type");
  EXPECT_NE(problem["errors"][0]["message"].get<std::string>().find("/schema/properties/a/pattern"),
            std::string::npos)
      << problem;
  EXPECT_EQ(Events(), before);
  Call("PATCH", "/v1/event-types/legacy.type", {{"schema", nullptr}}, 200);
  Call("POST", "/v1/events", {{"type", "legacy.type"}, {"payload", {{"a", "x"}}}}, 202);
}

// Two server processes on one database: a schema added through one is enforced by the
// other on its very next request, though the other had cached the catalog before.
TEST_F(CatalogE2eTest, AChangeThroughOneServerIsEnforcedByAnotherAtOnce) {
  WebhookdProcess other(db_.url(), "server");
  const Json payload = {{"amount", 1}};
  Call("POST", "/v1/event-types", {{"name", "invoice.paid"}}, 201);
  ASSERT_EQ(
      other.Call("POST", "/v1/events", {{"type", "invoice.paid"}, {"payload", payload}}).status,
      202);  // cached: no schema
  Call("PATCH", "/v1/event-types/invoice.paid",
       {{"schema", {{"type", "object"}, {"required", {"invoice_id"}}}}}, 200);
  auto refused = other.Call("POST", "/v1/events", {{"type", "invoice.paid"}, {"payload", payload}});
  EXPECT_EQ(refused.status, 422) << refused.body;
  // And dropped again: accepted at once.
  Call("PATCH", "/v1/event-types/invoice.paid", {{"schema", nullptr}}, 200);
  EXPECT_EQ(
      other.Call("POST", "/v1/events", {{"type", "invoice.paid"}, {"payload", payload}}).status,
      202);
  // Through the keyed path (its own transaction) as well.
  Call("DELETE", "/v1/event-types/invoice.paid", nullptr, 204);
  Call("POST", "/v1/event-types",
       {{"name", "invoice.paid"}, {"schema", {{"type", "object"}, {"required", {"invoice_id"}}}}},
       201);
  auto client = other.Client();
  httplib::Headers headers = {{"Idempotency-Key", "k-1"}};
  auto keyed =
      client->Post("/v1/events", headers, R"({"type":"invoice.paid","payload":{"amount":1}})",
                   "application/json");
  EXPECT_EQ(keyed->status, 422) << keyed->body;
}

TEST(CatalogStrictE2eTest, StrictModeRefusesUncataloguedTypesOnEveryPath) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_EVENT_TYPES", "strict"}});
  ASSERT_EQ(
      webhookd.Call("POST", "/v1/event-types", {{"name", "known.type"}, {"schema", kOrderSchema}})
          .status,
      201);
  // REST
  auto rest =
      webhookd.Call("POST", "/v1/events", {{"type", "unknown.type"}, {"payload", Json::object()}});
  EXPECT_EQ(rest.status, 422) << rest.body;
  EXPECT_EQ(Json::parse(rest.body)["errors"][0]["field"], "type");
  EXPECT_EQ(webhookd
                .Call("POST", "/v1/events",
                      {{"type", "known.type"}, {"payload", {{"id", "o"}, {"amount", 1}}}})
                .status,
            202);
  // webhookd send
  const std::map<std::string, std::string> env = {
      {"WEBHOOKD_URL", "http://127.0.0.1:" + std::to_string(webhookd.port())},
      {"WEBHOOKD_API_KEY", webhookd.admin_key()}};
  auto [code, out] =
      WebhookdProcess::RunCommand({"send", "--type", "unknown.type", "--data", "{}"}, env);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("event catalog"), std::string::npos) << out;
  // publish(): SQLSTATE 22023; a catalogued type goes, its schema unchecked there.
  pqxx::connection app(db.url());
  try {
    pqxx::work tx(app);
    tx.exec("SELECT webhookd.publish('unknown.type', '{}')");
    ADD_FAILURE() << "publish() took a type missing from the catalog";
  } catch (const pqxx::sql_error& e) {
    EXPECT_EQ(e.sqlstate(), "22023") << e.what();
    EXPECT_NE(std::string(e.what()).find("event catalog"), std::string::npos) << e.what();
  }
  {
    pqxx::work tx(app);
    tx.exec("SELECT webhookd.publish('known.type', '{\"amount\": \"not checked\"}')");
    tx.commit();
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.events WHERE type = 'unknown.type'"), "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.events WHERE type = 'known.type'"), "2");
}

TEST(CatalogStrictE2eTest, OpenModeTakesAnyTypeOnEveryPath) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_EVENT_TYPES", "open"}});
  EXPECT_EQ(webhookd.Call("POST", "/v1/events", {{"type", "any.type"}, {"payload", Json::object()}})
                .status,
            202);
  pqxx::connection app(db.url());
  pqxx::work tx(app);
  tx.exec("SELECT webhookd.publish('any.type', '{}')");
  tx.commit();
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.events"), "2");
}

}  // namespace
}  // namespace webhookd::testing::catalog_e2e_test
