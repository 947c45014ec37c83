#include "store/pg/pg_store.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/random.h"
#include "store/pg/migrator.h"
#include "store/pg/pg_values.h"
#include "store/pg/queries.h"

namespace webhookd::pg {
namespace {

constexpr std::string_view kWakeupChannel = "webhookd_wakeup";
constexpr int kReplayChunk = 5000;

pqxx::result Exec(pqxx::transaction_base& tx, const Query& q, const Params& params = Params()) {
  return tx.exec_prepared(std::string(q.name), params.dynamic());
}

bool IsConnectionState(const std::string& sqlstate) {
  // 08: connection exception; 57P: operator intervention (shutdown); 53: resources.
  return sqlstate.starts_with("08") || sqlstate.starts_with("57P") || sqlstate.starts_with("53");
}

Role ToRole(std::string_view text) { return text == "admin" ? Role::kAdmin : Role::kPublisher; }

ApiKeyInfo ToApiKey(const pqxx::row& r) {
  return ApiKeyInfo{r[0].as<int64_t>(), r[1].c_str(), ToRole(r[2].c_str()), ToTimestamp(r[3]),
                    ToOptionalTimestamp(r[4])};
}

std::string HeadersJson(const Headers& headers) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : headers) object[name] = value;
  return object.dump();
}

std::string TextArray(const std::vector<std::string>& items) {
  ArrayLiteral array;
  for (const auto& item : items) array.Add(std::string_view(item));
  return array.Finish();
}

Headers ParseHeaders(const char* text) {
  Headers headers;
  // A named object: ranging over a temporary's items() would dangle.
  const nlohmann::json object = nlohmann::json::parse(text);
  for (const auto& [name, value] : object.items()) {
    headers.emplace_back(name, value.get<std::string>());
  }
  return headers;
}

Destination ToDestination(const pqxx::row& r) {
  Destination d;
  d.id = r[0].as<int64_t>();
  d.url = r[1].c_str();
  d.description = r[2].c_str();
  d.event_types = nlohmann::json::parse(r[3].c_str()).get<std::vector<std::string>>();
  d.secret = r[4].c_str();
  d.headers = ParseHeaders(r[5].c_str());
  d.enabled = r[6].as<bool>();
  d.max_in_flight = ToOptionalInt(r[7]);
  d.created_at = ToTimestamp(r[8]);
  d.updated_at = ToTimestamp(r[9]);
  return d;
}

Delivery ToDelivery(const pqxx::row& r) {
  Delivery d;
  d.id = r[0].as<int64_t>();
  d.event_id = r[1].as<int64_t>();
  d.destination_id = r[2].as<int64_t>();
  d.status = ParseDeliveryStatus(r[3].c_str()).value_or(DeliveryStatus::kPending);
  d.attempt_count = r[4].as<int>();
  d.next_attempt_at = ToOptionalTimestamp(r[5]);
  d.last_attempt_at = ToOptionalTimestamp(r[6]);
  d.last_status_code = ToOptionalInt(r[7]);
  d.last_error = ToOptionalString(r[8]);
  d.created_at = ToTimestamp(r[9]);
  d.updated_at = ToTimestamp(r[10]);
  return d;
}

Event ToEvent(const pqxx::row& r) {
  return Event{r[0].as<int64_t>(),
               r[1].c_str(),
               std::string(r[2].c_str(), r[2].size()),
               ToTimestamp(r[3]),
               {}};
}

DeadLetter ToDeadLetter(const pqxx::row& r) {
  DeadLetter d;
  d.id = r[0].as<int64_t>();
  d.delivery_id = r[1].as<int64_t>();
  d.event_id = r[2].as<int64_t>();
  d.destination_id = r[3].as<int64_t>();
  d.reason = r[4].c_str();
  d.attempt_count = r[5].as<int>();
  d.last_status_code = ToOptionalInt(r[6]);
  d.last_error = ToOptionalString(r[7]);
  d.dead_lettered_at = ToTimestamp(r[8]);
  d.replayed_at = ToOptionalTimestamp(r[9]);
  return d;
}

