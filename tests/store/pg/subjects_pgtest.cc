// Subjects and their erasure on a real PostgreSQL (docs/privacy.md): every ingest path
// indexes an event's subjects, a list by subject stays within its tenant, and an erasure
// takes the payload, the response bodies, the unfinished deliveries, the replays and the
// subject of the events it names, and nothing else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "core/validation.h"
#include "store/pg/pg_store.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::subjects_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

class SubjectsPgTest : public testing::PgTest {
 protected:
  void SetUp() override {
    Destination acme = testing::TestDestination();
    acme.tenant_id = "acme";
    acme_ = CreateDestination(acme);
    Destination globex = testing::TestDestination();
    globex.tenant_id = "globex";
    globex_ = CreateDestination(globex);
  }

  // Through the one-transaction path (a key) or the group committer (none).
  int64_t Publish(const std::string& tenant, std::vector<std::string> subjects,
                  const std::string& payload = R"({"email":"ann@example.com"})",
                  bool keyed = false) {
    NewEvent e{"user.updated", payload, std::nullopt};
    e.tenant_id = tenant;
    e.subjects = std::move(subjects);
    std::optional<IdempotencyKey> key;
    if (keyed) key = IdempotencyKey{"k" + std::to_string(++keys_), "hash"};
    auto r = store_.InsertEvent(e, key);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->event.id : 0;
  }

  std::vector<int64_t> Named(const std::string& subject, const Scope& scope,
                             std::optional<std::string> tenant_filter = std::nullopt) {
    EventFilter filter;
    filter.subject = subject;
    filter.tenant_id = std::move(tenant_filter);
    auto r = store_.ListEvents(filter, Page{.limit = 100, .before_id = std::nullopt}, scope);
    EXPECT_TRUE(r) << r.error().message;
    std::vector<int64_t> ids;
    if (r) {
      for (const Event& e : r->items) ids.push_back(e.id);
    }
    return ids;
  }

  Erasure Erase(const std::string& subject, const Scope& scope,
                std::optional<std::string> tenant = std::nullopt) {
    auto requested = store_.RequestErasure(subject, tenant, scope);
    EXPECT_TRUE(requested) << requested.error().message;
    if (!requested) return {};
    EXPECT_EQ(requested->status, ErasureStatus::kRunning);
    auto ran = store_.RunErasures(1000, 100);
    EXPECT_TRUE(ran) << ran.error().message;
    auto done = store_.GetErasure(requested->id, scope);
    EXPECT_TRUE(done) << done.error().message;
    return done ? *done : Erasure{};
  }

  int64_t acme_ = 0, globex_ = 0;
  int keys_ = 0;
};

// One table of cases through the C++ rule and the SQL one (publish()'s), so that the two
// homes of the rule cannot drift apart.
TEST_F(SubjectsPgTest, TheSqlAndTheApiHoldSubjectsToOneRule) {
  const std::vector<std::string> cases = {"user:42",
                                          "email:ann@example.com",
                                          "",
                                          " ",
                                          "a b",
                                          "é",
                                          "日本",
                                          "a\tb",
                                          "a\nb",
                                          "a\x7f",
                                          "a\xc2\x85",  // U+0085, a C1 control
                                          "a\xc2\xa0",  // U+00A0, not a control
                                          std::string(256, 'x'),
                                          std::string(257, 'x'),
                                          std::string(85, 'x') +
                                              "日本語日本語日本語日本語日本語"
                                              "日本語日本語日本語日本語日本語"
                                              "日本語日本語日本語日本語日本語"
                                              "日本語日本語日本語日本語日本語"};
  pqxx::connection c(db_.url());
  pqxx::nontransaction tx(c);
  for (const std::string& s : cases) {
    auto r = tx.exec_params("SELECT webhookd.subjects_problem(ARRAY[$1]) IS NULL", s);
    EXPECT_EQ(r[0][0].as<bool>(), IsValidSubject(s)) << "subject \"" << s << "\"";
  }
  // Text that is not UTF-8 never reaches PostgreSQL, which would refuse it first.
  EXPECT_FALSE(IsValidSubject(std::string(128, 'x') + "\xc3"));
  auto subjects = [](int n) {
    std::string array = "ARRAY['s0'";
    for (int i = 1; i < n; ++i) array += ",'s" + std::to_string(i) + "'";
    return array + "]";
  };
  EXPECT_EQ(db_.Scalar("SELECT webhookd.subjects_problem(" + subjects(16) + ") IS NULL"), "t");
  EXPECT_EQ(db_.Scalar("SELECT webhookd.subjects_problem(" + subjects(17) + ") IS NULL"), "f");
  EXPECT_EQ(db_.Scalar("SELECT webhookd.subjects_problem(ARRAY['a', NULL]) IS NULL"), "f");
}

