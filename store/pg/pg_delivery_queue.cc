#include "store/pg/pg_delivery_queue.h"

#include <algorithm>
#include <cstring>

#include "base/random.h"
#include "store/pg/exec.h"
#include "store/pg/locks.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

// A claim's token is never negative and a feed's lease token always is: on a destination
// that falls back to its feed (docs/feeds.md, "Fallback") both kinds are out at once, and
// the sweepers and the outcome statement tell a consumer's lease from a worker's by it.
int64_t NewClaimToken() {
  const std::string bytes = SecureRandomBytes(sizeof(uint64_t));
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), sizeof(bits));
  return static_cast<int64_t>(bits >> 1);
}

int64_t NewLeaseToken() { return -1 - NewClaimToken(); }

class PgWakeupListener final : public WakeupListener {
 public:
  explicit PgWakeupListener(const std::string& url)
      : conn_(PgPool::Connect(url)), receiver_(*conn_, kWakeupChannel) {}

  Result<bool> Wait(Duration timeout) override {
    try {
      const auto us = std::max<int64_t>(0, timeout.count());
      receiver_.fired = false;
      const int n = conn_->await_notification(us / 1'000'000, us % 1'000'000);
      return n > 0 || receiver_.fired;
    } catch (const std::exception& e) {
      return Fail(ErrorKind::kUnavailable, std::string("wake-up listener: ") + e.what());
    }
  }

 private:
  struct Receiver final : pqxx::notification_receiver {
    Receiver(pqxx::connection_base& c, const std::string& channel)
        : pqxx::notification_receiver(c, channel) {}
    void operator()(const std::string&, int) override { fired = true; }
    bool fired = false;
  };

  std::unique_ptr<pqxx::connection> conn_;
  Receiver receiver_;
};

// Rows of feed_messages.sql or expired_feed_leases.sql (whose 8th column names the
// destination).
std::vector<FeedMessage> ToFeedMessages(const pqxx::result& rows, int64_t destination_id) {
  std::vector<FeedMessage> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    FeedMessage m;
    m.delivery_id = r[0].as<int64_t>();
    m.lease_token = r[1].is_null() ? 0 : r[1].as<int64_t>();
    m.event_id = r[2].as<int64_t>();
    m.attempt_count = r[3].as<int>();
    m.cycle_attempts = r[4].as<int>();
    m.created_at = ToTimestamp(r[5]);
    m.leased = r[6].as<bool>();
    m.destination_id = r.size() > 7 ? r[7].as<int64_t>() : destination_id;
    out.push_back(m);
  }
  return out;
}

}  // namespace

void PgDeliveryQueue::Open(ClaimedDelivery& d) const {
  const auto open = [&](std::string& value) {
    // Plaintext (no key, or from before one) stays where it is: no copy per claim.
    if (SecretBox::IsPlain(value)) return;
    Result<std::string> plain = box_.Open(value);
    if (plain) {
      value = std::move(*plain);
    } else {
      value.clear();
      d.credential_error = plain.error().message;
    }
  };
  for (auto& secret : d.secrets) open(secret);
  for (auto& header : d.headers) open(header.second);
  if (d.tls && d.tls->client_key) open(*d.tls->client_key);
  if (d.auth) open(d.auth->client_secret);
  if (d.broker && d.broker->username) open(*d.broker->username);
  if (d.broker && d.broker->password) open(*d.broker->password);
}

Result<ClaimedBatch> PgDeliveryQueue::ClaimDue(int limit, Duration lease, int default_cap) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<ClaimedBatch> {
    pqxx::nontransaction tx(c);  // the function is the whole transaction
    const int64_t token = NewClaimToken();
    auto rows = Exec(
        tx, sql::kClaimDue,
        Params().Add(limit).Add(static_cast<int64_t>(lease.count())).Add(token).Add(default_cap));
    ClaimedBatch batch;
    batch.deliveries.reserve(rows.size());
    for (const auto& r : rows) {
      if (r[0].is_null()) {
        ++batch.rate_limited;  // a 'held' row: no delivery
        continue;
      }
      batch.deliveries.push_back(ToClaimed(r, token));
      Open(batch.deliveries.back());
    }
    return batch;
  });
}

