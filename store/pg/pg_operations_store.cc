#include "store/pg/pg_operations_store.h"

#include <set>

#include "store/pg/exec.h"
#include "store/pg/migrator.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

Result<bool> PgOperationsStore::Ready() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<bool> {
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

Result<DeliveryGauges> PgOperationsStore::CountDeliveries() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<DeliveryGauges> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kCountDeliveries);
    return DeliveryGauges{r[0][0].as<int64_t>(), r[0][1].as<int64_t>(), r[0][2].as<int64_t>(),
                          r[0][3].as<int64_t>()};
  });
}

Result<std::vector<FeedMessageCounts>> PgOperationsStore::CountFeedMessages() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<FeedMessageCounts>> {
    pqxx::nontransaction tx(c);
    std::vector<FeedMessageCounts> out;
    for (const auto& r : Exec(tx, sql::kFeedMessageCounts)) {
      out.push_back({r[0].as<int64_t>(), r[1].as<int64_t>(), r[2].as<int64_t>()});
    }
    return out;
  });
}

Result<std::vector<std::pair<int64_t, std::string>>> PgOperationsStore::ClientCertificates() {
  return RunOn(pool_,
               [&](pqxx::connection& c) -> Result<std::vector<std::pair<int64_t, std::string>>> {
                 pqxx::nontransaction tx(c);
                 std::vector<std::pair<int64_t, std::string>> out;
                 for (const auto& r : Exec(tx, sql::kClientCertificates)) {
                   out.emplace_back(r[0].as<int64_t>(), r[1].c_str());
                 }
                 return out;
               });
}

Result<HealthStats> PgOperationsStore::Stats(Duration window) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<HealthStats> {
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

Result<std::vector<StatsPoint>> PgOperationsStore::StatsSeries(Duration window, Duration step) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<StatsPoint>> {
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

Result<std::vector<FailingDestination>> PgOperationsStore::FailingDestinations(Duration window,
                                                                               int limit) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<FailingDestination>> {
    pqxx::nontransaction tx(c);
    std::vector<FailingDestination> out;
    for (const auto& r : Exec(tx, sql::kFailingDestinations,
                              Params().Add(static_cast<int64_t>(window.count())).Add(limit))) {
      FailingDestination d;
      d.id = r[0].as<int64_t>();
      if (!r[1].is_null()) d.tenant_id = r[1].as<std::string>();
      d.url = r[2].as<std::string>();
      d.description = r[3].as<std::string>();
      d.failed = r[4].as<int64_t>();
      d.succeeded = r[5].as<int64_t>();
      d.dead_lettered = r[6].as<int64_t>();
      out.push_back(std::move(d));
    }
    return out;
  });
}

}  // namespace webhookd::pg
