// webhookd.publish (store/pg/schema/publish.sql): publishing inside the application's own
// transaction. Called as an application would, on a connection without webhookd's
// search_path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "core/trace_context.h"
#include "core/validation.h"
#include "tests/testing/test_database.h"

namespace webhookd::publish_pgtest {
namespace {

using testing::TestDatabase;

constexpr const char* kSecret = "'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'";

class PublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    acme_ = db_.Scalar(std::string("INSERT INTO destinations (url, secret, event_types, tenant_id) "
                                   "VALUES ('https://acme.example.com/h', ") +
                       kSecret + ", '{order.*}', 'acme') RETURNING id");
    none_ = db_.Scalar(std::string("INSERT INTO destinations (url, secret) VALUES "
                                   "('https://example.com/h', ") +
                       kSecret + ") RETURNING id");
    db_.Exec("CREATE TABLE public.orders (id int PRIMARY KEY, status text)");
    db_.Exec("INSERT INTO public.orders VALUES (42, 'new')");
  }

  // The application's own connection: plain search_path, its own tables.
  std::unique_ptr<pqxx::connection> App() { return std::make_unique<pqxx::connection>(db_.url()); }

  std::string Count(const std::string& table) {
    return db_.Scalar("SELECT count(*) FROM " + table);
  }

