#include "store/pg/pg_store.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/random.h"
#include "store/pg/errors.h"
#include "store/pg/exec.h"
#include "store/pg/locks.h"
#include "store/pg/migrator.h"
#include "store/pg/pg_values.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

constexpr int kReplayChunk = 5000;

// One answer for an unknown destination and for one outside the caller's scope, so an
// answer never tells another tenant's ids from ids that do not exist.
std::unexpected<Error> NoDestination() {
  return Fail(ErrorKind::kNotFound, "no destination with that id");
}

std::optional<std::string_view> ReasonParam(const DeadLetterFilter& filter) {
  if (!filter.reason) return std::nullopt;
  return DeadLetterReasonName(*filter.reason);
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

}  // namespace

PgStore::PgStore(const std::string& url, Options options)
    : box_(std::move(options.secrets)),
      pool_(url, options.api_connections, Plans::kPerCall, options.api_acquire_timeout,
            options.api_statement_timeout),
      worker_pool_(url, options.worker_connections, Plans::kGenericByKey),
      committer_(options.committers > 0
                     ? std::make_unique<GroupCommitter>(url, options.committers,
                                                        options.api_statement_timeout)
                     : nullptr) {}

PgStore::~PgStore() = default;

Destination PgStore::Sealed(Destination d) const {
  d.secret = box_.Seal(d.secret);
  for (auto& header : d.headers) header.second = box_.Seal(header.second);
  if (d.tls && d.tls->client_key) d.tls->client_key = box_.Seal(*d.tls->client_key);
  if (d.auth) d.auth->client_secret = box_.Seal(d.auth->client_secret);
  return d;
}

Result<Destination> PgStore::Opened(Destination d) const {
  Result<std::string> secret = box_.Open(d.secret);
  if (!secret) return std::unexpected(secret.error());
  d.secret = std::move(*secret);
  for (auto& header : d.headers) {
    Result<std::string> value = box_.Open(header.second);
    if (!value) return std::unexpected(value.error());
    header.second = std::move(*value);
  }
  if (d.tls && d.tls->client_key) {
    Result<std::string> key = box_.Open(*d.tls->client_key);
    if (!key) return std::unexpected(key.error());
    d.tls->client_key = std::move(*key);
  }
  if (d.auth) {
    Result<std::string> secret = box_.Open(d.auth->client_secret);
    if (!secret) return std::unexpected(secret.error());
    d.auth->client_secret = std::move(*secret);
  }
  return d;
}

void PgStore::Open(ClaimedDelivery& d) const {
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
}

Result<bool> PgStore::Ready() {
  return Run([&](pqxx::connection& c) -> Result<bool> {
    pqxx::nontransaction tx(c);
    auto exists = Exec(tx, sql::kMigrationsTableExists);
    if (!exists[0][0].as<bool>()) return false;
    std::set<std::string> applied;
    for (const auto& row : Exec(tx, sql::kAppliedMigrations)) applied.insert(row[0].c_str());
    for (const Migration& m : EmbeddedMigrations()) {
      if (!applied.contains(m.version)) return false;
    }
    // And the binary's own schema files. Like a migration, a set once applied counts as
    // applied, so an older binary stays ready while a newer one's definitions are live.
    if (!Exec(tx, sql::kSchemaDefinitionsTableExists)[0][0].as<bool>()) return false;
    return Exec(tx, sql::kSchemaDefinitionsApplied, Params().Add(EmbeddedSchema().hash))[0][0]
        .as<bool>();
  });
}

Result<ApiKeyInfo> PgStore::CreateApiKey(const NewApiKey& key) {
  return Run([&](pqxx::connection& c) -> Result<ApiKeyInfo> {
    pqxx::work tx(c);
    std::optional<int64_t> ttl_us;
    if (key.ttl) ttl_us = key.ttl->count();
    auto r = Exec(tx, sql::kCreateApiKey,
                  Params()
                      .Add(key.name)
                      .Add(RoleName(key.role))
                      .Add(key.key_hash)
                      .Add(key.tenant_id)
                      .Add(ttl_us));
    tx.commit();
    return ToApiKey(r[0]);
  });
}

Result<KeyStore::Bootstrap> PgStore::EnsureAdminKey(const std::string& key_hash) {
  return Run([&](pqxx::connection& c) -> Result<Bootstrap> {
    pqxx::work tx(c);
    const auto r = Exec(tx, sql::kEnsureAdminKey, Params().Add(key_hash));
    tx.commit();
    const std::string_view state = r[0][0].c_str();
    if (state == "revoked") return Bootstrap::kRevoked;
    if (state == "expired") return Bootstrap::kExpired;
    return Bootstrap::kLive;
  });
}