TEST_F(SubjectsPgTest, EveryIngestPathIndexesTheSubjectsOnce) {
  const int64_t grouped = Publish("acme", {"user:42", "email:ann@example.com"});
  const int64_t keyed = Publish("acme", {"user:42"}, R"({"a":1})", /*keyed=*/true);
  const std::string published = db_.Scalar(
      "SELECT substr(webhookd.publish('user.updated', '{\"b\":2}', tenant_id => 'acme', "
      "subjects => ARRAY['user:42', 'user:42', 'order:7']), 5)");
  const int64_t none = Publish("acme", {});
  EXPECT_THAT(Named("user:42", Scope::All()),
              ::testing::ElementsAre(std::stoll(published), keyed, grouped));
  EXPECT_THAT(Named("email:ann@example.com", Scope::All()), ::testing::ElementsAre(grouped));
  EXPECT_THAT(Named("order:7", Scope::All()), ::testing::ElementsAre(std::stoll(published)));
  // A subject given twice is kept once.
  EXPECT_EQ(db_.Scalar("SELECT subjects FROM events WHERE id = " + published), "{user:42,order:7}");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM event_subjects WHERE event_id = " + published), "2");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM event_subjects WHERE event_id = " + N(none)), "0");
  auto read = store_.GetEvent(grouped, Scope::All());
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_THAT(read->subjects, ::testing::ElementsAre("user:42", "email:ann@example.com"));
  // No subject's text is in the index.
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM event_subjects WHERE position(convert_to('user', "
                       "'UTF8') in subject_hash) > 0 OR octet_length(subject_hash) <> 32"),
            "0");
}

TEST_F(SubjectsPgTest, PublishRefusesBadSubjectsWithTheApisMessageAndWritesNothing) {
  pqxx::connection c(db_.url());
  pqxx::work tx(c);
  try {
    tx.exec("SELECT webhookd.publish('user.updated', '{}', subjects => ARRAY[''])");
    FAIL() << "an empty subject was taken";
  } catch (const pqxx::sql_error& e) {
    EXPECT_EQ(e.sqlstate(), "22023");
    EXPECT_THAT(e.what(), ::testing::HasSubstr(std::string("subjects: ") + kSubjectsRule));
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "0");
}

// The access matrix: a tenant's key finds its own tenant's events naming a subject, never
// another tenant's naming the same one; an operator's key finds all, or one tenant's.
TEST_F(SubjectsPgTest, AListBySubjectStaysWithinItsTenant) {
  const int64_t a1 = Publish("acme", {"user:42"});
  const int64_t g1 = Publish("globex", {"user:42"});
  const int64_t a2 = Publish("acme", {"user:42"}, R"({"x":1})", /*keyed=*/true);
  EXPECT_THAT(Named("user:42", Scope::Tenant("acme")), ::testing::ElementsAre(a2, a1));
  EXPECT_THAT(Named("user:42", Scope::Tenant("globex")), ::testing::ElementsAre(g1));
  EXPECT_THAT(Named("user:42", Scope::Tenant("initech")), ::testing::IsEmpty());
  // A tenant's key asking for another tenant finds nothing, as for an unknown one.
  EXPECT_THAT(Named("user:42", Scope::Tenant("acme"), "globex"), ::testing::IsEmpty());
  EXPECT_THAT(Named("user:42", Scope::All()), ::testing::ElementsAre(a2, g1, a1));
  EXPECT_THAT(Named("user:42", Scope::All(), "globex"), ::testing::ElementsAre(g1));
  EXPECT_THAT(Named("user:43", Scope::All()), ::testing::IsEmpty());
}

