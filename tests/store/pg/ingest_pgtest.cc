// Ingest on a real PostgreSQL: fan-out, targeting, idempotency, cancel on delete, and
// the newest-first pagination of every list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <latch>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/exec.h"
#include "store/pg/pg_store.h"
#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::ingest_pgtest {
namespace {

using ::testing::ElementsAreArray;
using testing::Ids;
using testing::N;
using testing::RecordFor;
using testing::TestDatabase;
using ::testing::UnorderedElementsAreArray;

int64_t CreateDestination(pg::PgStore& store, std::vector<std::string> event_types,
                          bool enabled = true) {
  auto d = store.CreateDestination(
      testing::TestDestination(std::move(event_types), std::nullopt, enabled), 1000000);
  EXPECT_TRUE(d) << d.error().message;
  return d ? d->id : 0;
}

// Ingests through either path: un-keyed (group commit) or keyed (its own transaction).
class FanOutTest : public ::testing::TestWithParam<bool> {
 protected:
  IngestReceipt Ingest(const std::string& type, std::optional<std::string> tenant = std::nullopt) {
    std::optional<IdempotencyKey> key;
    if (GetParam()) key = IdempotencyKey{"key-" + N(++keys_), "hash-" + N(keys_)};
    NewEvent event{type, R"({"n":1})", std::nullopt};
    event.tenant_id = std::move(tenant);
    auto r = store_.InsertEvent(event, key);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : IngestReceipt{};
  }

  // The destinations an event of `type` fans out to, as the receipt says; checks the
  // database says the same.
  std::vector<int64_t> FanOut(const std::string& type,
                              std::optional<std::string> tenant = std::nullopt) {
    const IngestReceipt receipt = Ingest(type, std::move(tenant));
    std::vector<int64_t> from_receipt;
    for (const Delivery& d : receipt.event.deliveries) {
      EXPECT_EQ(d.event_id, receipt.event.id);
      EXPECT_EQ(d.status, DeliveryStatus::kPending);
      from_receipt.push_back(d.destination_id);
    }
    std::sort(from_receipt.begin(), from_receipt.end());
    std::string joined;
    for (int64_t id : from_receipt) joined += (joined.empty() ? "" : ",") + N(id);
    EXPECT_EQ(db_.Scalar("SELECT string_agg(destination_id::text, ',' ORDER BY destination_id)"
                         " FROM " +
                         testing::kDeliveryState +
                         " dr WHERE status = 'pending' AND next_attempt_at IS NOT "
                         "NULL AND event_id = " +
                         N(receipt.event.id)),
              joined)
        << type;
    EXPECT_EQ(db_.Scalar("SELECT type FROM events WHERE id = " + N(receipt.event.id)), type);
    return from_receipt;
  }

  TestDatabase db_;
  pg::PgStore store_{db_.url(), pg::PgStore::Options{.api_connections = 4}};
  int keys_ = 0;
};

TEST_P(FanOutTest, EachEnabledLiveDestinationWhoseTypesMatch) {
  const int64_t exact = CreateDestination(store_, {"order.created"});
  const int64_t prefix = CreateDestination(store_, {"order.*"});
  const int64_t every = CreateDestination(store_, {});
  const int64_t several = CreateDestination(store_, {"invoice.paid", "order.x.y"});
  const int64_t disabled = CreateDestination(store_, {}, /*enabled=*/false);
  const int64_t deleted = CreateDestination(store_, {});
  ASSERT_TRUE(store_.DeleteDestination(deleted, Scope::All()));
  (void)disabled;

  EXPECT_THAT(FanOut("order.created"), ElementsAreArray({exact, prefix, every}));
  EXPECT_THAT(FanOut("order.x.y"), ElementsAreArray({prefix, every, several}));
  EXPECT_THAT(FanOut("order"), ElementsAreArray({every}));
  EXPECT_THAT(FanOut("orders.created"), ElementsAreArray({every}));
  EXPECT_THAT(FanOut("invoice.paid"), ElementsAreArray({every, several}));
  // "." in a pattern is a plain character, not a wildcard.
  EXPECT_THAT(FanOut("orderXcreated"), ElementsAreArray({every}));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE destination_id IN (" + N(disabled) + "," + N(deleted) + ")"),
            "0");
}

// The fan-out statements restate the type rule inline (keys computed once per event, one
// overlap per destination) instead of calling event_type_matches: both must pick exactly
// the destinations the rule names, over a table of patterns and types.
TEST_P(FanOutTest, EveryTypeReachesExactlyTheDestinationsTheTypeRuleNames) {
  const std::vector<std::string> types = {
      "order.created", "order", "orders.created", "order.x.y",    "a",
      "a.b",           ".a",    "a..b",           "invoice.paid", "orderXcreated"};
  const std::vector<std::string> patterns = {"order.created", "order.*", "order", ".*",
                                             "a.*",           "a.b.*",   "a..*",  "x.*",
                                             "order.x.*",     "a.b",     "orde.*"};
  // Every pattern alone, every pair of them, and the empty list ("every type").
  std::vector<std::vector<std::string>> lists = {{}};
  for (size_t i = 0; i < patterns.size(); ++i) {
    lists.push_back({patterns[i]});
    for (size_t j = i + 1; j < patterns.size(); ++j) lists.push_back({patterns[i], patterns[j]});
  }
  for (const auto& list : lists) CreateDestination(store_, list);
  size_t reached = 0;
  for (const std::string& type : types) {
    const std::vector<int64_t> got = FanOut(type);
    reached += got.size();
    std::string joined;
    for (int64_t id : got) joined += (joined.empty() ? "" : ",") + N(id);
    EXPECT_EQ(db_.Scalar("SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM "
                         "destinations WHERE event_type_matches(event_types, '" +
                         type + "')"),
              joined)
        << type;
  }
  // Both kinds of answer occur, so the comparison means something.
  EXPECT_GT(reached, types.size());
  EXPECT_LT(reached, types.size() * lists.size());
}