Result<std::vector<ApiKeyInfo>> PgStore::ListApiKeys() {
  return Run([&](pqxx::connection& c) -> Result<std::vector<ApiKeyInfo>> {
    pqxx::nontransaction tx(c);
    std::vector<ApiKeyInfo> keys;
    for (const auto& row : Exec(tx, sql::kListApiKeys)) keys.push_back(ToApiKey(row));
    return keys;
  });
}

Result<void> PgStore::RevokeApiKey(int64_t id) {
  return Run([&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kRevokeApiKey, Params().Add(id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no live API key with that id");
    tx.commit();
    return {};
  });
}

Result<std::optional<ApiKeyInfo>> PgStore::FindApiKey(const std::string& key_hash) {
  return Run([&](pqxx::connection& c) -> Result<std::optional<ApiKeyInfo>> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kFindApiKey, Params().Add(key_hash));
    if (r.empty()) return std::nullopt;
    return ToApiKey(r[0]);
  });
}

Result<Destination> PgStore::CreateDestination(const Destination& d, int max_per_tenant) {
  return Run([&](pqxx::connection& c) -> Result<Destination> {
    pqxx::work tx(c);
    // The lock first, then the count in a statement of its own: its snapshot then sees
    // every creation that held the lock before.
    Exec(tx, sql::kLockTenantDestinations, Params().Add(d.tenant_id));
    const int64_t live =
        Exec(tx, sql::kCountTenantDestinations, Params().Add(d.tenant_id))[0][0].as<int64_t>();
    if (live >= max_per_tenant) {
      return Fail(ErrorKind::kConflict,
                  (d.tenant_id ? "tenant " + *d.tenant_id : std::string("the no-tenant space")) +
                      " has " + std::to_string(live) +
                      " destinations, the most WEBHOOKD_MAX_DESTINATIONS_PER_TENANT allows");
    }
    if (d.filter) WEBHOOKD_RETURN_IF_ERROR(CheckFilter(tx, *d.filter));
    const Destination sealed = Sealed(d);
    auto r = Exec(tx, sql::kCreateDestination,
                  Params()
                      .Add(d.url)
                      .Add(d.description)
                      .Add(TextArray(d.event_types))
                      .Add(sealed.secret)
                      .Add(HeadersJson(sealed.headers))
                      .Add(d.enabled)
                      .Add(d.max_in_flight)
                      .Add(d.tenant_id)
                      .Add(d.rate_limit)
                      .Add(OrderingName(d.ordering))
                      .Add(OnDeadLetterName(d.on_dead_letter))
                      .Add(d.filter)
                      .Add(sealed.tls ? sealed.tls->client_certificate : std::nullopt)
                      .Add(sealed.tls ? sealed.tls->client_key : std::nullopt)
                      .Add(sealed.tls ? sealed.tls->ca_certificate : std::nullopt)
                      .Add(sealed.auth ? std::optional(sealed.auth->token_url) : std::nullopt)
                      .Add(sealed.auth ? std::optional(sealed.auth->client_id) : std::nullopt)
                      .Add(sealed.auth ? std::optional(sealed.auth->client_secret) : std::nullopt)
                      .Add(sealed.auth ? sealed.auth->scope : std::nullopt));
    tx.commit();
    return Opened(ToDestination(r[0]));
  });
}

Result<Destination> PgStore::GetDestination(int64_t id, const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<Destination> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetDestination, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return NoDestination();
    return Opened(ToDestination(r[0]));
  });
}

template <typename T>
Result<Listing<T>> PgStore::ListPage(const Query& query, const Params& params, const Page& page,
                                     T (*to_item)(const pqxx::row&)) {
  return Run([&](pqxx::connection& c) -> Result<Listing<T>> {
    pqxx::nontransaction tx(c);
    Listing<T> listing;
    for (const auto& row : Exec(tx, query, params)) listing.items.push_back(to_item(row));
    if (static_cast<int>(listing.items.size()) > page.limit) {
      listing.items.resize(page.limit);
      listing.next_before_id = listing.items.back().id;
    }
    return listing;
  });
}

Result<Listing<Destination>> PgStore::ListDestinations(const DestinationFilter& filter,
                                                       const Page& page, const Scope& scope) {
  // A listing never carries credentials: nothing to open, nothing to leak.
  return ListPage<Destination>(
      sql::kListDestinations,
      Params().Add(page.before_id).Add(page.limit + 1).Add(filter.tenant_id).Add(scope.tenant_id),
      page, [](const pqxx::row& r) {
        Destination d = ToDestination(r);
        d.secret.clear();
        for (auto& header : d.headers) header.second.clear();
        if (d.tls && d.tls->client_key) d.tls->client_key->clear();
        if (d.auth) d.auth->client_secret.clear();
        return d;
      });
}

