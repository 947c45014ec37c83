#include "store/pg/pg_secret_store.h"

#include <nlohmann/json.hpp>

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

Result<CredentialCensus> PgSecretStore::CountCredentials() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<CredentialCensus> {
    pqxx::nontransaction tx(c);
    CredentialCensus census;
    for (const auto& r : Exec(tx, sql::kCredentialCensus, Params())) {
      census.by_key_id[std::string(SecretBox::KeyIdOf(r[0].c_str()))] += r[1].as<int64_t>();
    }
    return census;
  });
}

Result<int64_t> PgSecretStore::ReencryptCredentials() {
  constexpr int kBatch = 500;
  if (!box_.sealing()) {
    return Fail(ErrorKind::kInvalid,
                "WEBHOOKD_ENCRYPTION_KEY is unset: there is no key to encrypt with");
  }
  int64_t rewritten = 0;
  int64_t after = 0;
  while (true) {
    int64_t batch_rewritten = 0;
    auto batch = RunOn(pool_, [&](pqxx::connection& c) -> Result<int> {
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
        // The mTLS key, the OAuth client secret and the broker's credentials, when the
        // destination has them.
        std::optional<std::string> key = ToOptionalString(r[4]);
        std::optional<std::string> client_secret = ToOptionalString(r[5]);
        std::optional<std::string> broker_username = ToOptionalString(r[6]);
        std::optional<std::string> broker_password = ToOptionalString(r[7]);
        bool others_changed = false;
        for (std::optional<std::string>* value :
             {&key, &client_secret, &broker_username, &broker_password}) {
          if (!*value) continue;
          Result<std::optional<std::string>> resealed = reseal(**value);
          if (!resealed) return std::unexpected(resealed.error());
          if (*resealed) {
            *value = std::move(**resealed);
            others_changed = true;
          }
        }
        if (*new_secret || headers_changed || others_changed) {
          NamedParams params(sql::kRewriteCredentials);
          params.Set("id", after)
              .Set("secret", new_secret->value_or(secret))
              .Set("headers", HeadersJson(headers))
              .Set("tls_client_key", key)
              .Set("auth_client_secret", client_secret)
              .Set("broker_username", broker_username)
              .Set("broker_password", broker_password);
          Exec(tx, params);
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
    if (*batch < kBatch) break;
  }
  // The inbound sources' secrets, the same way.
  after = 0;
  while (true) {
    int64_t batch_rewritten = 0;
    auto batch = RunOn(pool_, [&](pqxx::connection& c) -> Result<int> {
      pqxx::work tx(c);
      batch_rewritten = 0;
      auto rows = Exec(tx, sql::kLockSourceCredentials, Params().Add(after).Add(kBatch));
      for (const auto& r : rows) {
        after = r[0].as<int64_t>();
        std::optional<std::string> secret = ToOptionalString(r[1]);
        std::optional<std::string> previous = ToOptionalString(r[2]);
        bool changed = false;
        for (std::optional<std::string>* value : {&secret, &previous}) {
          // A deleted source's secret is erased (''): nothing to seal.
          if (!*value || (*value)->empty() || box_.IsCurrent(**value)) continue;
          Result<std::string> plain = box_.Open(**value);
          if (!plain) return std::unexpected(plain.error());
          *value = box_.Seal(*plain);
          ++batch_rewritten;
          changed = true;
        }
        if (changed) {
          Exec(tx, sql::kRewriteSourceCredentials,
               Params().Add(after).Add(secret.value_or("")).Add(previous));
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