// Turns `limit + 1` fetched rows into a page and its cursor.
template <typename T>
Listing<T> ToListing(std::vector<T> items, const Page& page, int64_t (*id_of)(const T&)) {
  Listing<T> listing;
  if (static_cast<int>(items.size()) > page.limit) {
    items.resize(page.limit);
    listing.next_before_id = id_of(items.back());
  }
  listing.items = std::move(items);
  return listing;
}

int64_t NewClaimToken() {
  const std::string bytes = SecureRandomBytes(sizeof(int64_t));
  int64_t token = 0;
  std::memcpy(&token, bytes.data(), sizeof(token));
  return token;
}

class PgWakeupListener final : public WakeupListener {
 public:
  explicit PgWakeupListener(const std::string& url)
      : conn_(PgPool::Connect(url)), receiver_(*conn_, std::string(kWakeupChannel)) {}

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

// The connection broke during COMMIT, so the outcome is unknown: ask a fresh connection
// whether the events exist, for a few seconds while the database comes back. False when
// they do not exist or the question cannot be answered.
// An ingest whose deferred API key check (NewEvent::verify_key_hash) failed.
std::unexpected<Error> KeyNotLive() {
  return Fail(ErrorKind::kUnauthorized, "the API key is not valid");
}

bool CommittedAfterDoubt(const std::string& url, const std::vector<int64_t>& event_ids) {
  ArrayLiteral ids;
  for (int64_t id : event_ids) ids.Add(id);
  const std::string array = ids.Finish();
  for (int attempt = 0; attempt < 40; ++attempt) {
    try {
      auto conn = PgPool::Connect(url);
      pqxx::nontransaction tx(*conn);
      auto r = Exec(tx, kCountEvents, Params().Add(array));
      return r[0][0].as<int64_t>() > 0;  // one transaction: all or none
    } catch (const std::exception&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
  return false;
}

}  // namespace

PgStore::PgStore(std::string url, int pool_size, int committers)
    : pool_(url, pool_size),
      commit_pool_(url, std::max(1, committers), /*generic_plans=*/true),
      // The claim loop (which also sweeps and releases) and the two outcome writers of
      // Dispatcher::Options::recorders.
      worker_pool_(url, 3, /*generic_plans=*/true),
      committers_count_(committers) {}

PgStore::~PgStore() {
  {
    std::lock_guard lock(ingest_mu_);
    ingest_stop_ = true;
  }
  ingest_cv_.notify_all();
  for (auto& t : committers_) t.join();
}

struct PgStore::PendingIngest {
  const NewEvent* event;
  std::optional<Result<IngestReceipt>> result;
  std::mutex mu;
  std::condition_variable done;
};

template <typename F>
auto PgStore::Run(F&& body) -> decltype(body(std::declval<pqxx::connection&>())) {
  return RunOn(pool_, std::forward<F>(body));
}

template <typename F>
auto PgStore::RunOn(PgPool& pool, F&& body) -> decltype(body(std::declval<pqxx::connection&>())) {
  auto lease = pool.Acquire();
  try {
    return body(lease.conn());
  } catch (const pqxx::broken_connection& e) {
    lease.Discard();
    return Fail(ErrorKind::kUnavailable, "the database is unavailable");
  } catch (const pqxx::in_doubt_error& e) {
    lease.Discard();
    return Fail(ErrorKind::kUnavailable, "the database connection was lost during commit");
  } catch (const pqxx::sql_error& e) {
    if (IsConnectionState(e.sqlstate())) {
      lease.Discard();
      return Fail(ErrorKind::kUnavailable, "the database is unavailable");
    }
    return Fail(ErrorKind::kInternal, std::string("database error: ") + e.what());
  } catch (const pqxx::failure& e) {
    lease.Discard();
    return Fail(ErrorKind::kUnavailable, "the database is unavailable");
  } catch (const std::exception& e) {
    return Fail(ErrorKind::kInternal, std::string("store: ") + e.what());
  }
}

Result<bool> PgStore::Ready() {
  return Run([&](pqxx::connection& c) -> Result<bool> {
    pqxx::nontransaction tx(c);
    auto exists = tx.exec("SELECT to_regclass('schema_migrations') IS NOT NULL");
    if (!exists[0][0].as<bool>()) return false;
    std::set<std::string> applied;
    for (const auto& row : Exec(tx, kAppliedMigrations)) applied.insert(row[0].c_str());
    for (const Migration& m : EmbeddedMigrations()) {
      if (!applied.contains(m.version)) return false;
    }
    return true;
  });
}

Result<ApiKeyInfo> PgStore::CreateApiKey(const std::string& name, Role role,
                                         const std::string& key_hash) {
  return Run([&](pqxx::connection& c) -> Result<ApiKeyInfo> {
    pqxx::work tx(c);
    auto r = Exec(tx, kCreateApiKey, Params().Add(name).Add(RoleName(role)).Add(key_hash));
    tx.commit();
    return ToApiKey(r[0]);
  });
}

Result<void> PgStore::EnsureAdminKey(const std::string& key_hash) {
  return Run([&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    Exec(tx, kEnsureAdminKey, Params().Add(key_hash));
    tx.commit();
    return {};
  });
}

Result<std::vector<ApiKeyInfo>> PgStore::ListApiKeys() {
  return Run([&](pqxx::connection& c) -> Result<std::vector<ApiKeyInfo>> {
    pqxx::nontransaction tx(c);
    std::vector<ApiKeyInfo> keys;
    for (const auto& row : Exec(tx, kListApiKeys)) keys.push_back(ToApiKey(row));
    return keys;
  });
}

Result<void> PgStore::RevokeApiKey(int64_t id) {
  return Run([&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    auto r = Exec(tx, kRevokeApiKey, Params().Add(id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no live API key with that id");
    tx.commit();
    return {};
  });
}

Result<std::optional<ApiKeyInfo>> PgStore::FindApiKey(const std::string& key_hash) {
  return Run([&](pqxx::connection& c) -> Result<std::optional<ApiKeyInfo>> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, kFindApiKey, Params().Add(key_hash));
    if (r.empty()) return std::nullopt;
    return ToApiKey(r[0]);
  });
}

Result<Destination> PgStore::CreateDestination(const Destination& d) {
  return Run([&](pqxx::connection& c) -> Result<Destination> {
    pqxx::work tx(c);
    auto r = Exec(tx, kCreateDestination,
                  Params()
                      .Add(d.url)
                      .Add(d.description)
                      .Add(TextArray(d.event_types))
                      .Add(d.secret)
                      .Add(HeadersJson(d.headers))
                      .Add(d.enabled)
                      .Add(d.max_in_flight));
    tx.commit();
    return ToDestination(r[0]);
  });
}

Result<Destination> PgStore::GetDestination(int64_t id) {
  return Run([&](pqxx::connection& c) -> Result<Destination> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, kGetDestination, Params().Add(id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no destination with that id");
    return ToDestination(r[0]);
  });
}

Result<Listing<Destination>> PgStore::ListDestinations(const Page& page) {
  return Run([&](pqxx::connection& c) -> Result<Listing<Destination>> {
    pqxx::nontransaction tx(c);
    std::vector<Destination> items;
    for (const auto& row :
         Exec(tx, kListDestinations, Params().Add(page.before_id).Add(page.limit + 1))) {
      items.push_back(ToDestination(row));
    }
    return ToListing<Destination>(std::move(items), page,
                                  [](const Destination& d) { return d.id; });
  });
}

Result<Destination> PgStore::UpdateDestination(int64_t id, const DestinationFields& f) {
  return Run([&](pqxx::connection& c) -> Result<Destination> {
    pqxx::work tx(c);
    Params params;
    params.Add(id).Add(f.url).Add(f.description).Add(f.event_types.has_value());
    if (f.event_types) {
      params.Add(TextArray(*f.event_types));
    } else {
      params.AddNull();
    }
    params.Add(f.secret);
    if (f.headers) {
      params.Add(HeadersJson(*f.headers));
    } else {
      params.AddNull();
    }
    params.Add(f.enabled).Add(f.max_in_flight.has_value());
    if (f.max_in_flight) {
      params.Add(*f.max_in_flight);
    } else {
      params.AddNull();
    }
    auto r = Exec(tx, kUpdateDestination, params);
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no destination with that id");
    // Its waiting deliveries may be claimable now.
    if (f.enabled.value_or(false)) Exec(tx, kNotifyWakeup);
    tx.commit();
    return ToDestination(r[0]);
  });
}

Result<void> PgStore::DeleteDestination(int64_t id) {
  return Run([&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    if (Exec(tx, kDeleteDestination, Params().Add(id)).empty()) {
      return Fail(ErrorKind::kNotFound, "no destination with that id");
    }
    Exec(tx, kCancelDestinationDeliveries, Params().Add(id));
    tx.commit();
    return {};
  });
}

Result<IngestReceipt> PgStore::InsertEvent(const NewEvent& event,
                                           const std::optional<IdempotencyKey>& key) {
  // Keyed and targeted ingests have their own checks and answers: one transaction each.
  if (!key && !event.destination_id && committers_count_ > 0) return InsertEventGrouped(event);
  return Run([&](pqxx::connection& c) -> Result<IngestReceipt> {
    IngestReceipt receipt;
    bool key_taken = true;
    {
      pqxx::work tx(c);
      if (!event.verify_key_hash.empty() &&
          Exec(tx, kFindApiKey, Params().Add(event.verify_key_hash)).empty()) {
        return KeyNotLive();
      }
      auto ev = Exec(tx, kInsertEvent, Params().Add(event.type).Add(event.payload));
      receipt.event =
          Event{ev[0][0].as<int64_t>(), event.type, event.payload, ToTimestamp(ev[0][1]), {}};
      if (key) {
        key_taken = !Exec(tx, kTakeIdempotencyKey,
                          Params().Add(key->key).Add(key->request_hash).Add(receipt.event.id))
                         .empty();
      }
      if (key_taken) {
        // Checked after the key, so a replay answers as the original did even if the
        // destination was deleted since. Returning aborts the transaction.
        if (event.destination_id &&
            Exec(tx, kLiveDestinationExists, Params().Add(*event.destination_id)).empty()) {
          return Invalid({{"destination_id", "no destination with that id"}});
        }
        const pqxx::result rows =
            event.destination_id
                ? Exec(tx, kFanOutTargeted,
                       Params().Add(receipt.event.id).Add(*event.destination_id))
                : Exec(tx, kFanOut, Params().Add(receipt.event.id).Add(event.type));
        for (const auto& row : rows) {
          Delivery d;
          d.id = row[0].as<int64_t>();
          d.event_id = receipt.event.id;
          d.destination_id = row[1].as<int64_t>();
          d.created_at = d.updated_at = ToTimestamp(row[2]);
          d.next_attempt_at = d.created_at;
          receipt.event.deliveries.push_back(d);
        }
        // One notification per transaction, however many deliveries it made.
        if (!receipt.event.deliveries.empty()) Exec(tx, kNotifyWakeup);
        try {
          tx.commit();
        } catch (const pqxx::in_doubt_error&) {
          // Only a 202 for what committed, and a 202 for everything that did.
          if (CommittedAfterDoubt(pool_.url(), {receipt.event.id})) return receipt;
          throw;
        }
        return receipt;
      }
    }
    // The key is held by an earlier request that committed: answer as it was answered.
    pqxx::nontransaction tx(c);
    auto held = Exec(tx, kGetIdempotencyKey, Params().Add(key->key));
    if (held.empty()) return Fail(ErrorKind::kConflict, "the Idempotency-Key is in use; retry");
    if (held[0][0].c_str() != key->request_hash) {
      return Invalid({{"Idempotency-Key", "was already used with a different request body"}});
    }
    auto ev = Exec(tx, kGetEvent, Params().Add(held[0][1].as<int64_t>()));
    if (ev.empty()) return Fail(ErrorKind::kInternal, "idempotency record without its event");
    receipt.event = ToEvent(ev[0]);
    for (const auto& row : Exec(tx, kEventDeliveries, Params().Add(receipt.event.id))) {
      Delivery d = ToDelivery(row);
      d.status = DeliveryStatus::kPending;  // as the original 202 said
      receipt.event.deliveries.push_back(d);
    }
    receipt.replayed = true;
    return receipt;
  });
}

Result<IngestReceipt> PgStore::InsertEventGrouped(const NewEvent& event) {
  std::call_once(committers_started_, [this] {
    for (int i = 0; i < committers_count_; ++i) committers_.emplace_back([this] { CommitLoop(); });
  });
  PendingIngest pending{&event, std::nullopt, {}, {}};
  {
    std::lock_guard lock(ingest_mu_);
    if (ingest_stop_) return Fail(ErrorKind::kUnavailable, "shutting down");
    ingest_queue_.push_back(&pending);
  }
  ingest_cv_.notify_one();
  std::unique_lock lock(pending.mu);
  pending.done.wait(lock, [&] { return pending.result.has_value(); });
  return std::move(*pending.result);
}

void PgStore::CommitLoop() {
  // A group is whatever queued while the previous commit ran, bounded in count and bytes.
  constexpr size_t kMaxGroup = 512;
  constexpr size_t kMaxGroupBytes = 8 << 20;
  std::vector<PendingIngest*> group;
  for (;;) {
    {
      std::unique_lock lock(ingest_mu_);
      ingest_cv_.wait(lock, [&] { return !ingest_queue_.empty() || ingest_stop_; });
      if (ingest_queue_.empty()) return;
      size_t bytes = 0;
      while (!ingest_queue_.empty() && group.size() < kMaxGroup && bytes < kMaxGroupBytes) {
        bytes += ingest_queue_.front()->event->payload.size();
        group.push_back(ingest_queue_.front());
        ingest_queue_.pop_front();
      }
    }
    CommitGroup(group);
    group.clear();
  }
}

void PgStore::CommitGroup(std::vector<PendingIngest*>& group) {
  ArrayLiteral types, payloads, key_hashes;
  for (const PendingIngest* p : group) {
    types.Add(std::string_view(p->event->type));
    payloads.Add(std::string_view(p->event->payload));
    if (p->event->verify_key_hash.empty()) {
      key_hashes.AddNull();
    } else {
      key_hashes.Add(std::string_view(p->event->verify_key_hash));
    }
  }
  auto lease = commit_pool_.Acquire();
  // The waiter owns `p` and may free it once it sees a result, so the result is set and
  // signalled under its lock and `p` is not touched after.
  auto answer = [](PendingIngest* p, Result<IngestReceipt> result) {
    std::lock_guard lock(p->mu);
    p->result = std::move(result);
    p->done.notify_one();
  };
  auto fail_all = [&](ErrorKind kind, const std::string& message) {
    for (PendingIngest* p : group) answer(p, Fail(kind, message));
  };
  try {
    pqxx::work tx(lease.conn());
    auto rows = Exec(tx, kInsertEventGroup,
                     Params().Add(types.Finish()).Add(payloads.Finish()).Add(key_hashes.Finish()));
    bool any_delivery = false;
    std::vector<IngestReceipt> receipts(group.size());
    std::vector<bool> refused(group.size(), false);
    for (const auto& row : rows) {
      const size_t i = row[0].as<size_t>() - 1;
      if (row[1].is_null()) {
        refused[i] = true;
        continue;
      }
      Event& e = receipts[i].event;
      if (e.id == 0) {
        e = Event{row[1].as<int64_t>(),
                  group[i]->event->type,
                  group[i]->event->payload,
                  ToTimestamp(row[2]),
                  {}};
      }
      if (!row[3].is_null()) {
        Delivery d;
        d.id = row[3].as<int64_t>();
        d.event_id = e.id;
        d.destination_id = row[4].as<int64_t>();
        d.created_at = d.updated_at = e.created_at;
        d.next_attempt_at = e.created_at;
        e.deliveries.push_back(d);
        any_delivery = true;
      }
    }
    if (any_delivery) Exec(tx, kNotifyWakeup);
    try {
      tx.commit();
    } catch (const pqxx::in_doubt_error&) {
      std::vector<int64_t> ids;
      for (size_t i = 0; i < group.size(); ++i) {
        if (!refused[i]) ids.push_back(receipts[i].event.id);
      }
      if (!CommittedAfterDoubt(commit_pool_.url(), ids)) throw;
    }
    for (size_t i = 0; i < group.size(); ++i) {
      if (refused[i]) {
        answer(group[i], KeyNotLive());
      } else {
        answer(group[i], std::move(receipts[i]));
      }
    }
  } catch (const pqxx::sql_error& e) {
    if (IsConnectionState(e.sqlstate())) lease.Discard();
    fail_all(IsConnectionState(e.sqlstate()) ? ErrorKind::kUnavailable : ErrorKind::kInternal,
             IsConnectionState(e.sqlstate()) ? "the database is unavailable"
                                             : std::string("database error: ") + e.what());
  } catch (const pqxx::failure& e) {
    // Broken connection or a commit in doubt: the client must retry (with a key).
    lease.Discard();
    fail_all(ErrorKind::kUnavailable, "the database is unavailable");
  } catch (const std::exception& e) {
    fail_all(ErrorKind::kInternal, std::string("store: ") + e.what());
  }
}

Result<Event> PgStore::GetEvent(int64_t id) {
  return Run([&](pqxx::connection& c) -> Result<Event> {
    pqxx::work tx(c);  // one snapshot for the event and its deliveries
    auto r = Exec(tx, kGetEvent, Params().Add(id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no event with that id");
    Event event = ToEvent(r[0]);
    for (const auto& row : Exec(tx, kEventDeliveries, Params().Add(id))) {
      event.deliveries.push_back(ToDelivery(row));
    }
    return event;
  });
}

Result<Listing<Event>> PgStore::ListEvents(const EventFilter& filter, const Page& page) {
  return Run([&](pqxx::connection& c) -> Result<Listing<Event>> {
    pqxx::nontransaction tx(c);
    std::vector<Event> items;
    for (const auto& row : Exec(tx, kListEvents,
                                Params()
                                    .Add(page.before_id)
                                    .Add(filter.type)
                                    .Add(filter.after)
                                    .Add(filter.before)
                                    .Add(page.limit + 1))) {
      items.push_back(ToEvent(row));
    }
    return ToListing<Event>(std::move(items), page, [](const Event& e) { return e.id; });
  });
}

Result<Delivery> PgStore::GetDelivery(int64_t id) {
  return Run([&](pqxx::connection& c) -> Result<Delivery> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, kGetDelivery, Params().Add(id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no delivery with that id");
    return ToDelivery(r[0]);
  });
}

Result<Listing<Delivery>> PgStore::ListDeliveries(const DeliveryFilter& filter, const Page& page) {
  return Run([&](pqxx::connection& c) -> Result<Listing<Delivery>> {
    pqxx::nontransaction tx(c);
    std::optional<std::string> status;
    if (filter.status) status = std::string(DeliveryStatusName(*filter.status));
    std::vector<Delivery> items;
    for (const auto& row : Exec(tx, kListDeliveries,
                                Params()
                                    .Add(page.before_id)
                                    .Add(filter.destination_id)
                                    .Add(status)
                                    .Add(page.limit + 1))) {
      items.push_back(ToDelivery(row));
    }
    return ToListing<Delivery>(std::move(items), page, [](const Delivery& d) { return d.id; });
  });
}

Result<std::vector<Attempt>> PgStore::ListAttempts(int64_t delivery_id) {
  return Run([&](pqxx::connection& c) -> Result<std::vector<Attempt>> {
    pqxx::work tx(c);
    if (Exec(tx, kGetDelivery, Params().Add(delivery_id)).empty()) {
      return Fail(ErrorKind::kNotFound, "no delivery with that id");
    }
    std::vector<Attempt> attempts;
    for (const auto& r : Exec(tx, kListAttempts, Params().Add(delivery_id))) {
      Attempt a;
      a.delivery_id = r[0].as<int64_t>();
      a.attempt_number = r[1].as<int>();
      a.started_at = ToTimestamp(r[2]);
      a.duration_ms = r[3].as<int>();
      a.status_code = ToOptionalInt(r[4]);
      a.error = ToOptionalString(r[5]);
      a.response_body = std::string(r[6].c_str(), r[6].size());
      a.outcome = r[7].c_str();
      attempts.push_back(std::move(a));
    }
    return attempts;
  });
}

Result<std::vector<ClaimedDelivery>> PgStore::ClaimDue(int limit, Duration lease, int default_cap) {
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<std::vector<ClaimedDelivery>> {
    pqxx::nontransaction tx(c);  // the function is the whole transaction
    const int64_t token = NewClaimToken();
    auto rows = Exec(
        tx, kClaimDue,
        Params().Add(limit).Add(static_cast<int64_t>(lease.count())).Add(token).Add(default_cap));
    std::vector<ClaimedDelivery> claimed;
    claimed.reserve(rows.size());
    for (const auto& r : rows) {
      ClaimedDelivery d;
      d.delivery_id = r[0].as<int64_t>();
      d.claim_token = token;
      d.event_id = r[1].as<int64_t>();
      d.event_type = r[2].c_str();
      d.payload = std::string(r[3].c_str(), r[3].size());
      d.event_created_at = ToTimestamp(r[4]);
      d.destination_id = r[5].as<int64_t>();
      d.url = r[6].c_str();
      d.secret = r[7].c_str();
      d.headers = ParseHeaders(r[8].c_str());
      d.attempt_count = r[9].as<int>();
      d.cycle_attempts = r[10].as<int>();
      d.created_at = ToTimestamp(r[11]);
      claimed.push_back(std::move(d));
    }
    return claimed;
  });
}

Result<std::vector<int64_t>> PgStore::RecordOutcomes(std::span<const AttemptRecord> records) {
  if (records.empty()) return std::vector<int64_t>{};
  ArrayLiteral ids, tokens, numbers, started, durations, codes, errors, bodies, outcomes, statuses,
      waits, reasons, disables;
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
    outcomes.Add(std::string_view(r.outcome));
    statuses.Add(DeliveryStatusName(r.next_status));
    waits.Add(static_cast<int64_t>(r.wait.count()));
    reasons.Add(r.dead_letter_reason);
    disables.Add(r.disable_destination);
  }
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<std::vector<int64_t>> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server, never left open
    auto r = Exec(tx, kRecordOutcomes,
                  Params()
                      .Add(ids.Finish())
                      .Add(tokens.Finish())
                      .Add(numbers.Finish())
                      .Add(started.Finish())
                      .Add(durations.Finish())
                      .Add(codes.Finish())
                      .Add(errors.Finish())
                      .Add(bodies.Finish())
                      .Add(outcomes.Finish())
                      .Add(statuses.Finish())
                      .Add(waits.Finish())
                      .Add(reasons.Finish())
                      .Add(disables.Finish()));
    std::vector<int64_t> applied;
    applied.reserve(r.size());
    for (const auto& row : r) applied.push_back(row[0].as<int64_t>());
    return applied;
  });
}