Result<Destination> PgStore::UpdateDestination(int64_t id, const DestinationFields& f,
                                               const Scope& scope, const UpdateCheck& check) {
  return Run([&](pqxx::connection& c) -> Result<Destination> {
    pqxx::work tx(c);
    if (check) {
      auto locked = Exec(tx, sql::kLockDestination, Params().Add(id).Add(scope.tenant_id));
      if (locked.empty()) return NoDestination();
      WEBHOOKD_ASSIGN_OR_RETURN(const Destination stored, Opened(ToDestination(locked[0])));
      WEBHOOKD_RETURN_IF_ERROR(check(stored));
    }
    Params params;
    params.Add(id).Add(f.url).Add(f.description).Add(f.event_types.has_value());
    if (f.event_types) {
      params.Add(TextArray(*f.event_types));
    } else {
      params.AddNull();
    }
    if (f.secret) {
      params.Add(box_.Seal(*f.secret));
    } else {
      params.AddNull();
    }
    if (f.headers) {
      Headers sealed = *f.headers;
      for (auto& header : sealed) {
        // The hidden marker keeps the stored value; sealed it would be a new one.
        if (header.second != kHiddenHeaderValue) header.second = box_.Seal(header.second);
      }
      params.Add(HeadersJson(sealed));
    } else {
      params.AddNull();
    }
    params.Add(f.enabled).Add(f.max_in_flight.has_value());
    if (f.max_in_flight) {
      params.Add(*f.max_in_flight);
    } else {
      params.AddNull();
    }
    params.Add(scope.tenant_id).Add(f.tenant_id.has_value());
    if (f.tenant_id) {
      params.Add(*f.tenant_id);
    } else {
      params.AddNull();
    }
    params.Add(f.rate_limit.has_value());
    if (f.rate_limit) {
      params.Add(*f.rate_limit);
    } else {
      params.AddNull();
    }
    if (f.ordering) {
      params.Add(OrderingName(*f.ordering));
    } else {
      params.AddNull();
    }
    if (f.on_dead_letter) {
      params.Add(OnDeadLetterName(*f.on_dead_letter));
    } else {
      params.AddNull();
    }
    params.Add(f.filter.has_value());
    if (f.filter && *f.filter) {
      WEBHOOKD_RETURN_IF_ERROR(CheckFilter(tx, **f.filter));
      params.Add(**f.filter);
    } else {
      params.AddNull();
    }
    params.Add(f.tls.has_value());
    if (f.tls && *f.tls) {
      const DestinationTls& tls = **f.tls;
      params.Add(tls.client_certificate);
      // The hidden marker keeps the stored key; sealed it would be a new one.
      if (tls.client_key && *tls.client_key != kHiddenHeaderValue) {
        params.Add(box_.Seal(*tls.client_key));
      } else {
        params.Add(tls.client_key);
      }
      params.Add(tls.ca_certificate);
    } else {
      params.AddNull().AddNull().AddNull();
    }
    params.Add(f.auth.has_value());
    if (f.auth && *f.auth) {
      const DestinationAuth& auth = **f.auth;
      params.Add(auth.token_url).Add(auth.client_id);
      params.Add(auth.client_secret == kHiddenHeaderValue ? auth.client_secret
                                                          : box_.Seal(auth.client_secret));
      params.Add(auth.scope);
    } else {
      params.AddNull().AddNull().AddNull().AddNull();
    }
    auto r = Exec(tx, sql::kUpdateDestination, params);
    if (r.empty()) {
      // Nothing matched: an unknown id (or one outside the scope), or a patch naming
      // another tenant_id. Only a destination the caller may see can be the latter.
      if (f.tenant_id &&
          !Exec(tx, sql::kGetDestination, Params().Add(id).Add(scope.tenant_id)).empty()) {
        return Invalid({{"tenant_id", "is set when a destination is created and never changes"}});
      }
      return NoDestination();
    }
    // Its waiting deliveries may be claimable now.
    if (f.enabled.value_or(false)) NotifyWakeup(tx);
    tx.commit();
    return Opened(ToDestination(r[0]));
  });
}