TEST_F(SubjectsPgTest, AnErasureTakesWhatItNamesAndKeepsIdsTypesTimesAndOutcomes) {
  // Three events of acme name user:42: one delivered with a response body, one dead-lettered,
  // one still pending. One names another subject; one of globex names the same subject.
  const int64_t delivered = Publish("acme", {"user:42", "order:7"});
  const int64_t dead = Publish("acme", {"user:42"}, R"({"dead":1})");
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 2u);
  std::vector<AttemptRecord> records;
  for (const ClaimedDelivery& c : claimed) {
    if (c.event_id == delivered) {
      AttemptRecord r = RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess);
      r.response_body = "welcome back, ann@example.com";
      records.push_back(r);
    } else if (c.event_id == dead) {
      AttemptRecord r = RecordFor(c, DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
      r.response_body = "ann@example.com is gone";
      r.error = "HTTP 410";
      r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
      records.push_back(r);
    }
  }
  ASSERT_EQ(Record(records).size(), records.size());
  const int64_t pending = Publish("acme", {"user:42"}, R"({"pending":1})");
  const int64_t other = Publish("acme", {"user:43"}, R"({"other":1})");
  const int64_t globex = Publish("globex", {"user:42"}, R"({"globex":1})");
  const std::string dead_letter =
      db_.Scalar("SELECT id FROM dead_letters WHERE event_id = " + N(dead));

  const Erasure erasure = Erase("user:42", Scope::Tenant("acme"));
  EXPECT_EQ(erasure.status, ErasureStatus::kDone);
  EXPECT_EQ(erasure.events, 3);
  EXPECT_EQ(erasure.cancelled_deliveries, 1);
  EXPECT_TRUE(erasure.finished_at);
  EXPECT_EQ(erasure.tenant_id, "acme");

  for (int64_t id : {delivered, dead, pending}) {
    auto e = store_.GetEvent(id, Scope::All());
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_TRUE(e->erased_at) << id;
    EXPECT_EQ(e->type, "user.updated");
    EXPECT_THAT(e->subjects, ::testing::Not(::testing::Contains("user:42")));
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE payload IS NULL"), "3");
  auto kept = store_.GetEvent(delivered, Scope::All());
  EXPECT_THAT(kept->subjects, ::testing::ElementsAre("order:7"));
  EXPECT_THAT(Named("order:7", Scope::All()), ::testing::ElementsAre(delivered));
  // Response bodies are emptied; outcomes, codes and counts stay.
  EXPECT_EQ(db_.Scalar("SELECT string_agg(outcome || ':' || status_code || ':' || response_body, "
                       "',' ORDER BY delivery_id) FROM attempts"),
            "success:200:,permanent:410:");
  // The pending delivery is cancelled as erased; the others keep their status.
  EXPECT_EQ(db_.Scalar("SELECT string_agg(status || ':' || coalesce(last_error, ''), ',' ORDER "
                       "BY id) FROM deliveries WHERE event_id IN (" +
                       N(delivered) + "," + N(dead) + "," + N(pending) + ")"),
            "succeeded:,dead_lettered:erased,cancelled:erased");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_queue q JOIN deliveries d ON d.id = q.id "
                       "WHERE d.event_id = " +
                       N(pending)),
            "0");
  // Its dead letter is never replayed again.
  auto replay = store_.ReplayDeadLetter(std::stoll(dead_letter), Scope::All());
  ASSERT_FALSE(replay);
  EXPECT_EQ(replay.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(replay.error().message, ::testing::HasSubstr("erased"));
  auto bulk = store_.ReplayDeadLetters(DeadLetterFilter{}, Scope::All(), std::nullopt);
  ASSERT_TRUE(bulk) << bulk.error().message;
  EXPECT_EQ(bulk->replayed, 0);
  // Nothing else changed: another subject, another tenant.
  EXPECT_EQ(db_.Scalar("SELECT payload FROM events WHERE id = " + N(other)), R"({"other":1})");
  EXPECT_EQ(db_.Scalar("SELECT payload FROM events WHERE id = " + N(globex)), R"({"globex":1})");
  EXPECT_THAT(Named("user:42", Scope::All()), ::testing::ElementsAre(globex));
  // An event accepted after the erasure is untouched.
  const int64_t later = Publish("acme", {"user:42"}, R"({"later":1})");
  ASSERT_TRUE(store_.RunErasures(1000, 100));
  EXPECT_EQ(db_.Scalar("SELECT payload FROM events WHERE id = " + N(later)), R"({"later":1})");
  EXPECT_THAT(Named("user:42", Scope::Tenant("acme")), ::testing::ElementsAre(later));
  // The record keeps the subject's hash, never the subject.
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM erasures WHERE subject_hash = "
                       "sha256(convert_to('user:42', 'UTF8'))"),
            "1");
}

