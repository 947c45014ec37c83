#include "store/pg/pg_source_store.h"

#include <algorithm>

#include "store/pg/exec.h"
#include "store/pg/pg_values.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

// One answer for an unknown source and for one outside the caller's scope.
std::unexpected<Error> NoSource() { return Fail(ErrorKind::kNotFound, "no source with that id"); }

// The columns every source statement returns first (store/pg/sql/*_source*.sql).
Source ToSource(const pqxx::row& r) {
  Source s;
  s.id = r[0].as<int64_t>();
  s.tenant_id = ToOptionalString(r[1]);
  s.settings.provider = ParseInboundProvider(r[2].c_str()).value_or(InboundProvider::kHmac);
  s.description = r[3].c_str();
  s.settings.type_prefix = r[4].c_str();
  s.settings.tolerance = std::chrono::milliseconds(r[5].as<int64_t>());
  s.settings.url = r[6].c_str();
  s.settings.hmac.header = r[7].c_str();
  s.settings.hmac.algorithm = ParseHmacAlgorithm(r[8].c_str()).value_or(HmacAlgorithm::kSha256);
  s.settings.hmac.encoding = ParseSignatureEncoding(r[9].c_str()).value_or(SignatureEncoding::kHex);
  s.settings.hmac.prefix = r[10].c_str();
  s.settings.event_type = r[11].c_str();
  s.settings.dedupe_header = r[12].c_str();
  s.created_at = ToTimestamp(r[13]);
  s.updated_at = ToTimestamp(r[14]);
  s.previous_valid_until = ToOptionalTimestamp(r[15]);
  return s;
}

int64_t ToleranceMs(const SourceSettings& settings) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(settings.tolerance).count();
}

// What create and update both write: the description and the provider's settings.
NamedParams& SetSettings(NamedParams& params, const Source& source) {
  const SourceSettings& s = source.settings;
  return params.Set("description", source.description)
      .Set("type_prefix", s.type_prefix)
      .Set("tolerance_ms", ToleranceMs(s))
      .Set("url", s.url)
      .Set("hmac_header", s.hmac.header)
      .Set("hmac_algorithm", HmacAlgorithmName(s.hmac.algorithm))
      .Set("hmac_encoding", SignatureEncodingName(s.hmac.encoding))
      .Set("hmac_prefix", s.hmac.prefix)
      .Set("event_type", s.event_type)
      .Set("dedupe_header", s.dedupe_header);
}

}  // namespace

Result<Source> PgSourceStore::CreateSource(const Source& source) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Source> {
    pqxx::work tx(c);
    NamedParams params(sql::kCreateSource);
    SetSettings(params, source)
        .Set("tenant_id", source.tenant_id)
        .Set("provider", InboundProviderName(source.settings.provider))
        .Set("secret", box_.Seal(source.secret));
    Source created = ToSource(Exec(tx, params)[0]);
    tx.commit();
    return created;
  });
}

Result<Source> PgSourceStore::GetSource(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Source> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetSource, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return NoSource();
    return ToSource(r[0]);
  });
}

Result<Listing<Source>> PgSourceStore::ListSources(const SourceFilter& filter, const Page& page,
                                                   const Scope& scope) {
  NamedParams params(sql::kListSources);
  params.Set("before_id", page.before_id)
      .Set("tenant_id", filter.tenant_id)
      .Set("scope_tenant_id", scope.tenant_id)
      .Set("limit", page.limit + 1);
  return ListPage<Source>(pool_, params, page, ToSource);
}

Result<Source> PgSourceStore::UpdateSource(int64_t id, const SourcePatch& apply,
                                           const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Source> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kLockSource, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return NoSource();
    Source source = ToSource(r[0]);
    WEBHOOKD_RETURN_IF_ERROR(apply(source));
    NamedParams params(sql::kUpdateSource);
    SetSettings(params, source).Set("id", id);
    Source updated = ToSource(Exec(tx, params)[0]);
    tx.commit();
    return updated;
  });
}

