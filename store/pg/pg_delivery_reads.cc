#include "store/pg/pg_delivery_reads.h"

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

Result<Delivery> PgDeliveryReads::GetDelivery(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Delivery> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetDelivery, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no delivery with that id");
    return ToDelivery(r[0]);
  });
}

Result<Listing<Delivery>> PgDeliveryReads::ListDeliveries(const DeliveryFilter& filter,
                                                          const Page& page, const Scope& scope) {
  std::optional<std::string> status;
  if (filter.status) status = std::string(DeliveryStatusName(*filter.status));
  if (status && !filter.destination_id && !filter.tenant_id && !scope.tenant_id) {
    return ListPage<Delivery>(pool_, sql::kListDeliveriesOfStatus,
                              Params().Add(page.before_id).Add(status).Add(page.limit + 1), page,
                              ToDelivery);
  }
  return ListPage<Delivery>(pool_, sql::kListDeliveries,
                            Params()
                                .Add(page.before_id)
                                .Add(filter.destination_id)
                                .Add(status)
                                .Add(page.limit + 1)
                                .Add(filter.tenant_id)
                                .Add(scope.tenant_id),
                            page, ToDelivery);
}

Result<Listing<Attempt>> PgDeliveryReads::ListAttempts(int64_t delivery_id, const AttemptPage& page,
                                                       const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Listing<Attempt>> {
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

}  // namespace webhookd::pg