// A receiver's answer, or a broker's error, may quote the payload: the error texts of the
// attempts, the deliveries and the dead letters go with it, as "erased" (NULL stays NULL).
TEST_F(SubjectsPgTest, AnErasureTakesTheErrorTextsThatMayQuoteThePayload) {
  const std::string quoted = "ann-7f3a@example.com";
  const int64_t dead = Publish("acme", {"user:42"}, R"({"email":")" + quoted + R"("})");
  auto first = Claim(10);
  ASSERT_EQ(first.size(), 1u);
  AttemptRecord retry = RecordFor(first[0], DeliveryStatus::kPending, 422, Outcome::kRetryable);
  retry.error = "ERR invalid field email=" + quoted;
  retry.response_body = "no such user " + quoted;
  ASSERT_EQ(Record({retry}).size(), 1u);
  auto second = Claim(10);
  ASSERT_EQ(second.size(), 1u);
  AttemptRecord gone =
      RecordFor(second[0], DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
  gone.error = "WRONGTYPE " + quoted + " is not a stream";
  gone.dead_letter_reason = DeadLetterReason::kPermanentFailure;
  ASSERT_EQ(Record({gone}).size(), 1u);
  // Another event still retrying, its last error quoting its payload too.
  const int64_t pending = Publish("acme", {"user:42"}, R"({"email":")" + quoted + R"("})");
  auto third = Claim(10);
  ASSERT_EQ(third.size(), 1u);
  AttemptRecord later =
      RecordFor(third[0], DeliveryStatus::kPending, std::nullopt, Outcome::kRetryable);
  later.error = "connection reset after " + quoted;
  later.wait = 1h;
  ASSERT_EQ(Record({later}).size(), 1u);
  // An attempt without an error keeps none.
  const int64_t clean = Publish("acme", {"user:42"});
  auto fourth = Claim(10);
  ASSERT_EQ(fourth.size(), 1u);
  ASSERT_EQ(
      Record({RecordFor(fourth[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)}).size(),
      1u);
  const std::string quoting = "position('" + quoted + "' in ";
  ASSERT_EQ(db_.Scalar("SELECT count(*) FROM attempts WHERE " + quoting + "error) > 0"), "3");

  EXPECT_EQ(Erase("user:42", Scope::Tenant("acme")).events, 3);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts WHERE " + quoting +
                       "coalesce(error, '') || "
                       "response_body) > 0"),
            "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM deliveries WHERE " + quoting +
                       "coalesce(last_error, '')) > 0"),
            "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE " + quoting +
                       "coalesce(last_error, '')) > 0"),
            "0");
  EXPECT_EQ(db_.Scalar("SELECT string_agg(coalesce(error, 'null'), ',' ORDER BY delivery_id, "
                       "attempt_number) FROM attempts"),
            "erased,erased,erased,null");
  EXPECT_EQ(db_.Scalar("SELECT string_agg(status || ':' || coalesce(last_error, 'null'), ',' "
                       "ORDER BY id) FROM deliveries WHERE event_id IN (" +
                       N(dead) + "," + N(pending) + "," + N(clean) + ")"),
            "dead_lettered:erased,cancelled:erased,succeeded:null");
  EXPECT_EQ(db_.Scalar("SELECT last_error FROM dead_letters WHERE event_id = " + N(dead)),
            "erased");
}