TEST_P(FanOutTest, AnEventReachesItsOwnTenantsDestinationsAmongThousandsOfTenants) {
  // 1,000 tenants of 5 destinations each, every one matching every type.
  db_.Exec(
      "INSERT INTO destinations (url, secret, tenant_id) SELECT 'https://example.com/' || g, "
      "'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 't-' || (g % 1000) "
      "FROM generate_series(1, 5000) g");
  db_.Exec("ANALYZE destinations");
  const auto create = [&](std::optional<std::string> tenant, std::vector<std::string> types) {
    Destination d = testing::TestDestination(std::move(types));
    d.tenant_id = std::move(tenant);
    auto created = store_.CreateDestination(d, 1000000);
    EXPECT_TRUE(created) << created.error().message;
    return created ? created->id : 0;
  };
  const int64_t t_orders = create("T", {"order.*"});
  const int64_t t_all = create("T", {});
  create("T", {"invoice.*"});
  const int64_t none_all = create(std::nullopt, {});

  EXPECT_THAT(FanOut("order.created", "T"), ElementsAreArray({t_orders, t_all}));
  EXPECT_THAT(FanOut("order.created"), ElementsAreArray({none_all}));
  EXPECT_EQ(FanOut("order.created", "t-7").size(), 5u);
  EXPECT_TRUE(FanOut("order.created", "nobody").empty());
  // Every delivery carries its event's tenant, and went to a destination of it.
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " d JOIN events e ON e.id = d.event_id "
                       "JOIN destinations t ON t.id = d.destination_id WHERE d.tenant_id IS "
                       "DISTINCT FROM e.tenant_id OR t.tenant_id IS DISTINCT FROM e.tenant_id"),
            "0");
  EXPECT_EQ(
      db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " dr WHERE tenant_id = 't-7'"),
      "5");
}

// Both fan-out statements find a tenant's destinations through the destinations_fan_out
// index, also with the generic plan the ingest pools use: with 20,000 destinations a scan
// would read them all for every event.
TEST(FanOutPlanTest, BothFanOutsProbeTheTenantIndexWithAGenericPlan) {
  TestDatabase db;
  db.Exec(
      "INSERT INTO destinations (url, secret, tenant_id) SELECT 'https://example.com/' || g, "
      "'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 't-' || (g % 4000) "
      "FROM generate_series(1, 20000) g");
  db.Exec("ANALYZE destinations");
  auto conn = TestDatabase::Connect(db.url());
  pqxx::nontransaction tx(*conn);
  tx.exec("SET plan_cache_mode = force_generic_plan");
  tx.exec(std::string("PREPARE single AS ") + std::string(pg::sql::kFanOut.sql));
  tx.exec(std::string("PREPARE grouped AS ") + std::string(pg::sql::kInsertEventGroup.sql));
  const auto plan = [&](const std::string& explain) {
    std::string text;
    for (const auto& row : tx.exec(explain)) text += std::string(row[0].c_str()) + "\n";
    return text;
  };
  const std::string single = plan("EXPLAIN EXECUTE single(1, 'order.created', 't-7', NULL, '{}')");
  EXPECT_THAT(single, ::testing::HasSubstr("destinations_fan_out")) << single;
  // "Has a candidate a filter?" is a probe of the partial index of filtered ones.
  EXPECT_THAT(single, ::testing::HasSubstr("destinations_filtered")) << single;
  EXPECT_THAT(single, ::testing::Not(::testing::HasSubstr("Seq Scan on destinations"))) << single;
  const std::string grouped = plan(
      "EXPLAIN EXECUTE grouped('{order.created}', '{\"{}\"}', '{NULL}', '{t-7}', '{NULL}', "
      "'{0}', '{NULL}', '{NULL}', 'webhookd_wakeup', '{NULL}')");
  EXPECT_THAT(grouped, ::testing::HasSubstr("destinations_fan_out")) << grouped;
  EXPECT_THAT(grouped, ::testing::HasSubstr("destinations_filtered")) << grouped;
  EXPECT_THAT(grouped, ::testing::Not(::testing::HasSubstr("Seq Scan on destinations"))) << grouped;
}

