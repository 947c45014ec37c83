#include "store/pg/errors.h"

#include <pqxx/pqxx>
#include <string>

namespace webhookd::pg {
namespace {

bool IsConnectionState(const std::string& sqlstate) {
  // 08: connection exception; 57P: operator intervention (shutdown); 53: resources;
  // 25006: read-only transaction, which a primary that was demoted to a standby answers
  // (the connection must go, so that libpq finds the new primary).
  return sqlstate.starts_with("08") || sqlstate.starts_with("57P") || sqlstate.starts_with("53") ||
         sqlstate == "25006";
}

Error Unavailable(const char* message, bool* discard) {
  *discard = true;
  return Error{ErrorKind::kUnavailable, message, {}};
}

}  // namespace

Error ToError(const std::exception& e, bool* discard) {
  *discard = false;
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return Unavailable("the database connection was lost during commit", discard);
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return Unavailable("the database is unavailable", discard);
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    if (IsConnectionState(sql->sqlstate()))
      return Unavailable("the database is unavailable", discard);
    // 57014 query_canceled: a statement ran past WEBHOOKD_STATEMENT_TIMEOUT. Its
    // transaction is rolled back and the connection is fine; trying again later may pass.
    if (sql->sqlstate() == "57014") {
      return Error{ErrorKind::kUnavailable,
                   "a database statement took too long and was cancelled; retry shortly",
                   {}};
    }
    return Error{ErrorKind::kInternal, std::string("database error: ") + e.what(), {}};
  }
  if (dynamic_cast<const pqxx::failure*>(&e) != nullptr) {
    return Unavailable("the database is unavailable", discard);
  }
  return Error{ErrorKind::kInternal, std::string("store: ") + e.what(), {}};
}

Error CurrentError(bool* discard) {
  try {
    throw;
  } catch (const std::exception& e) {
    return ToError(e, discard);
  } catch (...) {
    *discard = false;
    return Error{ErrorKind::kInternal, "store: unknown exception", {}};
  }
}

}  // namespace webhookd::pg