Result<Timestamp> PgStore::RotateSecret(int64_t id, const std::string& secret, Duration grace,
                                        const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<Timestamp> {
    pqxx::work tx(c);
    auto current = Exec(tx, sql::kLockDestinationSecret, Params().Add(id).Add(scope.tenant_id));
    if (current.empty()) return NoDestination();
    const std::string previous = current[0][0].c_str();
    Exec(tx, sql::kEraseExpiredSecrets, Params().Add(id));
    Timestamp previous_valid_until;
    if (grace > Duration::zero()) {
      const int64_t earlier =
          Exec(tx, sql::kCountValidSecrets, Params().Add(id))[0][0].as<int64_t>();
      // The new secret, the one it replaces, and those still in their grace.
      if (earlier + 2 > kMaxValidSecrets) {
        return Fail(ErrorKind::kConflict,
                    "at most 5 secrets may be valid at once; wait for an earlier one to "
                    "expire, or rotate with grace_period 0");
      }
      previous_valid_until = ToTimestamp(
          Exec(tx, sql::kRetireSecret,
               Params().Add(id).Add(previous).Add(static_cast<int64_t>(grace.count())))[0][0]);
    } else {
      Exec(tx, sql::kEraseEarlierSecrets, Params().Add(id));
    }
    // The secret it replaces moves to destination_secrets as stored (sealed or not).
    auto now = Exec(tx, sql::kSetSecret, Params().Add(id).Add(box_.Seal(secret)));
    if (grace <= Duration::zero()) previous_valid_until = ToTimestamp(now[0][0]);
    tx.commit();
    return previous_valid_until;
  });
}

Result<void> PgStore::DeleteDestination(int64_t id, const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    if (Exec(tx, sql::kDeleteDestination, Params().Add(id).Add(scope.tenant_id)).empty()) {
      return NoDestination();
    }
    Exec(tx, sql::kCancelDestinationDeliveries, Params().Add(id));
    tx.commit();
    return {};
  });
}

bool PgStore::InsertEventLater(NewEvent& event, InsertDone& done) {
  if (event.destination_id || !committer_) return false;
  committer_->Submit(std::move(event), std::move(done));
  return true;
}

Result<IngestReceipt> PgStore::InsertEvent(const NewEvent& event,
                                           const std::optional<IdempotencyKey>& key) {
  // Keyed and targeted ingests have their own checks and answers: one transaction each.
  if (!key && !event.destination_id && committer_) return committer_->Insert(event);
  return Run([&](pqxx::connection& c) -> Result<IngestReceipt> {
    IngestReceipt receipt;
    bool key_taken = true;
    {
      pqxx::work tx(c);
      if (!event.verify_key_hash.empty()) {
        // A tenant key never publishes; the caller then looks the key up and answers 403.
        auto live = Exec(tx, sql::kFindApiKey, Params().Add(event.verify_key_hash));
        if (live.empty() || ToApiKey(live[0]).role == Role::kTenant) return KeyNotLive();
      }
      auto ev = Exec(tx, sql::kInsertEvent,
                     Params()
                         .Add(event.type)
                         .Add(event.payload)
                         .Add(event.tenant_id)
                         .Add(event.ordering_key)
                         .Add(event.catalog_generation)
                         .Add(event.traceparent)
                         .Add(event.tracestate));
      if (ev.empty()) return CatalogChanged();
      receipt.event =
          Event{ev[0][0].as<int64_t>(), event.type,        event.payload, ToTimestamp(ev[0][1]), {},
                event.tenant_id,        event.ordering_key};
      if (key) {
        key_taken = !Exec(tx, sql::kTakeIdempotencyKey,
                          Params()
                              .Add(key->key)
                              .Add(key->request_hash)
                              .Add(receipt.event.id)
                              .Add(event.tenant_id))
                         .empty();
      }
      if (key_taken) {
        // Checked after the key, so a replay answers as the original did even if the
        // destination was deleted since. Returning aborts the transaction.
        if (event.destination_id) {
          auto target = Exec(tx, sql::kLiveDestinationExists,
                             Params().Add(*event.destination_id).Add(event.tenant_id));
          if (target.empty()) return Invalid({{"destination_id", "no destination with that id"}});
          if (!target[0][0].as<bool>()) {
            return Invalid(
                {{"destination_id", event.tenant_id ? "is not a destination of the event's tenant"
                                                    : "is a tenant's destination; the event has no "
                                                      "tenant_id"}});
          }
        }
        const pqxx::result rows = event.destination_id ? Exec(tx, sql::kFanOutTargeted,
                                                              Params()
                                                                  .Add(receipt.event.id)
                                                                  .Add(*event.destination_id)
                                                                  .Add(event.ordering_key))
                                                       : Exec(tx, sql::kFanOut,
                                                              Params()
                                                                  .Add(receipt.event.id)
                                                                  .Add(event.type)
                                                                  .Add(event.tenant_id)
                                                                  .Add(event.ordering_key)
                                                                  .Add(event.payload));
        for (const auto& row : rows) {
          receipt.event.deliveries.push_back(NewDelivery(row[0].as<int64_t>(), receipt.event.id,
                                                         row[1].as<int64_t>(), ToTimestamp(row[2]),
                                                         event.tenant_id));
        }
        // One notification per transaction, however many deliveries it made.
        if (!receipt.event.deliveries.empty()) NotifyWakeup(tx);
        try {
          tx.commit();
        } catch (const pqxx::in_doubt_error&) {
          // Only a 202 for what committed, and a 202 for everything that did.
          if (CommittedAfterDoubt(pool_.url(), {receipt.event.id}, receipt.event.created_at))
            return receipt;
          throw;
        }
        return receipt;
      }
    }
    // The key is held by an earlier request that committed: answer as it was answered.
    pqxx::nontransaction tx(c);
    auto held = Exec(tx, sql::kGetIdempotencyKey, Params().Add(key->key).Add(event.tenant_id));
    if (held.empty()) return Fail(ErrorKind::kConflict, "the Idempotency-Key is in use; retry");
    if (held[0][0].c_str() != key->request_hash) {
      return Invalid({{"Idempotency-Key", "was already used with a different request body"}});
    }
    auto ev = Exec(tx, sql::kGetEvent, Params().Add(held[0][1].as<int64_t>()).AddNull());
    if (ev.empty()) return Fail(ErrorKind::kInternal, "idempotency record without its event");
    receipt.event = ToEvent(ev[0]);
    for (const auto& row : Exec(tx, sql::kEventDeliveries, Params().Add(receipt.event.id))) {
      Delivery d = ToDelivery(row);
      d.status = DeliveryStatus::kPending;  // as the original 202 said
      receipt.event.deliveries.push_back(d);
    }
    receipt.replayed = true;
    return receipt;
  });
}