Result<int> PgStore::ReleaseClaims(std::span<const ReleasedClaim> claims) {
  if (claims.empty()) return 0;
  ArrayLiteral ids, tokens;
  for (const auto& claim : claims) {
    ids.Add(claim.delivery_id);
    tokens.Add(claim.claim_token);
  }
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<int> {
    pqxx::work tx(c);
    auto r = Exec(tx, kReleaseClaims, Params().Add(ids.Finish()).Add(tokens.Finish()));
    if (r.affected_rows() > 0) Exec(tx, kNotifyWakeup);
    tx.commit();
    return static_cast<int>(r.affected_rows());
  });
}

Result<int> PgStore::RequeueExpiredLeases() {
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<int> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server, never left open
    auto r = Exec(tx, kRequeueExpired);
    return static_cast<int>(r.affected_rows());
  });
}

Result<std::optional<Timestamp>> PgStore::NextDueAt() {
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<std::optional<Timestamp>> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, kNextDueAt);
    return ToOptionalTimestamp(r[0][0]);
  });
}

Result<std::unique_ptr<WakeupListener>> PgStore::Listen() {
  try {
    return std::unique_ptr<WakeupListener>(std::make_unique<PgWakeupListener>(pool_.url()));
  } catch (const std::exception& e) {
    return Fail(ErrorKind::kUnavailable, "the database is unavailable");
  }
}