  // The SQLSTATE and message `sql` fails with ("" when it succeeds).
  std::pair<std::string, std::string> Failure(const std::string& sql) {
    auto c = App();
    pqxx::work tx(*c);
    try {
      tx.exec(sql);
    } catch (const pqxx::sql_error& e) {
      std::string message = e.what();
      if (auto nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
      if (message.starts_with("ERROR:  ")) message = message.substr(8);
      return {e.sqlstate(), message};
    }
    return {"", ""};
  }

  TestDatabase db_;
  std::string acme_, none_;
};

TEST_F(PublishTest, TheEventExistsIfAndOnlyIfTheTransactionCommits) {
  const std::string payload =
      "{\"id\": 42,  \"total\": 1.10000000000000000001, \"z\": 1, \"a\": 2}";
  auto c = App();
  {
    pqxx::work tx(*c);
    tx.exec("UPDATE orders SET status = 'paid' WHERE id = 42");
    auto r =
        tx.exec_params("SELECT webhookd.publish('order.paid', $1, tenant_id => 'acme')", payload);
    const std::string id = r[0][0].c_str();
    EXPECT_TRUE(id.starts_with("evt_")) << id;
    tx.commit();
    const std::string n = id.substr(4);
    EXPECT_EQ(db_.Scalar("SELECT payload FROM events WHERE id = " + n), payload);
    EXPECT_EQ(db_.Scalar("SELECT tenant_id FROM events WHERE id = " + n), "acme");
    EXPECT_EQ(db_.Scalar("SELECT string_agg(destination_id || '/' || tenant_id || '/' || status, "
                         "',') FROM delivery_rows WHERE event_id = " +
                         n),
              acme_ + "/acme/pending");
  }
  // Rolled back: neither the application's write nor the event.
  {
    pqxx::work tx(*c);
    tx.exec("UPDATE orders SET status = 'refunded' WHERE id = 42");
    tx.exec("SELECT webhookd.publish('order.refunded', '{\"id\": 42}', tenant_id => 'acme')");
    tx.abort();
  }
  // A savepoint rolled back takes its event with it; the rest commits.
  {
    pqxx::work tx(*c);
    {
      pqxx::subtransaction sp(tx, "sp");
      sp.exec("SELECT webhookd.publish('order.cancelled', '{\"id\": 42}')");
      sp.abort();
    }
    tx.exec("SELECT webhookd.publish('order.shipped', '{\"id\": 42}')");
    tx.commit();
  }
  EXPECT_EQ(db_.Scalar("SELECT string_agg(type, ',' ORDER BY id) FROM events"),
            "order.paid,order.shipped");
  EXPECT_EQ(db_.Scalar("SELECT status FROM public.orders WHERE id = 42"), "paid");
  // An event without a tenant reaches the destination without one alone.
  EXPECT_EQ(db_.Scalar("SELECT string_agg(d.destination_id::text, ',') FROM delivery_rows d JOIN "
                       "events e ON e.id = d.event_id WHERE e.type = 'order.shipped'"),
            none_);
}

TEST_F(PublishTest, WakesTheWorkersOnlyWhenTheTransactionCommits) {
  auto listener = App();
  struct Counter : pqxx::notification_receiver {
    explicit Counter(pqxx::connection_base& c)
        : pqxx::notification_receiver(c, "webhookd_wakeup") {}
    void operator()(const std::string&, int) override { ++count; }
    int count = 0;
  } counter(*listener);
  const auto drain = [&] {
    for (int i = 0; i < 5; ++i) listener->await_notification(0, 100'000);
    return counter.count;
  };
  auto c = App();
  pqxx::work tx(*c);
  tx.exec("SELECT webhookd.publish('order.paid', '{}', tenant_id => 'acme')");
  EXPECT_EQ(drain(), 0) << "notified before commit";
  tx.commit();
  EXPECT_EQ(drain(), 1);
}

TEST_F(PublishTest, TheSameIdempotencyKeyMakesOneEvent) {
  const std::string call =
      "SELECT webhookd.publish('order.paid', '{\"id\": 42}', tenant_id => 'acme', "
      "idempotency_key => 'order-42-paid')";
  const std::string first = db_.Scalar(call);
  const std::string second = db_.Scalar(call);
  EXPECT_EQ(first, second);
  EXPECT_EQ(Count("events"), "1");
  EXPECT_EQ(Count("deliveries"), "1");
  auto [state, message] = Failure(
      "SELECT webhookd.publish('order.paid', '{\"id\": 43}', tenant_id => 'acme', "
      "idempotency_key => 'order-42-paid')");
  EXPECT_EQ(state, "22023");
  EXPECT_EQ(message, "Idempotency-Key: was already used with a different request body");
  EXPECT_EQ(Count("events"), "1");
}

TEST_F(PublishTest, BadInputRaises22023WithTheApisMessageAndWritesNothing) {
  const std::string other = db_.Scalar(std::string("INSERT INTO destinations (url, secret, "
                                                   "tenant_id) VALUES ('https://b.example/h', ") +
                                       kSecret + ", 'beta') RETURNING id");
  struct Case {
    std::string args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"NULL, '{}'", "type: is required"},
      {"'has space', '{}'", "type: must be 1-255 characters of A-Z a-z 0-9 . _ : -"},
      {"'webhookd.x', '{}'",
       "type: types starting with \"webhookd.\" are reserved for webhookd's own events"},
      {"'a.b', NULL", "payload: is required"},
      {"'a.b', '[1]'", "payload: must be a JSON object"},
      {"'a.b', '{not json'", "payload: must be a JSON object"},
      {"'a.b', '{}', tenant_id => 'a b'", std::string("tenant_id: ") + kTenantIdRule},
      {"'a.b', '{}', destination_id => 'dst_999999'",
       "destination_id: no destination with that id"},
      {"'a.b', '{}', destination_id => 'nope'", "destination_id: no destination with that id"},
      {"'a.b', '{}', tenant_id => 'acme', destination_id => 'dst_" + other + "'",
       "destination_id: is not a destination of the event's tenant"},
      {"'a.b', '{}', destination_id => 'dst_" + acme_ + "'",
       "destination_id: is a tenant's destination; the event has no tenant_id"},
      {"'a.b', '{}', idempotency_key => ''",
       "Idempotency-Key: must be 1-255 visible ASCII characters"},
  };
  for (const Case& c : cases) {
    auto [state, message] = Failure("SELECT webhookd.publish(" + c.args + ")");
    EXPECT_EQ(state, "22023") << c.args;
    EXPECT_EQ(message, c.message) << c.args;
  }
  EXPECT_EQ(Count("events"), "0");
  EXPECT_EQ(Count("idempotency_keys"), "0");
}

// The API's limits hold here too: at most 262,144 bytes (a 400 KB payload was taken) and
// 64 levels of nesting (100 were).
TEST_F(PublishTest, ThePayloadIsHeldToTheApisSizeAndDepth) {
  const auto publish = [&](const std::string& payload) {
    return Failure("SELECT webhookd.publish('order.paid', " + App()->quote(payload) + ")");
  };
  const std::string big = R"({"x": ")" + std::string(262144, 'a') + R"("})";
  EXPECT_EQ(publish(big).second,
            "payload: is larger than the largest accepted body (webhookd.max_payload_bytes, "
            "262144 bytes unless set)");
  const auto nested = [](int levels) {  // an object, then arrays: `levels` deep in all
    return R"({"x": )" + std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}";
  };
  EXPECT_EQ(publish(nested(64)).first, "");
  EXPECT_EQ(publish(nested(65)).second, "payload: JSON nested deeper than 64 levels");
  EXPECT_EQ(publish(nested(100)).second, "payload: JSON nested deeper than 64 levels");
  // Brackets inside strings are text, not nesting.
  EXPECT_EQ(publish(R"({"x": ")" + std::string(500, '[') + R"(\"]"})").first, "");
  // An operator's own limit for the database.
  db_.Exec("ALTER DATABASE " + db_.name() + " SET webhookd.max_payload_bytes = '100'");
  EXPECT_EQ(publish(R"({"x": ")" + std::string(100, 'a') + R"("})").first, "22023");
  db_.Exec("ALTER DATABASE " + db_.name() + " RESET webhookd.max_payload_bytes");
  EXPECT_EQ(Count("events"), "0");  // Failure() rolls every call back
}

