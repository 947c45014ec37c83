#include "store/pg/pg_destination_store.h"

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

// The column's value: NULL dead-letters.
std::optional<std::string> FallbackValue(Fallback fallback) {
  return fallback == Fallback::kFeed ? std::optional<std::string>("feed") : std::nullopt;
}

// The bins' sums as PostgreSQL writes an array ("{3,0,...}"); a NULL sum (no row of the
// bucket had that bin) reads as 0.
LatencyCounts LatencyCountsOf(std::string_view text) {
  LatencyCounts out{};
  size_t i = 0;
  int64_t value = 0;
  bool digits = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      digits = true;
    } else if (c == ',' || c == '}') {
      if (i < out.size()) out[i++] = digits ? value : 0;
      value = 0;
      digits = false;
    }
  }
  return out;
}

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
  if (d.broker && d.broker->username) d.broker->username = box_.Seal(*d.broker->username);
  if (d.broker && d.broker->password) d.broker->password = box_.Seal(*d.broker->password);
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
  if (d.broker) {
    for (std::optional<std::string>* credential : {&d.broker->username, &d.broker->password}) {
      if (!*credential) continue;
      Result<std::string> plain = box_.Open(**credential);
      if (!plain) return std::unexpected(plain.error());
      *credential = std::move(*plain);
    }
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
    NamedParams params(sql::kCreateDestination);
    params.Set("url", d.url)
        .Set("description", d.description)
        .Set("event_types", TextArray(d.event_types))
        .Set("secret", sealed.secret)
        .Set("headers", HeadersJson(sealed.headers))
        .Set("enabled", d.enabled)
        .Set("max_in_flight", d.max_in_flight)
        .Set("tenant_id", d.tenant_id)
        .Set("rate_limit", d.rate_limit)
        .Set("ordering", OrderingName(d.ordering))
        .Set("on_dead_letter", OnDeadLetterName(d.on_dead_letter))
        .Set("filter", d.filter)
        .Set("tls_client_certificate", sealed.tls ? sealed.tls->client_certificate : std::nullopt)
        .Set("tls_client_key", sealed.tls ? sealed.tls->client_key : std::nullopt)
        .Set("tls_ca_certificate", sealed.tls ? sealed.tls->ca_certificate : std::nullopt)
        .Set("auth_token_url", sealed.auth ? std::optional(sealed.auth->token_url) : std::nullopt)
        .Set("auth_client_id", sealed.auth ? std::optional(sealed.auth->client_id) : std::nullopt)
        .Set("auth_client_secret",
             sealed.auth ? std::optional(sealed.auth->client_secret) : std::nullopt)
        .Set("auth_scope", sealed.auth ? sealed.auth->scope : std::nullopt)
        .Set("broker", sealed.broker ? std::optional(BrokerJson(*sealed.broker)) : std::nullopt)
        .Set("broker_username", sealed.broker ? sealed.broker->username : std::nullopt)
        .Set("broker_password", sealed.broker ? sealed.broker->password : std::nullopt)
        .Set("fallback", FallbackValue(d.fallback));
    auto r = Exec(tx, params);
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

Result<std::vector<DestinationStatsBucket>> PgDestinationStore::GetDestinationStats(
    int64_t id, const DestinationStatsWindow& window, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<DestinationStatsBucket>> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kDestinationStats,
                  Params()
                      .Add(id)
                      .Add(scope.tenant_id)
                      .Add(window.since)
                      .Add(window.until)
                      .Add(static_cast<int64_t>(window.step.count()))
                      .Add(UsesHourRollups(window)));
    // Every window holds a bucket, so no row at all is no destination.
    if (r.empty()) return NoDestination();
    std::vector<DestinationStatsBucket> out;
    out.reserve(r.size());
    for (const auto& row : r) {
      DestinationStatsBucket b;
      b.start = ToTimestamp(row[0]);
      b.succeeded = row[1].as<int64_t>();
      b.retryable = row[2].as<int64_t>();
      b.permanent = row[3].as<int64_t>();
      b.dead_lettered = row[4].as<int64_t>();
      if (!row[5].is_null()) b.latency = LatencyCountsOf(row[5].as<std::string>());
      out.push_back(b);
    }
    return out;
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
        if (d.broker && d.broker->username) d.broker->username->clear();
        if (d.broker && d.broker->password) d.broker->password->clear();
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
    NamedParams params(sql::kUpdateDestination);
    params.Set("id", id).Set("url", f.url).Set("description", f.description);
    params.Set("event_types_given", f.event_types.has_value());
    params.Set("event_types",
               f.event_types ? std::optional(TextArray(*f.event_types)) : std::nullopt);
    params.Set("secret", f.secret ? std::optional(box_.Seal(*f.secret)) : std::nullopt);
    std::optional<std::string> headers;
    if (f.headers) {
      Headers sealed = *f.headers;
      for (auto& header : sealed) {
        // The hidden marker keeps the stored value; sealed it would be a new one.
        if (header.second != kHiddenHeaderValue) header.second = box_.Seal(header.second);
      }
      headers = HeadersJson(sealed);
    }
    params.Set("headers", headers).Set("enabled", f.enabled);
    params.Set("max_in_flight_given", f.max_in_flight.has_value());
    params.Set("max_in_flight", f.max_in_flight.value_or(std::nullopt));
    params.Set("scope_tenant_id", scope.tenant_id);
    params.Set("tenant_id_given", f.tenant_id.has_value());
    params.Set("tenant_id", f.tenant_id.value_or(std::nullopt));
    params.Set("rate_limit_given", f.rate_limit.has_value());
    params.Set("rate_limit", f.rate_limit.value_or(std::nullopt));
    params.Set("ordering", f.ordering ? std::optional(OrderingName(*f.ordering)) : std::nullopt);
    params.Set("on_dead_letter", f.on_dead_letter
                                     ? std::optional(OnDeadLetterName(*f.on_dead_letter))
                                     : std::nullopt);
    params.Set("filter_given", f.filter.has_value());
    if (f.filter && *f.filter) {
      WEBHOOKD_RETURN_IF_ERROR(CheckFilter(tx, **f.filter));
      params.Set("filter", **f.filter);
    } else {
      params.SetNull("filter");
    }
    params.Set("tls_given", f.tls.has_value());
    const std::optional<DestinationTls> tls = f.tls.value_or(std::nullopt);
    std::optional<std::string> tls_key = tls ? tls->client_key : std::nullopt;
    // The hidden marker keeps the stored key; sealed it would be a new one.
    if (tls_key && *tls_key != kHiddenHeaderValue) tls_key = box_.Seal(*tls_key);
    params.Set("tls_client_certificate", tls ? tls->client_certificate : std::nullopt)
        .Set("tls_client_key", tls_key)
        .Set("tls_ca_certificate", tls ? tls->ca_certificate : std::nullopt);
    params.Set("auth_given", f.auth.has_value());
    const std::optional<DestinationAuth> auth = f.auth.value_or(std::nullopt);
    std::optional<std::string> auth_secret;
    if (auth) {
      auth_secret = auth->client_secret == kHiddenHeaderValue ? auth->client_secret
                                                              : box_.Seal(auth->client_secret);
    }
    params.Set("auth_token_url", auth ? std::optional(auth->token_url) : std::nullopt)
        .Set("auth_client_id", auth ? std::optional(auth->client_id) : std::nullopt)
        .Set("auth_client_secret", auth_secret)
        .Set("auth_scope", auth ? auth->scope : std::nullopt);
    params.Set("broker_given", f.broker.has_value());
    const std::optional<BrokerSettings> broker = f.broker.value_or(std::nullopt);
    // The hidden marker keeps the stored credential; sealed it would be a new one.
    const auto sealed_credential = [&](const std::optional<std::string>& v) {
      return v && *v != kHiddenHeaderValue ? std::optional(box_.Seal(*v)) : v;
    };
    params.Set("broker", broker ? std::optional(BrokerJson(*broker)) : std::nullopt)
        .Set("broker_username", broker ? sealed_credential(broker->username) : std::nullopt)
        .Set("broker_password", broker ? sealed_credential(broker->password) : std::nullopt);
    params.Set("fallback_given", f.fallback.has_value());
    params.Set("fallback", FallbackValue(f.fallback.value_or(Fallback::kDeadLetter)));
    auto r = Exec(tx, params);
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