TEST_P(FanOutTest, AnEventMatchingNothingIsStoredWithoutDeliveries) {
  CreateDestination(store_, {"invoice.paid"});
  CreateDestination(store_, {}, /*enabled=*/false);
  const IngestReceipt receipt = Ingest("order.created");
  ASSERT_GT(receipt.event.id, 0);
  EXPECT_TRUE(receipt.event.deliveries.empty());
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE id = " + N(receipt.event.id)), "1");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " dr"), "0");
  auto event = store_.GetEvent(receipt.event.id, Scope::All());
  ASSERT_TRUE(event);
  EXPECT_EQ(event->type, "order.created");
  EXPECT_EQ(event->payload, R"({"n":1})");
  EXPECT_TRUE(event->deliveries.empty());
}

TEST_P(FanOutTest, ThePayloadBytesAreKeptExactly) {
  CreateDestination(store_, {});
  const std::string payload =
      R"({"q":"say \"hi\"","b":"a\\b","u":"\u00e9 Ã©","n":null,"s":"NULL","c":"{1,2}"})";
  std::optional<IdempotencyKey> key;
  if (GetParam()) key = IdempotencyKey{"payload", "h"};
  auto r = store_.InsertEvent(NewEvent{"a.b", payload, std::nullopt}, key);
  ASSERT_TRUE(r) << r.error().message;
  auto event = store_.GetEvent(r->event.id, Scope::All());
  ASSERT_TRUE(event);
  EXPECT_EQ(event->payload, payload);
  EXPECT_EQ(db_.Scalar("SELECT payload FROM events WHERE id = " + N(r->event.id)), payload);
  auto claimed = store_.ClaimDue(10, std::chrono::hours(1), 16);
  ASSERT_TRUE(claimed);
  ASSERT_EQ(claimed->deliveries.size(), 1u);
  EXPECT_EQ(claimed->deliveries[0].payload, payload);
}

INSTANTIATE_TEST_SUITE_P(BothIngestPaths, FanOutTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Keyed" : "Grouped"; });

class IngestPgTest : public ::testing::Test {
 protected:
  Result<IngestReceipt> Ingest(const std::string& type,
                               std::optional<int64_t> destination_id = std::nullopt,
                               std::optional<IdempotencyKey> key = std::nullopt) {
    return store_.InsertEvent(NewEvent{type, R"({"id":123})", destination_id}, key);
  }

  // Hands every event to InsertEventLater at once, so that they share commit groups, and
  // waits for their answers: each result, and how many times each was answered.
  struct Answers {
    std::vector<Result<IngestReceipt>> results;
    std::vector<int> counts;
  };
  Answers IngestAllLater(std::vector<NewEvent> events) {
    struct State {
      std::mutex mu;
      std::condition_variable all;
      size_t answered = 0;
      Answers answers;
    };
    auto state = std::make_shared<State>();  // outlives a wait that gives up
    state->answers.results.resize(events.size());
    state->answers.counts.assign(events.size(), 0);
    for (size_t i = 0; i < events.size(); ++i) {
      EventStore::InsertDone done = [state, i, n = events.size()](Result<IngestReceipt> r) {
        std::lock_guard lock(state->mu);
        ++state->answers.counts[i];
        state->answers.results[i] = std::move(r);
        if (++state->answered == n) state->all.notify_one();
      };
      EXPECT_TRUE(store_.InsertEventLater(events[i], done));
    }
    std::unique_lock lock(state->mu);
    EXPECT_TRUE(state->all.wait_for(lock, std::chrono::seconds(30),
                                    [&] { return state->answered == events.size(); }));
    return state->answers;
  }

  TestDatabase db_;
  pg::PgStore store_{db_.url(), pg::PgStore::Options{.api_connections = 4}};
};

TEST_F(IngestPgTest, ATargetedEventGoesToExactlyThatDestinationIgnoringFilters) {
  const int64_t other = CreateDestination(store_, {"invoice.paid"});
  CreateDestination(store_, {});
  CreateDestination(store_, {"order.*"});

  for (bool keyed : {false, true}) {
    std::optional<IdempotencyKey> key;
    if (keyed) key = IdempotencyKey{"targeted", "h"};
    auto r = Ingest("order.created", other, key);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->event.deliveries.size(), 1u);
    EXPECT_EQ(r->event.deliveries[0].destination_id, other);
    EXPECT_EQ(
        db_.Scalar("SELECT string_agg(destination_id::text, ',') FROM " + testing::kDeliveryState +
                   " dr"
                   " WHERE event_id = " +
                   N(r->event.id)),
        N(other));
  }
}

TEST_F(IngestPgTest, AnUnknownOrDeletedTargetIsInvalidAndWritesNothing) {
  const int64_t deleted = CreateDestination(store_, {});
  const int64_t live = CreateDestination(store_, {});
  ASSERT_TRUE(store_.DeleteDestination(deleted, Scope::All()));

  for (int64_t target : {deleted, live + 1000}) {
    for (bool keyed : {false, true}) {
      std::optional<IdempotencyKey> key;
      if (keyed) key = IdempotencyKey{"k-" + N(target), "h"};
      auto r = Ingest("order.created", target, key);
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().kind, ErrorKind::kInvalid);
      ASSERT_EQ(r.error().fields.size(), 1u);
      EXPECT_EQ(r.error().fields[0].field, "destination_id");
    }
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " dr"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM idempotency_keys"), "0");
}