Result<Timestamp> PgSourceStore::RotateSourceSecret(int64_t id, const std::string& secret,
                                                    Duration grace, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Timestamp> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kRotateSourceSecret,
                  Params()
                      .Add(id)
                      .Add(box_.Seal(secret))
                      .Add(static_cast<int64_t>(std::max(grace, Duration::zero()).count()))
                      .Add(scope.tenant_id));
    if (r.empty()) return NoSource();
    const Timestamp until = ToTimestamp(r[0][0]);
    tx.commit();
    return until;
  });
}

Result<void> PgSourceStore::DeleteSource(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    if (Exec(tx, sql::kDeleteSource, Params().Add(id).Add(scope.tenant_id)).empty()) {
      return NoSource();
    }
    tx.commit();
    return {};
  });
}

Result<SourceSnapshot> PgSourceStore::LoadSources() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<SourceSnapshot> {
    // The generation first: a change committed between the two reads makes the rows newer
    // than it, never older, and an ingest against it then fails as stale and loads again.
    pqxx::nontransaction tx(c);
    SourceSnapshot snapshot;
    snapshot.generation = Exec(tx, sql::kSourceGeneration)[0][0].as<int64_t>();
    for (const auto& row : Exec(tx, sql::kLiveSources)) {
      Source s = ToSource(row);
      Result<std::string> secret = box_.Open(row[16].c_str());
      if (!secret) return std::unexpected(secret.error());
      s.secret = std::move(*secret);
      if (!row[17].is_null()) {
        Result<std::string> previous = box_.Open(row[17].c_str());
        if (!previous) return std::unexpected(previous.error());
        s.previous_secret = std::move(*previous);
      } else {
        s.previous_valid_until.reset();
      }
      snapshot.sources.push_back(std::move(s));
    }
    return snapshot;
  });
}

Result<int64_t> PgSourceStore::SourceGeneration() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::nontransaction tx(c);
    return Exec(tx, sql::kSourceGeneration)[0][0].as<int64_t>();
  });
}

Result<InboundReceipt> PgSourceStore::InsertInboundEvent(const InboundEvent& event) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<InboundReceipt> {
    // Twice at most: once more when the key named an event that retention removed.
    for (int round = 0; round < 2; ++round) {
      {
        pqxx::work tx(c);
        auto ev = Exec(tx, NamedParams(sql::kInsertInboundEvent)
                               .Set("type", event.type)
                               .Set("payload", event.payload)
                               .Set("tenant_id", event.tenant_id)
                               .Set("source_id", event.source_id)
                               .Set("source_provider", InboundProviderName(event.provider))
                               .Set("dedupe_key", event.dedupe_key)
                               .Set("generation", event.generation)
                               .Set("traceparent", event.traceparent));
        if (ev.empty()) return Fail(ErrorKind::kStale, "the sources changed; verify again");
        const int64_t event_id = ev[0][0].as<int64_t>();
        bool taken = true;
        if (event.dedupe_key) {
          taken = !Exec(tx, sql::kTakeSourceKey,
                        Params().Add(event.source_id).Add(*event.dedupe_key).Add(event_id))
                       .empty();
        }
        if (taken) {
          // The same fan-out as a published event's: tenant, types, filters, ordering.
          const pqxx::result rows = Exec(tx, sql::kFanOut,
                                         Params()
                                             .Add(event_id)
                                             .Add(event.type)
                                             .Add(event.tenant_id)
                                             .AddNull()
                                             .Add(event.payload));
          if (!rows.empty()) NotifyWakeup(tx);
          tx.commit();
          return InboundReceipt{event_id, false};
        }
        // The key names an earlier event: this transaction, and its event, roll back.
      }
      // A statement of its own, so that it sees the transaction that took the key.
      pqxx::nontransaction tx(c);
      auto held =
          Exec(tx, sql::kSourceKeyEvent, Params().Add(event.source_id).Add(*event.dedupe_key));
      if (held.empty()) continue;  // its event went meanwhile, and its key with it
      const int64_t held_id = held[0][0].as<int64_t>();
      if (held[0][1].as<bool>()) return InboundReceipt{held_id, true};
      Exec(tx, sql::kDropStaleSourceKey,
           Params().Add(event.source_id).Add(*event.dedupe_key).Add(held_id));
    }
    return Fail(ErrorKind::kUnavailable, "the duplicate key is changing; retry");
  });
}

}  // namespace webhookd::pg
