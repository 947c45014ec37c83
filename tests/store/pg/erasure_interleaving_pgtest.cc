// An erasure beside a replay and beside a retention step, on a real PostgreSQL
// (docs/privacy.md): each is held at its critical point by a second connection (an open
// transaction, a reader the detach waits for), the other runs meanwhile, and no erased byte
// comes back whichever went first; a dead letter of an erased event is never queued again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/locks.h"
#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::erasure_interleaving_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

// What a receiver or a broker may quote back: the payload's own bytes.
constexpr const char* kQuoted = "ann-7f3a@example.com";

class ErasureInterleavingPgTest : public testing::PgTest {
 protected:
  void SetUp() override { destination_ = CreateDestination(testing::TestDestination()); }

  // An event naming user:42, dead-lettered after an attempt whose error quotes its payload.
  // Returns the dead letter's id.
  int64_t DeadLettered() {
    NewEvent e{"user.updated", std::string(R"({"email":")") + kQuoted + R"("})", destination_};
    e.subjects = {"user:42"};
    auto r = store_.InsertEvent(e, std::nullopt);
    EXPECT_TRUE(r) << r.error().message;
    event_ = r ? r->event.id : 0;
    auto claimed = Claim(10);
    EXPECT_EQ(claimed.size(), 1u);
    if (claimed.empty()) return 0;
    auto dead = RecordFor(claimed[0], DeliveryStatus::kDeadLettered, 400, Outcome::kPermanent);
    dead.error = std::string("ERR bad field ") + kQuoted;
    dead.response_body = std::string("unknown ") + kQuoted;
    dead.dead_letter_reason = DeadLetterReason::kPermanentFailure;
    EXPECT_EQ(Record({dead}).size(), 1u);
    return std::stoll(db_.Scalar("SELECT id FROM dead_letters WHERE event_id = " + N(event_)));
  }

  // True once another connection of the test's database waits for a lock; false if `f`
  // ended first (it never waited), or after 20 s.
  // `what`: the lock's kind (pg_stat_activity.wait_event), any when empty.
  template <typename T>
  bool WaitsForALock(const std::future<T>& f, const std::string& what = "") {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (f.wait_for(0s) == std::future_status::ready) return false;
      if (db_.Scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                     " AND wait_event_type = 'Lock' AND ('" +
                     what + "' = '' OR wait_event = '" + what + "')") != "0") {
        return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  // Every place an erased byte could be: none may hold the quoted text, and nothing of the
  // event is queued or claimable (a claim of it would send "data":} ).
  void ExpectNothingOfItLeft() {
    const std::string quoting = std::string("position('") + kQuoted + "' in ";
    EXPECT_EQ(
        db_.Scalar("SELECT count(*) FROM events WHERE " + quoting + "coalesce(payload, '')) > 0"),
        "0");
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts WHERE " + quoting +
                         "coalesce(error, '') || response_body) > 0"),
              "0");
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM deliveries WHERE " + quoting +
                         "coalesce(last_error, '')) > 0"),
              "0");
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE " + quoting +
                         "coalesce(last_error, '')) > 0"),
              "0");
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_queue"), "0");
    for (const ClaimedDelivery& c : Claim(10)) {
      ADD_FAILURE() << "claimed delivery " << c.delivery_id << " of event " << c.event_id
                    << " with payload \"" << c.payload << "\"";
    }
    EXPECT_EQ(db_.Scalar("SELECT erased_at IS NOT NULL FROM events WHERE id = " + N(event_)), "t");
  }

  int64_t destination_ = 0;
  int64_t event_ = 0;
};