// A commit whose connection broke is in doubt. After a crash the events sequence can hand
// the in-doubt transaction's ids to a later one, so finding the ids is not proof: the check
// must find the in-doubt transaction's own rows, or two 202s would name one event.
TEST_F(IngestPgTest, ACommitInDoubtIsFoundByItsOwnTransactionNotByItsIdsAlone) {
  CreateDestination(store_, {});
  auto committed = Ingest("order.created");
  ASSERT_TRUE(committed) << committed.error().message;
  auto second = Ingest("order.created");
  ASSERT_TRUE(second) << second.error().message;
  const int64_t id = committed->event.id;
  const Timestamp at = committed->event.created_at;

  EXPECT_TRUE(pg::CommittedAfterDoubt(db_.url(), {id}, at));
  // The same id drawn by a transaction that began a microsecond earlier (before the crash).
  EXPECT_FALSE(pg::CommittedAfterDoubt(db_.url(), {id}, at - std::chrono::microseconds(1)));
  EXPECT_FALSE(pg::CommittedAfterDoubt(db_.url(), {id + 1000}, at));
  // A group is one transaction: its ids with another transaction's time are not it.
  EXPECT_FALSE(pg::CommittedAfterDoubt(db_.url(), {second->event.id}, committed->event.created_at));
}

TEST_F(IngestPgTest, TheSameKeyAndBodyAnswersTheOriginalAndCreatesNothing) {
  CreateDestination(store_, {});
  CreateDestination(store_, {"order.*"});
  const IdempotencyKey key{"abc", "hash-1"};

  auto first = Ingest("order.created", std::nullopt, key);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->replayed);
  ASSERT_EQ(first->event.deliveries.size(), 2u);

  auto second = Ingest("order.created", std::nullopt, key);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->replayed);
  EXPECT_EQ(second->event.id, first->event.id);
  EXPECT_EQ(second->event.type, "order.created");
  ASSERT_EQ(second->event.deliveries.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(second->event.deliveries[i].id, first->event.deliveries[i].id);
    EXPECT_EQ(second->event.deliveries[i].status, DeliveryStatus::kPending);
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "1");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " dr"), "2");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM idempotency_keys"), "1");

  auto other_body = Ingest("order.created", std::nullopt, IdempotencyKey{"abc", "hash-2"});
  ASSERT_FALSE(other_body);
  EXPECT_EQ(other_body.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "1");
  EXPECT_EQ(db_.Scalar("SELECT request_hash FROM idempotency_keys WHERE key = 'abc'"), "hash-1");

  // Another key is another event.
  auto other_key = Ingest("order.created", std::nullopt, IdempotencyKey{"abd", "hash-1"});
  ASSERT_TRUE(other_key);
  EXPECT_FALSE(other_key->replayed);
  EXPECT_NE(other_key->event.id, first->event.id);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "2");
}

TEST_F(IngestPgTest, AKeyOlderThanADayIsFree) {
  CreateDestination(store_, {});
  auto first = Ingest("a.b", std::nullopt, IdempotencyKey{"old", "h1"});
  ASSERT_TRUE(first);
  db_.Exec("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'");
  auto second = Ingest("a.b", std::nullopt, IdempotencyKey{"old", "h2"});
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(second->replayed);
  EXPECT_NE(second->event.id, first->event.id);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "2");
}

TEST_F(IngestPgTest, FiftyConcurrentIngestsWithOneKeyMakeOneEvent) {
  pg::PgStore store(db_.url(), pg::PgStore::Options{.api_connections = 16});
  CreateDestination(store, {});
  constexpr int kThreads = 50;
  std::latch start(kThreads);
  std::vector<Result<IngestReceipt>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = store.InsertEvent(NewEvent{"order.created", R"({"id":1})", std::nullopt},
                                     IdempotencyKey{"same-key", "same-hash"});
    });
  }
  for (auto& t : threads) t.join();

  int originals = 0;
  std::set<int64_t> ids;
  for (const auto& r : results) {
    ASSERT_TRUE(r) << r.error().message;
    ids.insert(r->event.id);
    ASSERT_EQ(r->event.deliveries.size(), 1u);
    if (!r->replayed) ++originals;
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(originals, 1);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "1");
  EXPECT_EQ(db_.Scalar("SELECT id FROM events"), N(*ids.begin()));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " dr"), "1");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM idempotency_keys"), "1");
}

