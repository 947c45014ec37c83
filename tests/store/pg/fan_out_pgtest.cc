// The fan-out rule (store/pg/schema/fan_out.sql) is the same for every writer of
// deliveries: a table of destinations (three tenancies, types, filters, disabled, deleted)
// and of events, each event written through keyed ingest (fan_out.sql), grouped ingest
// (insert_event_group.sql) and webhookd.publish(), plus the operational events of the
// outcome statement (record_outcomes.sql). Every event's deliveries must be what the rule
// of docs/api.md and docs/filters.md names, restated here as a plain predicate.
#include <gtest/gtest.h>

#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "tests/testing/pg_fixture.h"

namespace webhookd::fan_out_pgtest {
namespace {

using testing::N;

// The rule as the docs state it, for the event `e` and destination `t`: same tenant,
// live, a pattern names the type (exact or "prefix.*") or the list is empty and the type
// is not webhookd's own, and the filter (if any) true for the payload.
constexpr const char* kRule =
    "t.enabled AND t.deleted_at IS NULL AND t.tenant_id IS NOT DISTINCT FROM e.tenant_id"
    " AND ((cardinality(t.event_types) = 0 AND NOT starts_with(e.type, 'webhookd.'))"
    "      OR EXISTS (SELECT 1 FROM unnest(t.event_types) p WHERE p = e.type"
    "                  OR (right(p, 2) = '.*' AND starts_with(e.type, left(p, -1)))))"
    " AND (t.filter IS NULL"
    "      OR coalesce(jsonb_path_match(payload_jsonb(e.payload), t.filter_path, '{}', true),"
    "                  false))";

class FanOutRuleTest : public testing::PgTest {
 protected:
  int64_t Dst(std::optional<std::string> tenant, std::vector<std::string> types,
              std::optional<std::string> filter = std::nullopt, bool enabled = true) {
    Destination d = testing::TestDestination(std::move(types), std::nullopt, enabled);
    d.tenant_id = std::move(tenant);
    d.filter = std::move(filter);
    return CreateDestination(d);
  }

