#include "store/pg/pg_catalog_store.h"

#include <pqxx/pqxx>

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

EventType ToEventType(const pqxx::row& r) {
  EventType t;
  t.name = r[0].c_str();
  t.description = r[1].c_str();
  t.schema = ToOptionalString(r[2]);
  t.examples = r[3].c_str();
  t.deprecated = r[4].as<bool>();
  t.builtin = r[5].as<bool>();
  t.created_at = ToTimestamp(r[6]);
  t.updated_at = ToTimestamp(r[7]);
  return t;
}

// The text of a RAISE EXCEPTION: the first line of what(), without "ERROR:  " and the
// field name the message starts with.
std::string RaisedMessage(const pqxx::sql_error& e, std::string_view field_prefix) {
  std::string_view text = e.what();
  text = text.substr(0, text.find('\n'));
  if (text.starts_with("ERROR:")) text.remove_prefix(6);
  while (text.starts_with(' ')) text.remove_prefix(1);
  if (text.starts_with(field_prefix)) text.remove_prefix(field_prefix.size());
  return std::string(text);
}

std::unexpected<Error> NoEventType() {
  return Fail(ErrorKind::kNotFound, "no event type with that name");
}

std::unexpected<Error> Builtin() {
  return Fail(ErrorKind::kForbidden, "webhookd's own event types are read-only");
}

}  // namespace

Result<EventType> PgCatalogStore::CreateEventType(const EventType& type) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<EventType> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kCreateEventType,
                  Params()
                      .Add(type.name)
                      .Add(type.description)
                      .Add(type.schema)
                      .Add(type.examples)
                      .Add(type.deprecated));
    if (r.empty()) return Fail(ErrorKind::kConflict, "an event type with that name exists");
    tx.commit();
    return ToEventType(r[0]);
  });
}

Result<EventType> PgCatalogStore::GetEventType(const std::string& name) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<EventType> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetEventType, Params().Add(name));
    if (r.empty()) return NoEventType();
    return ToEventType(r[0]);
  });
}

Result<EventTypeListing> PgCatalogStore::ListEventTypes(const EventTypePage& page) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<EventTypeListing> {
    pqxx::nontransaction tx(c);
    EventTypeListing listing;
    for (const auto& row :
         Exec(tx, sql::kListEventTypes, Params().Add(page.after).Add(page.limit + 1)))
      listing.items.push_back(ToEventType(row));
    if (static_cast<int>(listing.items.size()) > page.limit) {
      listing.items.resize(page.limit);
      listing.next_after = listing.items.back().name;
    }
    return listing;
  });
}

Result<EventType> PgCatalogStore::UpdateEventType(const std::string& name,
                                                  const EventTypeFields& f) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<EventType> {
    pqxx::work tx(c);
    Params params;
    params.Add(name).Add(f.description).Add(f.schema.has_value());
    if (f.schema) {
      params.Add(*f.schema);
    } else {
      params.AddNull();
    }
    params.Add(f.examples).Add(f.deprecated);
    auto r = Exec(tx, sql::kUpdateEventType, params);
    if (r.empty()) {
      auto held = Exec(tx, sql::kGetEventType, Params().Add(name));
      return held.empty() ? NoEventType() : Builtin();
    }
    tx.commit();
    return ToEventType(r[0]);
  });
}

Result<void> PgCatalogStore::DeleteEventType(const std::string& name) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    if (Exec(tx, sql::kDeleteEventType, Params().Add(name)).empty()) {
      auto held = Exec(tx, sql::kGetEventType, Params().Add(name));
      return held.empty() ? NoEventType() : Builtin();
    }
    tx.commit();
    return {};
  });
}

Result<CatalogSnapshotRows> PgCatalogStore::LoadCatalog() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<CatalogSnapshotRows> {
    pqxx::nontransaction tx(c);  // one statement: one snapshot
    CatalogSnapshotRows rows;
    for (const auto& row : Exec(tx, sql::kLoadEventCatalog)) {
      rows.generation = row[0].as<int64_t>();
      if (!row[1].is_null()) rows.schemas.emplace_back(row[1].c_str(), ToOptionalString(row[2]));
    }
    return rows;
  });
}

Result<int64_t> PgCatalogStore::CatalogGeneration() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::nontransaction tx(c);
    return Exec(tx, sql::kEventCatalogGeneration)[0][0].as<int64_t>();
  });
}

Result<void> PgCatalogStore::SetEventTypesMode(EventTypesMode mode) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<void> {
    pqxx::work tx(c);
    Exec(tx, sql::kSetEventCatalogMode,
         Params().Add(std::string(mode == EventTypesMode::kStrict ? "strict" : "open")));
    tx.commit();
    return {};
  });
}

Result<bool> PgCatalogStore::TestFilter(const std::string& filter, const std::string& payload) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<bool> {
    pqxx::nontransaction tx(c);
    try {
      return Exec(tx, sql::kTestFilter, Params().Add(filter).Add(payload))[0][0].as<bool>();
    } catch (const pqxx::sql_error& e) {
      if (e.sqlstate() != "22023") throw;
      return Invalid({{"filter", RaisedMessage(e, "filter: ")}});
    }
  });
}

}  // namespace webhookd::pg