Result<Event> PgStore::GetEvent(int64_t id, const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<Event> {
    pqxx::work tx(c);  // one snapshot for the event and its deliveries
    auto r = Exec(tx, sql::kGetEvent, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no event with that id");
    Event event = ToEvent(r[0]);
    for (const auto& row : Exec(tx, sql::kEventDeliveries, Params().Add(id))) {
      event.deliveries.push_back(ToDelivery(row));
    }
    return event;
  });
}

Result<Listing<Event>> PgStore::ListEvents(const EventFilter& filter, const Page& page,
                                           const Scope& scope) {
  return ListPage<Event>(sql::kListEvents,
                         Params()
                             .Add(page.before_id)
                             .Add(filter.type)
                             .Add(filter.after)
                             .Add(filter.before)
                             .Add(page.limit + 1)
                             .Add(filter.tenant_id)
                             .Add(scope.tenant_id),
                         page, ToEvent);
}

Result<Delivery> PgStore::GetDelivery(int64_t id, const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<Delivery> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetDelivery, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no delivery with that id");
    return ToDelivery(r[0]);
  });
}

Result<Listing<Delivery>> PgStore::ListDeliveries(const DeliveryFilter& filter, const Page& page,
                                                  const Scope& scope) {
  std::optional<std::string> status;
  if (filter.status) status = std::string(DeliveryStatusName(*filter.status));
  if (status && !filter.destination_id && !filter.tenant_id && !scope.tenant_id) {
    return ListPage<Delivery>(sql::kListDeliveriesOfStatus,
                              Params().Add(page.before_id).Add(status).Add(page.limit + 1), page,
                              ToDelivery);
  }
  return ListPage<Delivery>(sql::kListDeliveries,
                            Params()
                                .Add(page.before_id)
                                .Add(filter.destination_id)
                                .Add(status)
                                .Add(page.limit + 1)
                                .Add(filter.tenant_id)
                                .Add(scope.tenant_id),
                            page, ToDelivery);
}

Result<Listing<Attempt>> PgStore::ListAttempts(int64_t delivery_id, const AttemptPage& page,
                                               const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<Listing<Attempt>> {
    pqxx::work tx(c);
    if (Exec(tx, sql::kGetDelivery, Params().Add(delivery_id).Add(scope.tenant_id)).empty()) {
      return Fail(ErrorKind::kNotFound, "no delivery with that id");
    }
    Listing<Attempt> listing;
    for (const auto& r : Exec(tx, sql::kListAttempts,
                              Params().Add(delivery_id).Add(page.after).Add(page.limit + 1))) {
      listing.items.push_back(ToAttempt(r));
    }
    if (static_cast<int>(listing.items.size()) > page.limit) {
      listing.items.resize(page.limit);
      listing.next_before_id = listing.items.back().attempt_number;
    }
    return listing;
  });
}