// An outcome is being written (uncommitted: the retry's queue row updated, its attempt and
// error text written) when an erasure batch comes. The batch waits for it on the queue
// row, and its error texts, read after, include that attempt's.
TEST_F(ErasureInterleavingPgTest, AnErasureBesideAnOutcomeErasesTheOutcomesErrorText) {
  NewEvent e{"user.updated", std::string(R"({"email":")") + kQuoted + R"("})", destination_};
  e.subjects = {"user:42"};
  auto ingested = store_.InsertEvent(e, std::nullopt);
  ASSERT_TRUE(ingested) << ingested.error().message;
  event_ = ingested->event.id;
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 1u);
  const std::string delivery = N(claimed[0].delivery_id);
  // What the outcome statement writes for a retry, held open.
  auto recorder = testing::TestDatabase::Connect(db_.url());
  pqxx::work outcome(*recorder);
  outcome.exec(
      "UPDATE delivery_queue SET next_attempt_at = now() + interval '1 hour', "
      "lease_until = NULL, claim_token = NULL WHERE id = " +
      delivery);
  outcome.exec_params(
      "INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, error, "
      "outcome) VALUES ($1, 1, now(), 1, $2, 'retryable')",
      claimed[0].delivery_id, std::string("ERR bad field ") + kQuoted);
  outcome.exec_params("UPDATE deliveries SET attempt_count = 1, last_error = $2 WHERE id = $1",
                      claimed[0].delivery_id, std::string("ERR bad field ") + kQuoted);

  ASSERT_TRUE(store_.RequestErasure("user:42", std::nullopt, Scope::All()));
  auto erasing = std::async(std::launch::async, [&] { return store_.RunErasures(1000, 10); });
  EXPECT_TRUE(WaitsForALock(erasing));
  outcome.commit();
  auto round = erasing.get();
  ASSERT_TRUE(round) << round.error().message;
  EXPECT_EQ(round->finished, 1);
  EXPECT_EQ(db_.Scalar("SELECT status || ':' || last_error FROM deliveries WHERE id = " + delivery),
            "cancelled:erased");
  EXPECT_EQ(db_.Scalar("SELECT error FROM attempts WHERE delivery_id = " + delivery), "erased");
  ExpectNothingOfItLeft();
}

// The replay first: it has queued the delivery again, uncommitted, when the erasure runs.
// The erasure waits for it and then cancels what it queued.
TEST_F(ErasureInterleavingPgTest, AnErasureBesideAReplayCancelsWhatTheReplayQueued) {
  const int64_t dead_letter = DeadLettered();
  auto replayer = testing::TestDatabase::Connect(db_.url());
  pqxx::work replay(*replayer);
  ASSERT_EQ(
      replay.exec_params(std::string(pg::sql::kReplayDeadLetter.sql), dead_letter, nullptr).size(),
      1u);
  ASSERT_TRUE(store_.RequestErasure("user:42", std::nullopt, Scope::All()));
  auto erasing = std::async(std::launch::async, [&] { return store_.RunErasures(1000, 10); });
  ASSERT_TRUE(WaitsForALock(erasing));
  replay.commit();
  auto round = erasing.get();
  ASSERT_TRUE(round) << round.error().message;
  EXPECT_EQ(round->finished, 1);
  EXPECT_EQ(db_.Scalar("SELECT status || ':' || last_error FROM deliveries WHERE event_id = " +
                       N(event_)),
            "cancelled:erased");
  ExpectNothingOfItLeft();
}