  // "id,id,..." of the deliveries `event` has, and of those the rule names for it.
  std::string Got(int64_t event) {
    return db_.Scalar(
        "SELECT coalesce(string_agg(destination_id::text, ',' ORDER BY destination_id), '')"
        " FROM delivery_rows WHERE event_id = " +
        N(event));
  }
  std::string Want(int64_t event) {
    return db_.Scalar(
        "SELECT coalesce(string_agg(t.id::text, ',' ORDER BY t.id), '') FROM destinations t,"
        " events e WHERE e.id = " +
        N(event) + " AND " + kRule);
  }
};

TEST_F(FanOutRuleTest, EveryWriterFansOutByTheOneRule) {
  // A destination that dies first: its 410 disables it and dead-letters the delivery,
  // which publishes two operational events to the watchers below.
  const int64_t doomed = Dst(std::nullopt, {"doom.it"});
  const int64_t gone_watch = Dst(std::nullopt, {"webhookd.destination.*"}, R"($.reason == "gone")");
  const int64_t failing_watch =
      Dst(std::nullopt, {"webhookd.destination.disabled"}, R"($.reason == "failing")");
  const int64_t all_ops = Dst(std::nullopt, {"webhookd.*"});
  const int64_t dead_ops = Dst(std::nullopt, {"webhookd.delivery.*", "order.*"});
  const int64_t lookalike = Dst(std::nullopt, {"webhookd", "webhook.*", "web.*"});
  const int64_t tenant_ops = Dst("a", {"webhookd.*"});
  // Plain events.
  const int64_t every = Dst(std::nullopt, {});
  const int64_t big = Dst(std::nullopt, {"order.created"}, "$.amount > 100");
  const int64_t eur = Dst(std::nullopt, {}, R"($.currency == "EUR")");
  const int64_t a_every = Dst("a", {});
  const int64_t a_big = Dst("a", {"order.*"}, "$.amount > 100");
  const int64_t a_invoice = Dst("a", {"invoice.*"});
  const int64_t b_two = Dst("b", {"order.created", "invoice.paid"});
  const int64_t b_small = Dst("b", {}, "$.amount < 10");
  const int64_t off = Dst(std::nullopt, {}, std::nullopt, /*enabled=*/false);
  const int64_t deleted = Dst("a", {});
  ASSERT_TRUE(store_.DeleteDestination(deleted, Scope::All()));

  auto first = store_.InsertEvent(NewEvent{"doom.it", "{}", std::nullopt}, std::nullopt);
  ASSERT_TRUE(first) << first.error().message;
  std::vector<AttemptRecord> records;
  for (const ClaimedDelivery& c : Claim(100)) {
    if (c.destination_id != doomed) {
      records.push_back(testing::RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess));
      continue;
    }
    AttemptRecord r =
        testing::RecordFor(c, DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
    r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
    r.disable_destination = true;
    records.push_back(r);
  }
  ASSERT_EQ(records.size(), 2u);  // doomed and every
  Record(records);
  const auto op = [&](const std::string& type) {
    const std::string id = db_.Scalar("SELECT id FROM events WHERE type = '" + type + "'");
    return id.empty() ? int64_t{0} : std::stoll(id);
  };
  const std::vector<int64_t> ops = {op("webhookd.destination.disabled"),
                                    op("webhookd.delivery.dead_lettered")};
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE type LIKE 'webhookd.%'"), "2");
  EXPECT_EQ(Got(ops[0]), N(gone_watch) + "," + N(all_ops));
  EXPECT_EQ(Got(ops[1]), N(all_ops) + "," + N(dead_ops));

  struct Case {
    std::optional<std::string> tenant;
    std::string type, payload;
  };
  const std::vector<Case> cases = {
      {std::nullopt, "order.created", R"({"amount":500,"currency":"EUR"})"},
      {std::nullopt, "order.created", R"({"amount":5})"},
      {std::nullopt, "order.x.y", R"({"amount":500})"},
      {std::nullopt, "invoice.paid", R"({"currency":"EUR"})"},
      {std::nullopt, "webhook.x", R"({"currency":"USD"})"},
      {"a", "order.created", R"({"amount":500})"},
      {"a", "order.x.y", R"({"amount":5})"},
      {"a", "invoice.paid", "{}"},
      {"b", "invoice.paid", R"({"amount":1,"x":"\u0000"})"},  // no jsonb: no filter passes
      {"b", "order.created", R"({"amount":1})"},
      {"b", "user.deleted", R"({"amount":50})"},
      {"c", "order.created", R"({"amount":500})"},  // a tenant without destinations
  };
  auto conn = testing::TestDatabase::Connect(db_.url());
  std::vector<int64_t> events = {first->event.id, ops[0], ops[1]};
  int keys = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tenant.value_or("-") + " " + c.type + " " + c.payload);
    NewEvent e{c.type, c.payload, std::nullopt};
    e.tenant_id = c.tenant;
    std::vector<int64_t> ids;
    for (bool keyed : {true, false}) {
      std::optional<IdempotencyKey> key;
      if (keyed) key = IdempotencyKey{"k" + N(++keys), "h" + N(keys)};
      auto r = store_.InsertEvent(e, key);
      ASSERT_TRUE(r) << r.error().message;
      ids.push_back(r->event.id);
    }
    pqxx::work tx(*conn);
    const std::string published =
        tx.exec_params1("SELECT webhookd.publish($1, $2, $3)", c.type, c.payload, c.tenant)[0]
            .c_str();
    tx.commit();
    ids.push_back(std::stoll(published.substr(4)));
    for (int64_t id : ids) EXPECT_EQ(Got(id), Got(ids[0])) << "event " << id;
    events.insert(events.end(), ids.begin(), ids.end());
  }
  // The doomed destination was live when the first event fanned out; not since.
  events.erase(events.begin());
  size_t reached = 0;
  for (int64_t id : events) {
    const std::string got = Got(id);
    EXPECT_EQ(got, Want(id)) << "event " << id << " "
                             << db_.Scalar(
                                    "SELECT type || ' ' || coalesce(tenant_id, '-') || ' ' "
                                    "|| payload FROM events WHERE id = " +
                                    N(id));
    reached += testing::Ids(got).size();
  }
  // Each destination's reason to exist: it gets some event or is the case of none.
  for (int64_t dst : {gone_watch, all_ops, dead_ops, lookalike, every, big, eur, a_every, a_big,
                      a_invoice, b_two, b_small}) {
    EXPECT_NE(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE destination_id = " + N(dst)),
              "0")
        << dst;
  }
  for (int64_t dst : {failing_watch, tenant_ops, off, deleted}) {
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE destination_id = " + N(dst)),
              "0")
        << dst;
  }
  EXPECT_GT(reached, events.size());
}

// The rule is inlined into its callers' statements (a SQL function the planner can
// expand), so they keep their one-statement plans and their probes of the tenant index.
TEST_F(FanOutRuleTest, TheFunctionIsInlinedAndProbesTheTenantIndex) {
  db_.Exec(
      "INSERT INTO destinations (url, secret, tenant_id, filter) SELECT 'https://example.com/' "
      "|| g, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 't-' || (g % 4000),"
      " CASE WHEN g % 2 = 0 THEN '$.a == 1' END FROM generate_series(1, 20000) g");
  db_.Exec("ANALYZE destinations");
  auto conn = testing::TestDatabase::Connect(db_.url());
  pqxx::nontransaction tx(*conn);
  tx.exec("SET plan_cache_mode = force_generic_plan");
  tx.exec(
      "PREPARE ops AS SELECT d.id FROM (SELECT event_type_keys($1::text) AS keys OFFSET 0) k,"
      " webhookd.fan_out($2::text, k.keys, $3::text) d(id)");
  std::string plan;
  for (const auto& row : tx.exec("EXPLAIN EXECUTE ops('order.created', 't-7', '{}')"))
    plan += std::string(row[0].c_str()) + "\n";
  EXPECT_EQ(plan.find("Function Scan"), std::string::npos) << plan;
  EXPECT_NE(plan.find("destinations_fan_out"), std::string::npos) << plan;
  EXPECT_NE(plan.find("destinations_filtered"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("Seq Scan on destinations"), std::string::npos) << plan;
}

}  // namespace
}  // namespace webhookd::fan_out_pgtest