// Keys belong to the event's tenant: the same key from two tenants' producers is two
// events, and neither gets the other's receipt.
TEST_F(PublishTest, AnIdempotencyKeyIsTheEventsTenants) {
  const std::string acme = db_.Scalar(
      "SELECT webhookd.publish('order.paid', '{\"id\": 1}', tenant_id => 'acme', "
      "idempotency_key => 'k-1')");
  const std::string beta = db_.Scalar(
      "SELECT webhookd.publish('order.paid', '{\"id\": 2}', tenant_id => 'beta', "
      "idempotency_key => 'k-1')");
  const std::string none =
      db_.Scalar("SELECT webhookd.publish('order.paid', '{\"id\": 3}', idempotency_key => 'k-1')");
  EXPECT_NE(acme, beta);
  EXPECT_NE(acme, none);
  EXPECT_NE(beta, none);
  EXPECT_EQ(db_.Scalar("SELECT webhookd.publish('order.paid', '{\"id\": 2}', tenant_id => "
                       "'beta', idempotency_key => 'k-1')"),
            beta);
  EXPECT_EQ(Count("events"), "3");
}

// One table of cases through both rules: the API's (C++) and publish's (SQL).
TEST_F(PublishTest, TheSqlAndTheApiAcceptTheSameTypesAndTenants) {
  const std::vector<std::string> cases = {"order.created",
                                          "a",
                                          "A-Z_0:9.x",
                                          "",
                                          " ",
                                          "a b",
                                          "é",
                                          "order/created",
                                          "a\tb",
                                          std::string(128, 'x'),
                                          std::string(129, 'x'),
                                          std::string(255, 'y'),
                                          std::string(256, 'y'),
                                          "webhookd.x",
                                          "*",
                                          "order.*",
                                          "a'b",
                                          "a\"b",
                                          "ü"};
  auto c = App();
  pqxx::nontransaction tx(*c);
  for (const std::string& s : cases) {
    auto r = tx.exec_params(
        "SELECT webhookd.is_valid_event_type($1), webhookd.is_valid_tenant_id($1)", s);
    EXPECT_EQ(r[0][0].as<bool>(), IsValidEventType(s)) << "type \"" << s << "\"";
    EXPECT_EQ(r[0][1].as<bool>(), IsValidTenantId(s)) << "tenant \"" << s << "\"";
  }
}