// Ingests whose API key was not looked up before (NewEvent::verify_key_hash) are checked
// in their own transaction: a revoked or unknown key's event is refused and writes
// nothing, while the others in the same commit group go through.
TEST_F(IngestPgTest, AnIngestWithARevokedKeyIsRefusedAndWritesNothing) {
  pg::PgStore store(db_.url(), pg::PgStore::Options{.api_connections = 16});
  CreateDestination(store, {});
  auto live = store.CreateApiKey(NewApiKey{"live", Role::kPublisher, std::string(64, 'a')});
  auto revoked = store.CreateApiKey(NewApiKey{"revoked", Role::kPublisher, std::string(64, 'b')});
  ASSERT_TRUE(live && revoked);
  ASSERT_TRUE(store.RevokeApiKey(revoked->id));
  const std::vector<std::string> hashes = {std::string(64, 'a'), std::string(64, 'b'),
                                           std::string(64, 'c'), ""};
  constexpr int kThreads = 40;  // concurrent, so the un-keyed ones share commit groups
  std::latch start(kThreads);
  std::vector<Result<IngestReceipt>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      NewEvent event{"order.created", R"({"id":1})", std::nullopt, hashes[i % 4]};
      std::optional<IdempotencyKey> key;
      if (i % 8 >= 4) key = IdempotencyKey{"key-" + N(i), "hash"};  // the one-by-one path
      start.arrive_and_wait();
      results[i] = store.InsertEvent(event, key);
    });
  }
  for (auto& t : threads) t.join();

  int accepted = 0;
  for (int i = 0; i < kThreads; ++i) {
    SCOPED_TRACE(i);
    const bool valid = i % 4 == 0 || i % 4 == 3;  // the live key, or no key to check
    ASSERT_EQ(results[i].has_value(), valid);
    if (valid) {
      ++accepted;
      EXPECT_EQ(results[i]->event.deliveries.size(), 1u);
    } else {
      EXPECT_EQ(results[i].error().kind, ErrorKind::kUnauthorized);
    }
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), N(accepted));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " dr"), N(accepted));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM idempotency_keys"), N(accepted / 2));
}

// The wake-ups the workers would get, counted on a connection of the test's own.
class Wakeups : public pqxx::notification_receiver {
 public:
  explicit Wakeups(pqxx::connection_base& c) : pqxx::notification_receiver(c, "webhookd_wakeup") {}
  void operator()(const std::string&, int) override { ++count; }
  int count = 0;
};

// Ingests taken to be answered later (the API's socket threads hand them over this way)
// are each answered once, with their own receipt, after their group has committed; a
// group that made deliveries wakes the workers, one that made none does not.
TEST_F(IngestPgTest, EventsTakenForLaterAreEachAnsweredOnceAfterTheirCommit) {
  CreateDestination(store_, {"order.*"});
  auto listener = TestDatabase::Connect(db_.url());
  Wakeups wakeups(*listener);
  listener->get_notifs();

  constexpr int kEvents = 60;
  std::vector<NewEvent> events;
  for (int i = 0; i < kEvents; ++i) {
    events.push_back(NewEvent{"order.created", R"({"i":)" + N(i) + "}", std::nullopt});
  }
  const auto [results, answers] = IngestAllLater(std::move(events));
  std::set<int64_t> ids;
  for (int i = 0; i < kEvents; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(answers[i], 1);
    ASSERT_TRUE(results[i]) << results[i].error().message;
    EXPECT_EQ(results[i]->event.payload, R"({"i":)" + N(i) + "}");
    EXPECT_EQ(results[i]->event.deliveries.size(), 1u);
    EXPECT_EQ(db_.Scalar("SELECT payload FROM events WHERE id = " + N(results[i]->event.id)),
              R"({"i":)" + N(i) + "}");
    ids.insert(results[i]->event.id);
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kEvents));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " dr"), N(kEvents));
  for (int tries = 0; tries < 50 && wakeups.count == 0; ++tries)
    listener->await_notification(0, 100000);
  EXPECT_GT(wakeups.count, 0);

  // No delivery, no wake-up.
  wakeups.count = 0;
  std::promise<Result<IngestReceipt>> unmatched;
  NewEvent event{"invoice.paid", "{}", std::nullopt};
  EventStore::InsertDone done = [&](Result<IngestReceipt> r) { unmatched.set_value(std::move(r)); };
  ASSERT_TRUE(store_.InsertEventLater(event, done));
  auto r = unmatched.get_future().get();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->event.deliveries.empty());
  listener->await_notification(0, 300000);
  EXPECT_EQ(wakeups.count, 0);
}

// One group of many types: each event reaches the destinations its own type matches
// (the statement computes each distinct type's keys once for the group).
TEST_F(IngestPgTest, AGroupOfManyTypesFansEachEventOutByItsOwnType) {
  const int64_t orders = CreateDestination(store_, {"order.*"});
  const int64_t created = CreateDestination(store_, {"order.created"});
  const int64_t invoices = CreateDestination(store_, {"invoice.*"});
  const int64_t all = CreateDestination(store_, {});
  const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"order.created", {orders, created, all}},
      {"order.paid", {orders, all}},
      {"invoice.paid", {invoices, all}},
      {"user.deleted", {all}},
  };
  constexpr int kEvents = 80;
  std::vector<NewEvent> events;
  for (int i = 0; i < kEvents; ++i) {
    events.push_back(NewEvent{cases[i % cases.size()].first, "{}", std::nullopt});
  }
  const auto results = IngestAllLater(std::move(events)).results;
  for (int i = 0; i < kEvents; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(results[i]) << results[i].error().message;
    std::vector<int64_t> got;
    for (const Delivery& d : results[i]->event.deliveries) got.push_back(d.destination_id);
    EXPECT_THAT(got, UnorderedElementsAreArray(cases[i % cases.size()].second));
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                         " dr WHERE event_id = " + N(results[i]->event.id)),
              N(cases[i % cases.size()].second.size()));
  }
  // They were written in groups, not one by one (else this test tells little).
  EXPECT_LT(std::stoi(db_.Scalar("SELECT count(DISTINCT created_at) FROM events")), kEvents);
}