Result<ClaimedBatch> PgStore::ClaimDue(int limit, Duration lease, int default_cap) {
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<ClaimedBatch> {
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

Result<RecordedOutcomes> PgStore::RecordOutcomes(std::span<const AttemptRecord> records,
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
  done->circuits_opened += more->circuits_opened;
  done->circuits_closed += more->circuits_closed;
  return done;
}

Result<RecordedOutcomes> PgStore::RecordSuccesses(std::span<const AttemptRecord> records) {
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
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<RecordedOutcomes> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server
    auto r = Exec(tx, sql::kRecordSuccesses,
                  Params()
                      .Add(ids.Finish())
                      .Add(tokens.Finish())
                      .Add(numbers.Finish())
                      .Add(started.Finish())
                      .Add(durations.Finish())
                      .Add(codes.Finish())
                      .Add(bodies.Finish()));
    RecordedOutcomes recorded;
    recorded.applied.reserve(r.size());
    for (const auto& row : r) recorded.applied.push_back(row[0].as<int64_t>());
    return recorded;
  });
}

Result<RecordedOutcomes> PgStore::RecordWithProtection(std::span<const AttemptRecord> records,
                                                       const ProtectionSettings& protection) {
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
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<RecordedOutcomes> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server, never left open
    auto r = Exec(tx, sql::kRecordOutcomes,
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
                      .Add(disables.Finish())
                      .Add(probes.Finish())
                      .Add(protection.circuit.threshold)
                      .Add(static_cast<int64_t>(protection.circuit.cooldown.count()))
                      .Add(static_cast<int64_t>(CircuitSettings::kMaxCooldown.count()))
                      .Add(std::to_string(CircuitSettings::kJitter))
                      .Add(static_cast<int64_t>(protection.disable_after.count()))
                      .Add(protection.default_max_in_flight)
                      .Add(kWakeupChannel)
                      .Add(jitters.Finish()));
    RecordedOutcomes recorded;
    recorded.applied.reserve(r.size());
    for (const auto& row : r) {
      if (!row[0].is_null()) {
        recorded.applied.push_back(row[0].as<int64_t>());
      } else if (std::string_view(row[1].c_str()) == "open") {
        ++recorded.circuits_opened;
      } else if (std::string_view(row[1].c_str()) == "closed") {
        ++recorded.circuits_closed;
      }
    }
    return recorded;
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
    auto r = Exec(tx, sql::kReleaseClaims, Params().Add(ids.Finish()).Add(tokens.Finish()));
    if (r.affected_rows() > 0) NotifyWakeup(tx);
    tx.commit();
    return static_cast<int>(r.affected_rows());
  });
}

Result<int> PgStore::RequeueExpiredLeases() {
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<int> {
    pqxx::nontransaction tx(c);  // one statement: committed by the server, never left open
    auto r = Exec(tx, sql::kRequeueExpired);
    return static_cast<int>(r.affected_rows());
  });
}

Result<std::optional<Timestamp>> PgStore::NextDueAt() {
  return RunOn(worker_pool_, [&](pqxx::connection& c) -> Result<std::optional<Timestamp>> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kNextDueAt);
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
    auto r = Exec(tx, sql::kCountDeliveries);
    return DeliveryGauges{r[0][0].as<int64_t>(), r[0][1].as<int64_t>(), r[0][2].as<int64_t>(),
                          r[0][3].as<int64_t>()};
  });
}

Result<std::vector<std::pair<int64_t, std::string>>> PgStore::ClientCertificates() {
  return Run([&](pqxx::connection& c) -> Result<std::vector<std::pair<int64_t, std::string>>> {
    pqxx::nontransaction tx(c);
    std::vector<std::pair<int64_t, std::string>> out;
    for (const auto& r : Exec(tx, sql::kClientCertificates)) {
      out.emplace_back(r[0].as<int64_t>(), r[1].c_str());
    }
    return out;
  });
}