Result<DeliveryGauges> PgStore::CountDeliveries() {
  return Run([&](pqxx::connection& c) -> Result<DeliveryGauges> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, kCountDeliveries);
    return DeliveryGauges{r[0][0].as<int64_t>(), r[0][1].as<int64_t>(), r[0][2].as<int64_t>()};
  });
}

Result<HealthStats> PgStore::Stats(Duration window) {
  return Run([&](pqxx::connection& c) -> Result<HealthStats> {
    pqxx::nontransaction tx(c);
    const auto r = Exec(tx, kStats, Params().Add(static_cast<int64_t>(window.count())))[0];
    const auto ratio = [](int64_t num, int64_t den) {
      return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den);
    };
    HealthStats s;
    s.attempts = r[0].as<int64_t>();
    const int64_t successes = r[2].as<int64_t>();
    const int64_t dead = r[6].as<int64_t>();
    s.retry_rate = ratio(r[1].as<int64_t>(), s.attempts);
    s.dead_letter_rate = ratio(dead, successes + dead);
    s.avg_attempts_to_success = r[3].as<double>();
    s.second_attempt_success_rate = ratio(r[5].as<int64_t>(), r[4].as<int64_t>());
    s.pending = r[7].as<int64_t>();
    s.in_flight = r[8].as<int64_t>();
    s.retrying_over_24h = r[9].as<int64_t>();
    return s;
  });
}