Result<RecordedOutcomes> PgDeliveryQueue::RecordOutcomes(std::span<const AttemptRecord> records,
                                                         const ProtectionSettings& protection) {
  if (records.empty()) return RecordedOutcomes{};
  // A success of a healthy destination (the claim's `clean`) changes no protection state:
  // those go through the plain statement, the rest through the one that keeps the state.
  // Each statement commits alone; a failure of the second has the caller retry the whole
  // batch, where the first's records are stale by then and change nothing.
  const auto is_plain = [](const AttemptRecord& r) {
    return r.clean && r.outcome == Outcome::kSuccess && r.next_status == DeliveryStatus::kSucceeded;
  };
  const auto plain_count = std::ranges::count_if(records, is_plain);
  if (plain_count == 0) return RecordWithProtection(records, protection);
  if (plain_count == std::ssize(records)) return RecordSuccesses(records);
  std::vector<AttemptRecord> plain, rest;
  for (const AttemptRecord& r : records) (is_plain(r) ? plain : rest).push_back(r);
  auto done = RecordSuccesses(plain);
  if (!done) return done;
  auto more = RecordWithProtection(rest, protection);
  if (!more) return more;
  done->applied.insert(done->applied.end(), more->applied.begin(), more->applied.end());
  done->fallen.insert(done->fallen.end(), more->fallen.begin(), more->fallen.end());
  done->circuits_opened += more->circuits_opened;
  done->circuits_closed += more->circuits_closed;
  return done;
}

Result<RecordedOutcomes> PgDeliveryQueue::RecordSuccesses(std::span<const AttemptRecord> records) {
  ArrayLiteral ids, tokens, numbers, started, durations, codes, bodies;
  for (const AttemptRecord& r : records) {
    ids.Add(r.delivery_id);
    tokens.Add(r.claim_token);
    numbers.Add(static_cast<int64_t>(r.attempt_number));
    started.Add(r.started_at);
    durations.Add(static_cast<int64_t>(r.duration_ms));
    if (r.status_code) {
      codes.Add(static_cast<int64_t>(*r.status_code));
    } else {
      codes.AddNull();
    }
    bodies.Add(std::string_view(r.response_body));
  }
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<RecordedOutcomes> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server
    auto r = Exec(tx, NamedParams(sql::kRecordSuccesses)
                          .Set("ids", ids.Finish())
                          .Set("claim_tokens", tokens.Finish())
                          .Set("attempt_numbers", numbers.Finish())
                          .Set("started_at", started.Finish())
                          .Set("durations_ms", durations.Finish())
                          .Set("status_codes", codes.Finish())
                          .Set("response_bodies", bodies.Finish()));
    RecordedOutcomes recorded;
    recorded.applied.reserve(r.size());
    for (const auto& row : r) recorded.applied.push_back(row[0].as<int64_t>());
    return recorded;
  });
}

Result<RecordedOutcomes> PgDeliveryQueue::RecordWithProtection(
    std::span<const AttemptRecord> records, const ProtectionSettings& protection) {
  ArrayLiteral ids, tokens, numbers, started, durations, codes, errors, bodies, outcomes, statuses,
      waits, reasons, disables, probes, jitters;
  for (const AttemptRecord& r : records) {
    ids.Add(r.delivery_id);
    tokens.Add(r.claim_token);
    numbers.Add(static_cast<int64_t>(r.attempt_number));
    started.Add(r.started_at);
    durations.Add(static_cast<int64_t>(r.duration_ms));
    if (r.status_code) {
      codes.Add(static_cast<int64_t>(*r.status_code));
    } else {
      codes.AddNull();
    }
    errors.Add(r.error);
    bodies.Add(std::string_view(r.response_body));
    outcomes.Add(OutcomeName(r.outcome));
    statuses.Add(DeliveryStatusName(r.next_status));
    waits.Add(static_cast<int64_t>(r.wait.count()));
    if (r.dead_letter_reason) {
      reasons.Add(DeadLetterReasonName(*r.dead_letter_reason));
    } else {
      reasons.AddNull();
    }
    disables.Add(r.disable_destination);
    probes.Add(r.probe);
    jitters.Add(r.jitter);
  }
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<RecordedOutcomes> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server, never left open
    NamedParams params(sql::kRecordOutcomes);
    params.Set("ids", ids.Finish())
        .Set("claim_tokens", tokens.Finish())
        .Set("attempt_numbers", numbers.Finish())
        .Set("started_at", started.Finish())
        .Set("durations_ms", durations.Finish())
        .Set("status_codes", codes.Finish())
        .Set("errors", errors.Finish())
        .Set("response_bodies", bodies.Finish())
        .Set("outcomes", outcomes.Finish())
        .Set("next_statuses", statuses.Finish())
        .Set("waits_us", waits.Finish())
        .Set("dead_letter_reasons", reasons.Finish())
        .Set("disables", disables.Finish())
        .Set("probes", probes.Finish())
        .Set("jitters", jitters.Finish());
    params.Set("circuit_threshold", protection.circuit.threshold)
        .Set("first_cooldown_us", static_cast<int64_t>(protection.circuit.cooldown.count()))
        .Set("longest_cooldown_us", static_cast<int64_t>(CircuitSettings::kMaxCooldown.count()))
        .Set("probe_jitter", std::to_string(CircuitSettings::kJitter))
        .Set("disable_after_us", static_cast<int64_t>(protection.disable_after.count()))
        .Set("default_max_in_flight", protection.default_max_in_flight)
        .Set("wakeup_channel", kWakeupChannel);
    auto r = Exec(tx, params);
    RecordedOutcomes recorded;
    recorded.applied.reserve(r.size());
    for (const auto& row : r) {
      if (!row[0].is_null()) {
        if (row[1].is_null()) {
          recorded.applied.push_back(row[0].as<int64_t>());
        } else {
          recorded.fallen.push_back(row[0].as<int64_t>());
        }
      } else if (std::string_view(row[1].c_str()) == "open") {
        ++recorded.circuits_opened;
      } else if (std::string_view(row[1].c_str()) == "closed") {
        ++recorded.circuits_closed;
      }
    }
    return recorded;
  });
}