// One group of several tenants, types and payloads: each event reaches its own tenant's
// destinations whose types match and whose filter its own payload passes.
TEST_F(IngestPgTest, AGroupOfManyTenantsFansEachEventOutByItsTenantTypeAndPayload) {
  const auto destination = [&](std::optional<std::string> tenant, std::vector<std::string> types,
                               std::optional<std::string> filter) {
    const int64_t id = CreateDestination(store_, std::move(types));
    if (tenant)
      db_.Exec("UPDATE destinations SET tenant_id = '" + *tenant + "' WHERE id = " + N(id));
    if (filter) db_.Exec("UPDATE destinations SET filter = '" + *filter + "' WHERE id = " + N(id));
    return id;
  };
  const int64_t a_all = destination("a", {}, std::nullopt);
  const int64_t a_big = destination("a", {"order.*"}, "$.amount > 100");
  const int64_t b_orders = destination("b", {"order.*"}, std::nullopt);
  const int64_t b_small = destination("b", {}, "$.amount < 10");
  const int64_t none_all = destination(std::nullopt, {}, std::nullopt);
  struct Case {
    std::optional<std::string> tenant;
    std::string type;
    int amount;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"a", "order.created", 500, {a_all, a_big}},
      {"a", "order.created", 5, {a_all}},
      {"a", "user.deleted", 500, {a_all}},
      {"b", "order.created", 5, {b_orders, b_small}},
      {"b", "order.created", 50, {b_orders}},
      {"b", "user.deleted", 5, {b_small}},
      {std::nullopt, "order.created", 500, {none_all}},
  };
  constexpr int kEvents = 70;
  std::vector<NewEvent> events;
  for (int i = 0; i < kEvents; ++i) {
    const Case& c = cases[i % cases.size()];
    events.push_back(NewEvent{c.type, R"({"amount":)" + N(c.amount) + "}", std::nullopt});
    events.back().tenant_id = c.tenant;
  }
  const auto results = IngestAllLater(std::move(events)).results;
  for (int i = 0; i < kEvents; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(results[i]) << results[i].error().message;
    EXPECT_EQ(
        db_.Scalar("SELECT string_agg(destination_id::text, ',' ORDER BY destination_id) "
                   "FROM " +
                   testing::kDeliveryState + " dr WHERE event_id = " + N(results[i]->event.id)),
        [&] {
          std::vector<int64_t> want = cases[i % cases.size()].want;
          std::sort(want.begin(), want.end());
          std::string joined;
          for (int64_t id : want) joined += (joined.empty() ? "" : ",") + N(id);
          return joined;
        }());
  }
  EXPECT_LT(std::stoi(db_.Scalar("SELECT count(DISTINCT created_at) FROM events")), kEvents);
}

// A targeted event has checks of its own: it is not taken, and stays as it was.
TEST_F(IngestPgTest, ATargetedEventIsNotTakenForLater) {
  const int64_t target = CreateDestination(store_, {});
  NewEvent event{"order.created", "{}", target};
  bool called = false;
  EventStore::InsertDone done = [&](Result<IngestReceipt>) { called = true; };
  EXPECT_FALSE(store_.InsertEventLater(event, done));
  EXPECT_EQ(event.type, "order.created");
  EXPECT_EQ(event.payload, "{}");
  EXPECT_FALSE(called);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "0");
}

// A store that goes away with events still queued answers every one of them.
TEST_F(IngestPgTest, EventsTakenForLaterAreAllAnsweredWhenTheStoreCloses) {
  std::atomic<int> answered{0}, committed{0};
  {
    pg::PgStore store(db_.url(), pg::PgStore::Options{.api_connections = 1});
    CreateDestination(store, {});
    for (int i = 0; i < 200; ++i) {
      NewEvent event{"order.created", "{}", std::nullopt};
      EventStore::InsertDone done = [&](Result<IngestReceipt> r) {
        if (r) ++committed;
        ++answered;
      };
      ASSERT_TRUE(store.InsertEventLater(event, done));
    }
  }
  EXPECT_EQ(answered, 200);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), N(committed.load()));
}

