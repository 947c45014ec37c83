#include "store/pg/pg_destination_store.h"

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

// One answer for an unknown destination and for one outside the caller's scope, so an
// answer never tells another tenant's ids from ids that do not exist.
std::unexpected<Error> NoDestination() {
  return Fail(ErrorKind::kNotFound, "no destination with that id");
}

}  // namespace

Destination PgDestinationStore::Sealed(Destination d) const {
  d.secret = box_.Seal(d.secret);
  for (auto& header : d.headers) header.second = box_.Seal(header.second);
  if (d.tls && d.tls->client_key) d.tls->client_key = box_.Seal(*d.tls->client_key);
  if (d.auth) d.auth->client_secret = box_.Seal(d.auth->client_secret);
  return d;
}

Result<Destination> PgDestinationStore::Opened(Destination d) const {
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

Result<Destination> PgDestinationStore::CreateDestination(const Destination& d,
                                                          int max_per_tenant) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Destination> {
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

Result<Destination> PgDestinationStore::GetDestination(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Destination> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetDestination, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return NoDestination();
    return Opened(ToDestination(r[0]));
  });
}

Result<Listing<Destination>> PgDestinationStore::ListDestinations(const DestinationFilter& filter,
                                                                  const Page& page,
                                                                  const Scope& scope) {
  // A listing never carries credentials: nothing to open, nothing to leak.
  return ListPage<Destination>(
      pool_, sql::kListDestinations,
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

Result<Destination> PgDestinationStore::UpdateDestination(int64_t id, const DestinationFields& f,
                                                          const Scope& scope,
                                                          const UpdateCheck& check) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Destination> {
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

Result<Timestamp> PgDestinationStore::RotateSecret(int64_t id, const std::string& secret,
                                                   Duration grace, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Timestamp> {
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

Result<void> PgDestinationStore::DeleteDestination(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    if (Exec(tx, sql::kDeleteDestination, Params().Add(id).Add(scope.tenant_id)).empty()) {
      return NoDestination();
    }
    Exec(tx, sql::kCancelDestinationDeliveries, Params().Add(id));
    tx.commit();
    return {};
  });
}

}  // namespace webhookd::pg