Result<int> PgDeliveryQueue::ReleaseClaims(std::span<const ReleasedClaim> claims) {
  if (claims.empty()) return 0;
  ArrayLiteral ids, tokens;
  for (const auto& claim : claims) {
    ids.Add(claim.delivery_id);
    tokens.Add(claim.claim_token);
  }
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kReleaseClaims, Params().Add(ids.Finish()).Add(tokens.Finish()));
    if (r.affected_rows() > 0) NotifyWakeup(tx);
    tx.commit();
    return static_cast<int>(r.affected_rows());
  });
}

Result<FeedLease> PgDeliveryQueue::LeaseFeed(int64_t destination_id, int limit, Duration lease) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<FeedLease> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server, never left open
    const int64_t token = NewLeaseToken();
    auto rows = Exec(tx, sql::kLeaseFeed,
                     Params()
                         .Add(destination_id)
                         .Add(limit)
                         .Add(static_cast<int64_t>(lease.count()))
                         .Add(token));
    FeedLease out;
    out.messages.reserve(rows.size());
    for (const auto& r : rows) {
      out.messages.push_back(ToClaimed(r, token));
      out.lease_until = ToTimestamp(r[18]);
      if (!r[19].is_null()) out.messages.back().ordering_key = r[19].c_str();
      Open(out.messages.back());
    }
    return out;
  });
}

Result<FeedMessageCounts> PgDeliveryQueue::CountFeed(int64_t destination_id, bool is_feed) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<FeedMessageCounts> {
    pqxx::nontransaction tx(c);
    const auto r = Exec(tx, sql::kFeedCounts, Params().Add(destination_id).Add(is_feed));
    return FeedMessageCounts{destination_id, r[0][0].as<int64_t>(), r[0][1].as<int64_t>()};
  });
}

Result<std::vector<int64_t>> PgDeliveryQueue::ReadyFeeds(std::span<const int64_t> feeds) {
  ArrayLiteral ids;
  for (const int64_t id : feeds) ids.Add(id);
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<int64_t>> {
    pqxx::nontransaction tx(c);
    std::vector<int64_t> out;
    for (const auto& r : Exec(tx, sql::kReadyFeeds, Params().Add(ids.Finish()))) {
      out.push_back(r[0].as<int64_t>());
    }
    return out;
  });
}

Result<std::vector<FeedMessage>> PgDeliveryQueue::FindFeedMessages(
    int64_t destination_id, std::span<const int64_t> event_ids) {
  ArrayLiteral ids;
  for (const int64_t id : event_ids) ids.Add(id);
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<FeedMessage>> {
    pqxx::nontransaction tx(c);
    auto rows = Exec(tx, sql::kFeedMessages, Params().Add(destination_id).Add(ids.Finish()));
    return ToFeedMessages(rows, destination_id);
  });
}

Result<std::vector<FeedMessage>> PgDeliveryQueue::ExpiredFeedLeases(int limit) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<FeedMessage>> {
    pqxx::nontransaction tx(c);
    return ToFeedMessages(Exec(tx, sql::kExpiredFeedLeases, Params().Add(limit)), 0);
  });
}

Result<int> PgDeliveryQueue::RequeueExpiredLeases() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server, never left open
    auto r = Exec(tx, sql::kRequeueExpired);
    return static_cast<int>(r.affected_rows());
  });
}

Result<std::optional<Timestamp>> PgDeliveryQueue::NextDueAt() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::optional<Timestamp>> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kNextDueAt);
    return ToOptionalTimestamp(r[0][0]);
  });
}

Result<std::unique_ptr<WakeupListener>> PgDeliveryQueue::Listen() {
  try {
    return std::unique_ptr<WakeupListener>(std::make_unique<PgWakeupListener>(pool_.url()));
  } catch (const std::exception& e) {
    return Fail(ErrorKind::kUnavailable, "the database is unavailable");
  }
}

}  // namespace webhookd::pg