// publish(traceparent =>, tracestate =>): the event keeps a valid context as given and
// gets a fresh trace for an invalid one, deciding as core/trace_context.cc does; the
// context goes with that call alone, not with the next publish() of the transaction.
TEST_F(PublishTest, TheTraceContextIsKeptWhenValidAndGoesWithThatCallAlone) {
  auto c = App();
  pqxx::work tx(*c);
  tx.exec(
      "SELECT webhookd.publish('order.paid', '{}', traceparent => "
      "'00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate => 'rojo=1')");
  tx.exec("SELECT webhookd.publish('order.paid', '{}')");
  tx.exec(
      "SELECT webhookd.publish('order.paid', '{}', traceparent => "
      "'00-00000000000000000000000000000000-b7ad6b7169203331-01', tracestate => 'rojo=2')");
  tx.commit();
  pqxx::nontransaction read(*c);
  auto rows =
      read.exec("SELECT traceparent, coalesce(tracestate, '') FROM webhookd.events ORDER BY id");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(std::string(rows[0][0].c_str()),
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(std::string(rows[0][1].c_str()), "rojo=1");
  for (int i : {1, 2}) {
    const std::string fresh = rows[i][0].c_str();
    EXPECT_TRUE(ParseTraceparent(fresh)) << fresh;
    EXPECT_EQ(fresh.find("0af7651916cd43dd8448eb211c80319c"), std::string::npos) << fresh;
    EXPECT_EQ(std::string(rows[i][1].c_str()), "") << "no tracestate without a valid traceparent";
  }
}

TEST_F(PublishTest, TheSqlTraceparentRuleIsTheApisRule) {
  const std::vector<std::string> cases = {
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-ff",
      " 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 ",
      "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-the-future-holds",
      "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01.x",
      "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "0g-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
      "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",
      "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",
      "",
      "garbage"};
  auto c = App();
  pqxx::nontransaction tx(*c);
  for (const std::string& tp : cases) {
    auto r = tx.exec_params("SELECT webhookd.valid_traceparent($1)", tp);
    const auto parsed = ParseTraceparent(tp);
    if (!parsed) {
      EXPECT_TRUE(r[0][0].is_null()) << "\"" << tp << "\"";
      continue;
    }
    ASSERT_FALSE(r[0][0].is_null()) << "\"" << tp << "\"";
    EXPECT_EQ(std::string(r[0][0].c_str()),
              FormatTraceparent(parsed->trace_id, parsed->span_id, parsed->flags))
        << "\"" << tp << "\"";
  }
}

TEST_F(PublishTest, ARoleWithOnlyWebhookdPublisherCanPublishAndReadNothing) {
  const std::string role = "app_" + db_.name();
  db_.Exec("CREATE ROLE " + role + " NOLOGIN IN ROLE webhookd_publisher");
  auto c = App();
  {
    pqxx::work tx(*c);
    tx.exec("SET LOCAL ROLE " + role);
    auto r = tx.exec("SELECT webhookd.publish('order.paid', '{\"id\": 1}', tenant_id => 'acme')");
    EXPECT_TRUE(std::string(r[0][0].c_str()).starts_with("evt_"));
    tx.commit();
  }
  for (const char* sql :
       {"SELECT count(*) FROM webhookd.events", "SELECT count(*) FROM webhookd.destinations",
        "SELECT secret FROM webhookd.destinations", "SELECT count(*) FROM webhookd.api_keys",
        "INSERT INTO webhookd.events (type, payload) VALUES ('x', '{}')"}) {
    pqxx::work tx(*c);
    tx.exec("SET LOCAL ROLE " + role);
    try {
      tx.exec(sql);
      ADD_FAILURE() << "allowed: " << sql;
    } catch (const pqxx::insufficient_privilege& e) {
      // SQLSTATE 42501 (libpqxx 6 maps it to this type and leaves sqlstate() empty).
      EXPECT_THAT(e.what(), ::testing::HasSubstr("permission denied")) << sql;
    }
  }
  EXPECT_EQ(Count("events"), "1");
  db_.Exec("DROP ROLE " + role);
}

}  // namespace
}  // namespace webhookd::publish_pgtest