Result<Listing<DeadLetter>> PgStore::ListDeadLetters(const DeadLetterFilter& filter,
                                                     const Page& page) {
  return Run([&](pqxx::connection& c) -> Result<Listing<DeadLetter>> {
    pqxx::nontransaction tx(c);
    std::vector<DeadLetter> items;
    for (const auto& row : Exec(tx, kListDeadLetters,
                                Params()
                                    .Add(filter.destination_id)
                                    .Add(filter.reason)
                                    .Add(filter.since)
                                    .Add(filter.until)
                                    .Add(page.before_id)
                                    .Add(page.limit + 1))) {
      items.push_back(ToDeadLetter(row));
    }
    return ToListing<DeadLetter>(std::move(items), page, [](const DeadLetter& d) { return d.id; });
  });
}

Result<int64_t> PgStore::ReplayDeadLetter(int64_t id) {
  return Run([&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::work tx(c);
    auto r = Exec(tx, kReplayDeadLetter, Params().Add(id));
    if (!r.empty()) {
      Exec(tx, kNotifyWakeup);
      tx.commit();
      return r[0][0].as<int64_t>();
    }
    auto state = Exec(tx, kDeadLetterState, Params().Add(id));
    if (state.empty()) return Fail(ErrorKind::kNotFound, "no dead letter with that id");
    if (state[0][0].as<bool>())
      return Fail(ErrorKind::kConflict, "this dead letter was already replayed");
    if (state[0][1].as<bool>()) {
      return Fail(ErrorKind::kConflict, "the destination of this dead letter was deleted");
    }
    return Fail(ErrorKind::kConflict, "the delivery of this dead letter is not dead-lettered");
  });
}

Result<int64_t> PgStore::ReplayDeadLetters(const DeadLetterFilter& filter) {
  return Run([&](pqxx::connection& c) -> Result<int64_t> {
    int64_t total = 0;
    for (;;) {
      pqxx::work tx(c);
      auto r = Exec(tx, kReplayDeadLetterChunk,
                    Params()
                        .Add(filter.destination_id)
                        .Add(filter.reason)
                        .Add(filter.since)
                        .Add(filter.until)
                        .Add(kReplayChunk));
      const int64_t n = r[0][0].as<int64_t>();
      if (n > 0) Exec(tx, kNotifyWakeup);
      tx.commit();
      total += n;
      if (n == 0) break;
    }
    return total;
  });
}

}  // namespace webhookd::pg
