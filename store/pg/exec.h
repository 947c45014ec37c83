#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/page.h"
#include "store/pg/errors.h"
#include "store/pg/pg_pool.h"
#include "store/pg/pg_values.h"
#include "store/pg/query.h"

namespace webhookd::pg {

// Runs a statement of sql/ (prepared on every connection under its name).
pqxx::result Exec(pqxx::transaction_base& tx, const Query& q, const Params& params = Params());

// Runs the statement `params` were bound for, once each of its parameters is.
pqxx::result Exec(pqxx::transaction_base& tx, const NamedParams& params);

// Wakes the workers when `tx` commits (NOTIFY is transactional).
void NotifyWakeup(pqxx::transaction_base& tx);

// The connection broke during COMMIT, so the outcome is unknown: asks a fresh connection
// whether the events exist, for a few seconds while the database comes back. False when
// they do not exist or the question cannot be answered.
//
// The ids alone do not name the transaction: a sequence advance is written to WAL but not
// flushed until a commit, so after a crash the sequence can hand the same ids to a later
// transaction. `created_at` is the in-doubt transaction's now() (every event of one
// transaction has it), which a transaction begun after the restart cannot share.
bool CommittedAfterDoubt(const std::string& url, const std::vector<int64_t>& event_ids,
                         Timestamp created_at);

// An ingest whose deferred API key check (NewEvent::verify_key_hash) failed.
std::unexpected<Error> KeyNotLive();

// An ingest checked against an event catalog that has changed since (kStale).
std::unexpected<Error> CatalogChanged();

// kInvalid on `filter` when filter_problem (store/pg/schema/filter_problem.sql) refuses it.
Result<void> CheckFilter(pqxx::transaction_base& tx, const std::string& filter);

// Runs `body` on a connection borrowed from `pool` for the call: kUnavailable when none
// frees up in time, and an exception becomes the Error it maps to (a connection it
// leaves suspect is discarded, so the next borrower reconnects).
template <typename F>
auto RunOn(PgPool& pool, F&& body) -> decltype(body(std::declval<pqxx::connection&>())) {
  auto lease = pool.Acquire();
  if (!lease) {
    return Fail(ErrorKind::kUnavailable, "every database connection is busy; retry shortly");
  }
  try {
    return body(lease->conn());
  } catch (...) {
    bool discard = false;
    Error error = CurrentError(&discard);
    if (discard) lease->Discard();
    return std::unexpected(std::move(error));
  }
}

// One page of a newest-first list: `query` fetches page.limit + 1 rows, each mapped by
// `to_item`; the extra row only says that there is a next page, whose cursor is the
// last item's id.
template <typename T>
Listing<T> PageOf(const pqxx::result& rows, const Page& page, T (*to_item)(const pqxx::row&)) {
  Listing<T> listing;
  for (const auto& row : rows) listing.items.push_back(to_item(row));
  if (static_cast<int>(listing.items.size()) > page.limit) {
    listing.items.resize(page.limit);
    listing.next_before_id = listing.items.back().id;
  }
  return listing;
}

// Runs `query` on `pool` and pages its rows.
template <typename T>
Result<Listing<T>> ListPage(PgPool& pool, const Query& query, const Params& params,
                            const Page& page, T (*to_item)(const pqxx::row&)) {
  return RunOn(pool, [&](pqxx::connection& c) -> Result<Listing<T>> {
    pqxx::nontransaction tx(c);
    return PageOf(Exec(tx, query, params), page, to_item);
  });
}

// The same, for a statement bound by name.
template <typename T>
Result<Listing<T>> ListPage(PgPool& pool, const NamedParams& params, const Page& page,
                            T (*to_item)(const pqxx::row&)) {
  return RunOn(pool, [&](pqxx::connection& c) -> Result<Listing<T>> {
    pqxx::nontransaction tx(c);
    return PageOf(Exec(tx, params), page, to_item);
  });
}

}  // namespace webhookd::pg