TEST_F(IngestPgTest, DeletingADestinationCancelsOnlyItsUnfinishedDeliveries) {
  const int64_t doomed = CreateDestination(store_, {});
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Ingest("a.b"));
  auto claimed = store_.ClaimDue(10, std::chrono::hours(1), 16);
  ASSERT_TRUE(claimed);
  ASSERT_EQ(claimed->deliveries.size(), 4u);
  const int64_t keeper = CreateDestination(store_, {});
  auto kept = Ingest("a.b", keeper);
  ASSERT_TRUE(kept);

  // 0 succeeds, 1 is dead-lettered, 2 is released (pending), 3 stays in flight.
  std::vector<AttemptRecord> records = {
      RecordFor(claimed->deliveries[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess),
      RecordFor(claimed->deliveries[1], DeliveryStatus::kDeadLettered, 400, Outcome::kPermanent)};
  records[1].dead_letter_reason = DeadLetterReason::kPermanentFailure;
  auto applied = store_.RecordOutcomes(records, {});
  ASSERT_TRUE(applied) << applied.error().message;
  ASSERT_EQ(applied->applied.size(), 2u);
  const ReleasedClaim release{claimed->deliveries[2].delivery_id,
                              claimed->deliveries[2].claim_token};
  ASSERT_EQ(store_.ReleaseClaims({&release, 1}).value_or(-1), 1);

  ASSERT_TRUE(store_.DeleteDestination(doomed, Scope::All()));

  auto status = [&](int64_t id) {
    return db_.Scalar("SELECT status FROM " + testing::kDeliveryState + " dr WHERE id = " + N(id));
  };
  EXPECT_EQ(status(claimed->deliveries[0].delivery_id), "succeeded");
  EXPECT_EQ(status(claimed->deliveries[1].delivery_id), "dead_lettered");
  EXPECT_EQ(status(claimed->deliveries[2].delivery_id), "cancelled");
  EXPECT_EQ(status(claimed->deliveries[3].delivery_id), "cancelled");
  EXPECT_EQ(status(kept->event.deliveries[0].id), "pending");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'cancelled' AND"
                       " (next_attempt_at IS NOT NULL OR claim_token IS NOT NULL)"),
            "0");

  // The worker that held delivery 3 changes nothing when it reports.
  const ClaimedDelivery& late = claimed->deliveries[3];
  const AttemptRecord stale = RecordFor(late, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess);
  auto ignored = store_.RecordOutcomes({&stale, 1}, {});
  ASSERT_TRUE(ignored);
  EXPECT_TRUE(ignored->applied.empty());
  EXPECT_EQ(status(late.delivery_id), "cancelled");

  auto get = store_.GetDestination(doomed, Scope::All());
  ASSERT_FALSE(get);
  EXPECT_EQ(get.error().kind, ErrorKind::kNotFound);
  auto again = store_.DeleteDestination(doomed, Scope::All());
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ErrorKind::kNotFound);
  DestinationFields enable;
  enable.enabled = true;
  auto update = store_.UpdateDestination(doomed, enable, Scope::All());
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().kind, ErrorKind::kNotFound);
  auto list = store_.ListDestinations({}, Page{}, Scope::All());
  ASSERT_TRUE(list);
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].id, keeper);
  // New events no longer reach it.
  auto later = Ingest("a.b");
  ASSERT_TRUE(later);
  ASSERT_EQ(later->event.deliveries.size(), 1u);
  EXPECT_EQ(later->event.deliveries[0].destination_id, keeper);
}

// Pages through `list` with `limit`, checking each page and its cursor.
template <typename T, typename List>
std::vector<int64_t> PageThrough(List list, int limit) {
  std::vector<int64_t> ids;
  std::optional<int64_t> cursor;
  for (int pages = 0; pages < 100; ++pages) {
    auto page = list(Page{limit, cursor});
    EXPECT_TRUE(page) << page.error().message;
    if (!page) break;
    EXPECT_LE(static_cast<int>(page->items.size()), limit);
    for (const T& item : page->items) ids.push_back(item.id);
    if (!page->next_before_id) break;
    // A full page, and the cursor is its last (oldest) item.
    EXPECT_EQ(static_cast<int>(page->items.size()), limit);
    EXPECT_EQ(*page->next_before_id, page->items.back().id);
    cursor = page->next_before_id;
  }
  return ids;
}

std::vector<int64_t> NewestFirst(std::vector<int64_t> ids) {
  std::sort(ids.rbegin(), ids.rend());
  return ids;
}

TEST_F(IngestPgTest, DestinationsPageNewestFirst) {
  std::vector<int64_t> all;
  for (int i = 0; i < 7; ++i) all.push_back(CreateDestination(store_, {}));
  const int64_t deleted = CreateDestination(store_, {});
  ASSERT_TRUE(store_.DeleteDestination(deleted, Scope::All()));

  auto list = [&](const Page& p) { return store_.ListDestinations({}, p, Scope::All()); };
  auto first = store_.ListDestinations({}, Page{3, std::nullopt}, Scope::All());
  ASSERT_TRUE(first);
  ASSERT_EQ(first->items.size(), 3u);
  EXPECT_EQ(first->items[0].id, all[6]);
  EXPECT_EQ(first->next_before_id, all[4]);
  auto last = store_.ListDestinations({}, Page{3, all[1]}, Scope::All());
  ASSERT_TRUE(last);
  ASSERT_EQ(last->items.size(), 1u);
  EXPECT_FALSE(last->next_before_id);

  EXPECT_EQ(PageThrough<Destination>(list, 3), NewestFirst(all));
  EXPECT_EQ(PageThrough<Destination>(list, 7), NewestFirst(all));
  EXPECT_EQ(PageThrough<Destination>(list, 1), NewestFirst(all));
  EXPECT_EQ(PageThrough<Destination>(list, 1000), NewestFirst(all));
  // Exactly a page: no cursor to an empty page.
  auto whole = store_.ListDestinations({}, Page{7, std::nullopt}, Scope::All());
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->items.size(), 7u);
  EXPECT_FALSE(whole->next_before_id);
}