TEST_F(SubjectsPgTest, AnErasureIsSeenByItsTenantAloneAndAcrossTenantsByAnOperator) {
  Publish("acme", {"user:42"});
  Publish("globex", {"user:42"});
  auto requested = store_.RequestErasure("user:42", std::nullopt, Scope::Tenant("acme"));
  ASSERT_TRUE(requested) << requested.error().message;
  // A tenant's key erases within its tenant whatever it names.
  auto spoofed = store_.RequestErasure("user:42", "globex", Scope::Tenant("acme"));
  ASSERT_TRUE(spoofed) << spoofed.error().message;
  EXPECT_EQ(spoofed->tenant_id, "acme");
  auto seen = store_.GetErasure(requested->id, Scope::Tenant("globex"));
  ASSERT_FALSE(seen);
  EXPECT_EQ(seen.error().kind, ErrorKind::kNotFound);
  auto unknown = store_.GetErasure(requested->id + 100, Scope::Tenant("acme"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, seen.error().message);
  ASSERT_TRUE(store_.RunErasures(1000, 100));
  EXPECT_THAT(Named("user:42", Scope::All()), ::testing::SizeIs(1));
  // An operator's erasure across every tenant is no tenant's to read.
  auto everywhere = store_.RequestErasure("user:42", std::nullopt, Scope::All());
  ASSERT_TRUE(everywhere);
  EXPECT_FALSE(store_.GetErasure(everywhere->id, Scope::Tenant("globex")));
  auto ran = store_.RunErasures(1000, 100);
  ASSERT_TRUE(ran);
  EXPECT_EQ(ran->finished, 1);
  EXPECT_THAT(Named("user:42", Scope::All()), ::testing::IsEmpty());
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE payload IS NOT NULL"), "0");
}

// An erasure goes a batch at a time, each erasure's batch in turn, and adds up its counts
// over the batches; the round stops at its bound on batches.
TEST_F(SubjectsPgTest, AnErasureGoesABatchAtATimeEachInTurn) {
  for (int i = 0; i < 5; ++i) Publish("acme", {"user:1"});
  Publish("acme", {"user:2"});
  auto many = store_.RequestErasure("user:1", std::nullopt, Scope::All());
  auto one = store_.RequestErasure("user:2", std::nullopt, Scope::All());
  ASSERT_TRUE(many && one);
  // user:1's first batch, then user:2's whole erasure: a big one does not hold up a small.
  auto round = store_.RunErasures(2, 2);
  ASSERT_TRUE(round) << round.error().message;
  EXPECT_EQ(round->finished, 1);
  EXPECT_EQ(round->running, 1);
  EXPECT_EQ(store_.GetErasure(one->id, Scope::All())->status, ErasureStatus::kDone);
  auto partly = store_.GetErasure(many->id, Scope::All());
  EXPECT_EQ(partly->status, ErasureStatus::kRunning);
  EXPECT_EQ(partly->events, 2);
  EXPECT_FALSE(partly->finished_at);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE payload IS NULL"), "3");
  // The rest: 2, then 1 (a short batch: done).
  round = store_.RunErasures(2, 100);
  ASSERT_TRUE(round);
  EXPECT_EQ(round->finished, 1);
  EXPECT_EQ(round->running, 0);
  auto done = store_.GetErasure(many->id, Scope::All());
  EXPECT_EQ(done->status, ErasureStatus::kDone);
  EXPECT_EQ(done->events, 5);
  EXPECT_EQ(done->cancelled_deliveries, 5);
  EXPECT_TRUE(done->finished_at);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE payload IS NOT NULL"), "0");
}

// Each erasure is background work of the key that asked: a tenant has at most
// kMaxRunning running, and another tenant is not refused for it.
TEST_F(SubjectsPgTest, ATenantHasAtMostSoManyErasuresRunning) {
  for (int i = 0; i < ErasureStore::kMaxRunning; ++i) {
    ASSERT_TRUE(
        store_.RequestErasure("user:" + std::to_string(i), std::nullopt, Scope::Tenant("acme")));
  }
  auto refused = store_.RequestErasure("user:x", std::nullopt, Scope::Tenant("acme"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::kTooMany);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM erasures"), N(ErasureStore::kMaxRunning));
  EXPECT_TRUE(store_.RequestErasure("user:x", std::nullopt, Scope::Tenant("globex")));
  ASSERT_TRUE(store_.RunErasures(1000, 1000));
  EXPECT_TRUE(store_.RequestErasure("user:x", std::nullopt, Scope::Tenant("acme")));
}

TEST_F(SubjectsPgTest, ThePurgeTakesTheSubjectsIndexWithItsEvents) {
  const int64_t id = Publish("acme", {"user:42", "order:7"});
  db_.Exec("DELETE FROM delivery_queue");
  db_.Exec("UPDATE deliveries SET status = 'cancelled', stopped_as = 'cancelled'");
  // Kept past its day (migrations/0038_history_days.sql), the event goes row by row.
  db_.Exec("UPDATE events SET created_at = now() - interval '40 days', kept = true");
  db_.Exec("UPDATE deliveries SET kept = true");
  db_.Exec("UPDATE event_subjects SET kept = true");
  auto purged = store_.PurgeExpired(std::chrono::hours(24 * 30), 100);
  ASSERT_TRUE(purged) << purged.error().message;
  EXPECT_EQ(*purged, 1);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM event_subjects WHERE event_id = " + N(id)), "0");
}

}  // namespace
}  // namespace webhookd::subjects_pgtest
