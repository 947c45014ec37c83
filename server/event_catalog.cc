#include "server/event_catalog.h"

#include <utility>

namespace webhookd {

EventCatalog::EventCatalog(CatalogStore& store, bool strict) : store_(store), strict_(strict) {}

Result<std::shared_ptr<const EventCatalog::Snapshot>> EventCatalog::Current() {
  // Loads under the lock: a reload is rare (a catalog change) and one is enough for all.
  std::lock_guard lock(mu_);
  if (snapshot_) return snapshot_;
  WEBHOOKD_ASSIGN_OR_RETURN(CatalogSnapshotRows rows, store_.LoadCatalog());
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->generation = rows.generation;
  for (auto& [name, schema] : rows.schemas) {
    auto type = std::make_unique<Type>();
    type->schema_text = std::move(schema);
    snapshot->types.emplace(std::move(name), std::move(type));
  }
  snapshot_ = std::move(snapshot);
  return snapshot_;
}

void EventCatalog::Invalidate(int64_t generation) {
  std::lock_guard lock(mu_);
  if (snapshot_ && snapshot_->generation == generation) snapshot_.reset();
}

Result<int64_t> EventCatalog::Check(const NewEvent& event) {
  WEBHOOKD_ASSIGN_OR_RETURN(std::shared_ptr<const Snapshot> snapshot, Current());
  Result<void> checked = CheckAgainst(*snapshot, event);
  if (!checked && checked.error().kind == ErrorKind::kInvalid) {
    // A refusal is answered only from the current catalog: the store would catch a stale
    // acceptance, but nothing else would catch a stale refusal.
    WEBHOOKD_ASSIGN_OR_RETURN(int64_t current, store_.CatalogGeneration());
    if (current != snapshot->generation) {
      Invalidate(snapshot->generation);
      WEBHOOKD_ASSIGN_OR_RETURN(snapshot, Current());
      checked = CheckAgainst(*snapshot, event);
    }
  }
  if (!checked) return Propagate(checked);
  return snapshot->generation;
}

std::optional<Result<int64_t>> EventCatalog::CheckIfCached(const NewEvent& event) {
  std::shared_ptr<const Snapshot> snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot = snapshot_;
  }
  if (!snapshot) return std::nullopt;
  Result<void> checked = CheckAgainst(*snapshot, event);
  if (!checked && checked.error().kind == ErrorKind::kInvalid) return std::nullopt;
  if (!checked) return Propagate(checked);
  return snapshot->generation;
}

Result<void> EventCatalog::CheckAgainst(const Snapshot& snapshot, const NewEvent& event) {
  auto it = snapshot.types.find(event.type);
  if (it == snapshot.types.end()) {
    if (strict_) {
      return Invalid({{"type", "is not in the event catalog (WEBHOOKD_EVENT_TYPES is strict)"}});
    }
    return {};
  }
  Type& type = *it->second;
  if (!type.schema_text) return {};
  // Compiled on first use, once per generation; the API compiled it before storing it.
  std::call_once(type.once, [&] {
    auto json = nlohmann::json::parse(*type.schema_text, nullptr, /*allow_exceptions=*/false);
    auto compiled = JsonSchema::Compile(json, "/schema");
    if (compiled) {
      type.schema = std::move(*compiled);
    } else {
      const auto& fields = compiled.error().fields;
      type.refusal = fields.empty() ? compiled.error().message
                                    : fields.front().field + " " + fields.front().message;
    }
  });
  // An earlier version accepted a schema this one refuses (a bound added since): the
  // event cannot be checked, and saying so is the publisher's to act on (PATCH the type),
  // not a fault of webhookd's to answer 500 for.
  if (type.refusal) {
    return Invalid({{"type", "its event type's schema is refused by this version of webhookd (" +
                                 *type.refusal + "): update the event type"}});
  }
  if (!type.schema) return Fail(ErrorKind::kInternal, "event type " + event.type + ": bad schema");
  // The raw payload is what is stored and sent; the parse is for the check alone.
  auto doc = nlohmann::json::parse(event.payload, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Invalid({{"payload", "must be a JSON object"}});
  std::vector<FieldError> errors = type.schema->Validate(doc, "/payload");
  if (!errors.empty()) return Invalid(std::move(errors));
  return {};
}

}  // namespace webhookd
