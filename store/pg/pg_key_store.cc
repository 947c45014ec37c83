#include "store/pg/pg_key_store.h"

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

Result<ApiKeyInfo> PgKeyStore::CreateApiKey(const NewApiKey& key) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<ApiKeyInfo> {
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

Result<KeyStore::Bootstrap> PgKeyStore::EnsureAdminKey(const std::string& key_hash) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Bootstrap> {
    pqxx::work tx(c);
    const auto r = Exec(tx, sql::kEnsureAdminKey, Params().Add(key_hash));
    tx.commit();
    const std::string_view state = r[0][0].c_str();
    if (state == "revoked") return Bootstrap::kRevoked;
    if (state == "expired") return Bootstrap::kExpired;
    return Bootstrap::kLive;
  });
}

Result<std::vector<ApiKeyInfo>> PgKeyStore::ListApiKeys() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<ApiKeyInfo>> {
    pqxx::nontransaction tx(c);
    std::vector<ApiKeyInfo> keys;
    for (const auto& row : Exec(tx, sql::kListApiKeys)) keys.push_back(ToApiKey(row));
    return keys;
  });
}

Result<void> PgKeyStore::RevokeApiKey(int64_t id) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kRevokeApiKey, Params().Add(id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no live API key with that id");
    tx.commit();
    return {};
  });
}

Result<std::optional<ApiKeyInfo>> PgKeyStore::FindApiKey(const std::string& key_hash) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::optional<ApiKeyInfo>> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kFindApiKey, Params().Add(key_hash));
    if (r.empty()) return std::nullopt;
    return ToApiKey(r[0]);
  });
}

}  // namespace webhookd::pg