Result<HealthStats> PgStore::Stats(Duration window) {
  return Run([&](pqxx::connection& c) -> Result<HealthStats> {
    pqxx::nontransaction tx(c);
    const auto r = Exec(tx, sql::kStats, Params().Add(static_cast<int64_t>(window.count())))[0];
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

Result<int64_t> PgStore::PurgeExpired(Duration retention, int batch) {
  return Run([&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::work tx(c);
    // Maintenance, not a request: WEBHOOKD_STATEMENT_TIMEOUT does not bound it.
    Exec(tx, sql::kLiftStatementTimeout);
    if (!Exec(tx, sql::kTryPurgeLock, Params().Add(kPurgeLock))[0][0].as<bool>()) return 0;
    Exec(tx, sql::kPurgeIdempotencyKeys);
    Exec(tx, sql::kEraseExpiredSecrets, Params().AddNull());
    if (retention <= Duration::zero()) {
      tx.commit();
      return 0;
    }
    auto r = Exec(tx, sql::kPurgeExpiredEvents,
                  Params().Add(static_cast<int64_t>(retention.count())).Add(batch));
    tx.commit();
    return r[0][0].as<int64_t>();
  });
}

Result<std::vector<StatsPoint>> PgStore::StatsSeries(Duration window, Duration step) {
  return Run([&](pqxx::connection& c) -> Result<std::vector<StatsPoint>> {
    pqxx::nontransaction tx(c);
    std::vector<StatsPoint> points;
    for (const auto& r : Exec(tx, sql::kStatsSeries,
                              Params()
                                  .Add(static_cast<int64_t>(window.count()))
                                  .Add(static_cast<int64_t>(step.count())))) {
      points.push_back(StatsPoint{ToTimestamp(r[0]), r[1].as<int64_t>(), r[2].as<int64_t>(),
                                  r[3].as<int64_t>(), r[4].as<int64_t>()});
    }
    return points;
  });
}

Result<Listing<DeadLetter>> PgStore::ListDeadLetters(const DeadLetterFilter& filter,
                                                     const Page& page, const Scope& scope) {
  return ListPage<DeadLetter>(sql::kListDeadLetters,
                              Params()
                                  .Add(filter.destination_id)
                                  .Add(ReasonParam(filter))
                                  .Add(filter.since)
                                  .Add(filter.until)
                                  .Add(page.before_id)
                                  .Add(page.limit + 1)
                                  .Add(filter.tenant_id)
                                  .Add(scope.tenant_id),
                              page, ToDeadLetter);
}

Result<int64_t> PgStore::ReplayDeadLetter(int64_t id, const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kReplayDeadLetter, Params().Add(id).Add(scope.tenant_id));
    if (!r.empty()) {
      NotifyWakeup(tx);
      tx.commit();
      return r[0][0].as<int64_t>();
    }
    auto state = Exec(tx, sql::kDeadLetterState, Params().Add(id).Add(scope.tenant_id));
    if (state.empty()) return Fail(ErrorKind::kNotFound, "no dead letter with that id");
    if (state[0][0].as<bool>())
      return Fail(ErrorKind::kConflict, "this dead letter was already replayed");
    if (state[0][2].as<bool>()) {
      return Fail(ErrorKind::kConflict, "this dead letter was dismissed");
    }
    if (state[0][1].as<bool>()) {
      return Fail(ErrorKind::kConflict, "the destination of this dead letter was deleted");
    }
    return Fail(ErrorKind::kConflict, "the delivery of this dead letter is not dead-lettered");
  });
}

Result<DeadLetter> PgStore::DismissDeadLetter(int64_t id, const Scope& scope) {
  return Run([&](pqxx::connection& c) -> Result<DeadLetter> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kDismissDeadLetter, Params().Add(id).Add(scope.tenant_id));
    if (!r.empty()) {
      NotifyWakeup(tx);
      tx.commit();
      return ToDeadLetter(r[0]);
    }
    auto state = Exec(tx, sql::kDeadLetterState, Params().Add(id).Add(scope.tenant_id));
    if (state.empty()) return Fail(ErrorKind::kNotFound, "no dead letter with that id");
    if (state[0][2].as<bool>()) {
      return Fail(ErrorKind::kConflict, "this dead letter was already dismissed");
    }
    return Fail(ErrorKind::kConflict, "this dead letter was replayed; it cannot be dismissed");
  });
}

Result<DeadLetterStore::BulkReplay> PgStore::ReplayDeadLetters(const DeadLetterFilter& filter,
                                                               const Scope& scope,
                                                               std::optional<int64_t> max) {
  return Run([&](pqxx::connection& c) -> Result<BulkReplay> {
    BulkReplay done;
    for (;;) {
      const int64_t chunk =
          max ? std::min<int64_t>(kReplayChunk, *max - done.replayed) : int64_t{kReplayChunk};
      if (chunk <= 0) {
        done.more = true;
        break;
      }
      pqxx::work tx(c);
      auto r = Exec(tx, sql::kReplayDeadLetterChunk,
                    Params()
                        .Add(filter.destination_id)
                        .Add(ReasonParam(filter))
                        .Add(filter.since)
                        .Add(filter.until)
                        .Add(chunk)
                        .Add(filter.tenant_id)
                        .Add(scope.tenant_id));
      const int64_t n = r[0][0].as<int64_t>();
      if (n > 0) NotifyWakeup(tx);
      tx.commit();
      done.replayed += n;
      if (n == 0) break;
    }
    return done;
  });
}