// The erasure first: its batch holds the event, uncommitted, when the replay comes. The
// replay waits for it, then finds the event erased: 409, nothing queued.
TEST_F(ErasureInterleavingPgTest, AReplayBesideAnErasureFindsTheEventErased) {
  const int64_t dead_letter = DeadLettered();
  auto requested = store_.RequestErasure("user:42", std::nullopt, Scope::All());
  ASSERT_TRUE(requested) << requested.error().message;
  // The batch as PgErasureStore::RunErasures runs it, held open before its commit.
  auto eraser = testing::TestDatabase::Connect(db_.url());
  pqxx::work erase(*eraser);
  const std::string events =
      erase.exec_params(std::string(pg::sql::kLockErasureBatch.sql), requested->id, 1000)[0][0]
          .as<std::string>();
  ASSERT_EQ(events, "{" + N(event_) + "}");
  erase.exec_params(std::string(pg::sql::kRunErasure.sql), requested->id, events, 1000);
  erase.exec_params(std::string(pg::sql::kEraseErrorTexts.sql), events);

  auto replaying = std::async(std::launch::async,
                              [&] { return store_.ReplayDeadLetter(dead_letter, Scope::All()); });
  ASSERT_TRUE(WaitsForALock(replaying));
  erase.commit();
  auto replayed = replaying.get();
  ASSERT_FALSE(replayed) << "replayed as delivery " << *replayed;
  EXPECT_EQ(replayed.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(replayed.error().message, ::testing::HasSubstr("erased"));
  EXPECT_EQ(db_.Scalar("SELECT replayed_at IS NULL FROM dead_letters WHERE id = " + N(dead_letter)),
            "t");
  ExpectNothingOfItLeft();
}

// The same with a bulk replay, which comes before the batch has reached the dead letter's
// own rows: it waits for the batch and replays nothing of the erased event.
TEST_F(ErasureInterleavingPgTest, ABulkReplayBesideAnErasureSkipsTheErasedEvent) {
  DeadLettered();
  auto requested = store_.RequestErasure("user:42", std::nullopt, Scope::All());
  ASSERT_TRUE(requested) << requested.error().message;
  auto eraser = testing::TestDatabase::Connect(db_.url());
  pqxx::work erase(*eraser);
  const std::string events =
      erase.exec_params(std::string(pg::sql::kLockErasureBatch.sql), requested->id, 1000)[0][0]
          .as<std::string>();
  erase.exec_params(std::string(pg::sql::kRunErasure.sql), requested->id, events, 1000);

  auto replaying = std::async(std::launch::async, [&] {
    return store_.ReplayDeadLetters(DeadLetterFilter{}, Scope::All(), std::nullopt);
  });
  EXPECT_TRUE(WaitsForALock(replaying));
  erase.exec_params(std::string(pg::sql::kEraseErrorTexts.sql), events);
  erase.commit();
  auto replayed = replaying.get();
  ASSERT_TRUE(replayed) << replayed.error().message;
  EXPECT_EQ(replayed->replayed, 0);
  ExpectNothingOfItLeft();
}

// A retention step holds the day between its carry and its drop (a reader of the day
// keeps the detach waiting); meanwhile a dead letter of the day is replayed, so the drop
// copies its event back from the detached tables into the kept ones. An erasure asked for
// in that window waits for the step, then erases the copy.
TEST_F(ErasureInterleavingPgTest, AnErasureBesideARetentionStepErasesWhatTheStepKept) {
  const int64_t dead_letter = DeadLettered();
  const std::string day = db_.Scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')");
  auto reader = testing::TestDatabase::Connect(db_.url());
  pqxx::work reading(*reader);
  reading.exec("SELECT count(*) FROM webhookd.events_p" + day);
  auto dropping = std::async(std::launch::async,
                             [&] { return store_.DropAgedDays(SystemClock().Now() + 48h, 1); });
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  const std::string pending =
      "SELECT count(*) FROM pg_inherits WHERE inhrelid = "
      "'webhookd.events_p" +
      day + "'::regclass AND inhdetachpending";
  while (db_.Scalar(pending) != "1" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(db_.Scalar(pending), "1");

  auto replayed = store_.ReplayDeadLetter(dead_letter, Scope::All());
  ASSERT_TRUE(replayed) << replayed.error().message;
  auto requested = store_.RequestErasure("user:42", std::nullopt, Scope::All());
  ASSERT_TRUE(requested) << requested.error().message;
  auto held = store_.RunErasures(1000, 10);
  ASSERT_TRUE(held) << held.error().message;
  EXPECT_EQ(held->finished, 0);
  EXPECT_TRUE(held->held_back);

  reading.abort();
  auto dropped = dropping.get();
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->days, 1);
  EXPECT_EQ(dropped->kept_events, 1);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events_kept WHERE id = " + N(event_)), "1");

  auto round = store_.RunErasures(1000, 10);
  ASSERT_TRUE(round) << round.error().message;
  EXPECT_EQ(round->finished, 1);
  EXPECT_FALSE(round->held_back);
  auto erasure = store_.GetErasure(requested->id, Scope::All());
  ASSERT_TRUE(erasure);
  EXPECT_EQ(erasure->events, 1);
  ExpectNothingOfItLeft();
}

// The other order: an erasure batch is running when a retention step begins. The step
// waits for it (on the advisory lock, before its carry), and the day it drops holds the
// erased rows.
TEST_F(ErasureInterleavingPgTest, ARetentionStepWaitsForTheErasureBatchRunning) {
  DeadLettered();
  auto requested = store_.RequestErasure("user:42", std::nullopt, Scope::All());
  ASSERT_TRUE(requested) << requested.error().message;
  auto eraser = testing::TestDatabase::Connect(db_.url());
  pqxx::work erase(*eraser);
  ASSERT_TRUE(
      erase.exec_params(std::string(pg::sql::kShareHistoryMoveLock.sql), pg::kHistoryMoveLock)[0][0]
          .as<bool>());
  const std::string events =
      erase.exec_params(std::string(pg::sql::kLockErasureBatch.sql), requested->id, 1000)[0][0]
          .as<std::string>();
  erase.exec_params(std::string(pg::sql::kRunErasure.sql), requested->id, events, 1000);

  auto dropping = std::async(std::launch::async,
                             [&] { return store_.DropAgedDays(SystemClock().Now() + 48h, 1); });
  EXPECT_TRUE(WaitsForALock(dropping, "advisory"));
  erase.exec_params(std::string(pg::sql::kEraseErrorTexts.sql), events);
  erase.commit();
  auto dropped = dropping.get();
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->days, 1);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE id = " + N(event_)), "0");
  EXPECT_EQ(
      db_.Scalar("SELECT count(*) FROM events WHERE payload LIKE '%" + std::string(kQuoted) + "%'"),
      "0");
}