TEST_F(IngestPgTest, EventsPageNewestFirstWithTypeAndTimeFilters) {
  std::vector<int64_t> ab, cd;
  for (int i = 0; i < 12; ++i) {
    auto r = Ingest(i % 3 == 2 ? "c.d" : "a.b");
    ASSERT_TRUE(r);
    (i % 3 == 2 ? cd : ab).push_back(r->event.id);
  }
  // One minute apart, in id order, so the time filters have exact boundaries. By rank, as
  // an id carries its day in its high bits (store/pg/schema/history_id.sql).
  db_.Exec(
      "UPDATE events e SET created_at = '2025-01-01T00:00:00Z'::timestamptz"
      " + r.n * interval '1 minute'"
      " FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM events) r WHERE e.id = r.id");
  const Timestamp epoch = *ParseRfc3339("2025-01-01T00:00:00Z");
  auto created = [&](int64_t id) {
    return epoch + std::chrono::minutes(
                       std::stoll(db_.Scalar("SELECT count(*) FROM events WHERE id <= " + N(id))));
  };

  EventFilter by_type;
  by_type.type = "a.b";
  EXPECT_EQ(PageThrough<Event>(
                [&](const Page& p) { return store_.ListEvents(by_type, p, Scope::All()); }, 3),
            NewestFirst(ab));
  EventFilter none;
  std::vector<int64_t> all = ab;
  all.insert(all.end(), cd.begin(), cd.end());
  EXPECT_EQ(PageThrough<Event>(
                [&](const Page& p) { return store_.ListEvents(none, p, Scope::All()); }, 5),
            NewestFirst(all));

  // after is inclusive, before exclusive.
  EventFilter window = by_type;
  window.after = created(ab[2]);
  window.before = created(ab[6]);
  EXPECT_EQ(PageThrough<Event>(
                [&](const Page& p) { return store_.ListEvents(window, p, Scope::All()); }, 2),
            NewestFirst({ab[2], ab[3], ab[4], ab[5]}));
  EventFilter after_only;
  after_only.after = created(cd[2]);
  std::vector<int64_t> expected;
  for (int64_t id : all) {
    if (id >= cd[2]) expected.push_back(id);
  }
  EXPECT_EQ(PageThrough<Event>(
                [&](const Page& p) { return store_.ListEvents(after_only, p, Scope::All()); }, 3),
            NewestFirst(expected));
  EventFilter before_only;
  before_only.before = created(ab[1]);
  EXPECT_EQ(PageThrough<Event>(
                [&](const Page& p) { return store_.ListEvents(before_only, p, Scope::All()); }, 3),
            NewestFirst({ab[0]}));
  EventFilter unknown;
  unknown.type = "x.y";
  auto empty = store_.ListEvents(unknown, Page{}, Scope::All());
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->items.empty());
  EXPECT_FALSE(empty->next_before_id);
}

TEST_F(IngestPgTest, DeliveriesPageNewestFirstByDestinationAndStatus) {
  const int64_t a = CreateDestination(store_, {});
  const int64_t b = CreateDestination(store_, {});
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Ingest("a.b"));
  // Two of a's deliveries in flight: b waits while they are claimed.
  DestinationFields off, on;
  off.enabled = false;
  on.enabled = true;
  ASSERT_TRUE(store_.UpdateDestination(b, off, Scope::All()));
  auto claimed = store_.ClaimDue(2, std::chrono::hours(1), 16);
  ASSERT_TRUE(claimed);
  ASSERT_EQ(claimed->deliveries.size(), 2u);
  ASSERT_TRUE(store_.UpdateDestination(b, on, Scope::All()));

  auto ids = [&](const std::string& where) {
    return Ids(db_.Scalar("SELECT string_agg(id::text, ',' ORDER BY id DESC) FROM " +
                          testing::kDeliveryState + " dr WHERE " + where));
  };
  auto page_through = [&](DeliveryFilter filter, int limit) {
    return PageThrough<Delivery>(
        [&](const Page& p) { return store_.ListDeliveries(filter, p, Scope::All()); }, limit);
  };

  EXPECT_EQ(page_through({a, std::nullopt}, 2), ids("destination_id = " + N(a)));
  EXPECT_EQ(page_through({b, std::nullopt}, 2), ids("destination_id = " + N(b)));
  EXPECT_EQ(page_through({a, DeliveryStatus::kInFlight}, 1),
            NewestFirst({claimed->deliveries[0].delivery_id, claimed->deliveries[1].delivery_id}));
  const auto a_pending = page_through({a, DeliveryStatus::kPending}, 2);
  EXPECT_EQ(a_pending.size(), 3u);
  EXPECT_EQ(a_pending, ids("destination_id = " + N(a) + " AND status = 'pending'"));
  const auto pending = page_through({std::nullopt, DeliveryStatus::kPending}, 3);
  EXPECT_EQ(pending.size(), 8u);
  EXPECT_EQ(pending, ids("status = 'pending'"));
  EXPECT_EQ(page_through({std::nullopt, DeliveryStatus::kInFlight}, 1),
            NewestFirst({claimed->deliveries[0].delivery_id, claimed->deliveries[1].delivery_id}));
  EXPECT_EQ(page_through({}, 4), ids("true"));
  EXPECT_TRUE(page_through({b, DeliveryStatus::kSucceeded}, 3).empty());
}

}  // namespace
}  // namespace webhookd::ingest_pgtest