Result<TenantListing> PgStore::ListTenants(const TenantPage& page) {
  return Run([&](pqxx::connection& c) -> Result<TenantListing> {
    pqxx::nontransaction tx(c);
    TenantListing listing;
    for (const auto& row :
         Exec(tx, sql::kListTenants, Params().Add(page.after_id).Add(page.limit + 1))) {
      listing.items.push_back(TenantSummary{row[0].c_str(), row[1].as<int64_t>(),
                                            row[2].as<int64_t>(), row[3].as<int64_t>()});
    }
    if (static_cast<int>(listing.items.size()) > page.limit) {
      listing.items.resize(page.limit);
      listing.next_after_id = listing.items.back().tenant_id;
    }
    return listing;
  });
}

Result<CredentialCensus> PgStore::CountCredentials() {
  return Run([&](pqxx::connection& c) -> Result<CredentialCensus> {
    pqxx::nontransaction tx(c);
    CredentialCensus census;
    for (const auto& r : Exec(tx, sql::kCredentialCensus, Params())) {
      census.by_key_id[std::string(SecretBox::KeyIdOf(r[0].c_str()))] += r[1].as<int64_t>();
    }
    return census;
  });
}

Result<int64_t> PgStore::ReencryptCredentials() {
  constexpr int kBatch = 500;
  if (!box_.sealing()) {
    return Fail(ErrorKind::kInvalid,
                "WEBHOOKD_ENCRYPTION_KEY is unset: there is no key to encrypt with");
  }
  int64_t rewritten = 0;
  int64_t after = 0;
  while (true) {
    int64_t batch_rewritten = 0;
    auto batch = Run([&](pqxx::connection& c) -> Result<int> {
      pqxx::work tx(c);
      batch_rewritten = 0;
      auto rows = Exec(tx, sql::kLockCredentials, Params().Add(after).Add(kBatch));
      // A value's new form, or nullopt when it is under the current key already. One
      // that no key opens fails the batch, and the transaction writes nothing.
      const auto reseal = [&](const std::string& stored) -> Result<std::optional<std::string>> {
        if (box_.IsCurrent(stored)) return std::optional<std::string>();
        Result<std::string> plain = box_.Open(stored);
        if (!plain) return std::unexpected(plain.error());
        ++batch_rewritten;
        return std::optional<std::string>(box_.Seal(*plain));
      };
      for (const auto& r : rows) {
        after = r[0].as<int64_t>();
        const std::string secret = r[1].c_str();
        Result<std::optional<std::string>> new_secret = reseal(secret);
        if (!new_secret) return std::unexpected(new_secret.error());
        Headers headers = ParseHeaders(r[2].c_str());
        bool headers_changed = false;
        for (auto& header : headers) {
          Result<std::optional<std::string>> value = reseal(header.second);
          if (!value) return std::unexpected(value.error());
          if (*value) {
            header.second = std::move(**value);
            headers_changed = true;
          }
        }
        // The mTLS key and the OAuth client secret, when the destination has them.
        std::optional<std::string> key = ToOptionalString(r[4]);
        std::optional<std::string> client_secret = ToOptionalString(r[5]);
        bool others_changed = false;
        for (std::optional<std::string>* value : {&key, &client_secret}) {
          if (!*value) continue;
          Result<std::optional<std::string>> resealed = reseal(**value);
          if (!resealed) return std::unexpected(resealed.error());
          if (*resealed) {
            *value = std::move(**resealed);
            others_changed = true;
          }
        }
        if (*new_secret || headers_changed || others_changed) {
          Exec(tx, sql::kRewriteCredentials,
               Params()
                   .Add(after)
                   .Add(new_secret->value_or(secret))
                   .Add(HeadersJson(headers))
                   .Add(key)
                   .Add(client_secret));
        }
        for (const auto& earlier : nlohmann::json::parse(r[3].c_str())) {
          const std::string stored = earlier.get<std::string>();
          Result<std::optional<std::string>> value = reseal(stored);
          if (!value) return std::unexpected(value.error());
          if (!*value) continue;
          Exec(tx, sql::kRewriteEarlierSecret, Params().Add(after).Add(stored).Add(**value));
        }
      }
      tx.commit();
      return static_cast<int>(rows.size());
    });
    if (!batch) return std::unexpected(batch.error());
    rewritten += batch_rewritten;
    if (*batch < kBatch) return rewritten;
  }
}

}  // namespace webhookd::pg
