#pragma once

#include <string_view>

namespace webhookd::pg {

// One SQL statement of store/pg/sql/, prepared on every connection under `name` (the
// file's name). Timestamps leave the database as text in UTC (the session's TimeZone).
struct Query {
  std::string_view name;
  std::string_view sql;
};

}  // namespace webhookd::pg