// A retention round died between its detach and its drop (its process killed): the day is
// detached, out of an erasure's reach, and the next round copies what of it is kept back
// from the detached tables. No erasure runs until that round has dropped the day.
TEST_F(ErasureInterleavingPgTest, AnErasureWaitsForADayLeftHalfDropped) {
  const int64_t dead_letter = DeadLettered();
  const std::string date = db_.Scalar("SELECT (now() AT TIME ZONE 'UTC')::date::text");
  const std::string day = db_.Scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')");
  {
    auto carrier = testing::TestDatabase::Connect(db_.url());
    pqxx::work tx(*carrier);
    tx.exec_params(std::string(pg::sql::kCarryHistoryDay.sql), date);
    tx.commit();
  }
  auto replayed = store_.ReplayDeadLetter(dead_letter, Scope::All());
  ASSERT_TRUE(replayed) << replayed.error().message;
  for (const std::string table :
       {"events", "deliveries", "attempts", "dead_letters", "event_subjects"}) {
    std::string detach = "ALTER TABLE webhookd." + table;
    detach += "_days DETACH PARTITION webhookd." + table;
    detach += "_p" + day;
    db_.Exec(detach);
  }
  auto requested = store_.RequestErasure("user:42", std::nullopt, Scope::All());
  ASSERT_TRUE(requested) << requested.error().message;
  auto held = store_.RunErasures(1000, 10);
  ASSERT_TRUE(held) << held.error().message;
  EXPECT_EQ(held->finished, 0);
  EXPECT_TRUE(held->held_back);

  auto dropped = store_.DropAgedDays(SystemClock().Now(), 1);  // not aged: it was begun
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->days, 1);
  EXPECT_EQ(dropped->kept_events, 1);
  auto round = store_.RunErasures(1000, 10);
  ASSERT_TRUE(round) << round.error().message;
  EXPECT_EQ(round->finished, 1);
  ExpectNothingOfItLeft();
}

}  // namespace
}  // namespace webhookd::erasure_interleaving_pgtest
