#include "server/event_codec.h"

#include <algorithm>
#include <map>

#include "core/ids.h"
#include "core/json_scan.h"
#include "core/validation.h"

namespace webhookd {

Result<NewEvent> ParseNewEvent(std::string_view body) {
  // The payload is kept as the bytes it has in the body, so the scanner validates the
  // whole body and hands back each member's raw text instead of a parsed value.
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<JsonMember> members, ScanJsonBody(body));
  // A repeated member keeps its last value, as JSON parsers commonly do.
  std::map<std::string, const JsonMember*> by_name;
  for (const JsonMember& m : members) by_name[m.key] = &m;
  const auto member = [&](const char* name) -> const JsonMember* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  NewEvent event;
  std::vector<FieldError> errors;
  CheckMembers(members,
               {{"type", "payload", "destination_id", "tenant_id", "ordering_key", "subjects"}}, "",
               errors);
  if (const JsonMember* type = member("type"); type == nullptr) {
    errors.push_back({"type", "is required"});
  } else {
    auto text = type->kind == JsonKind::kString ? DecodeJsonString(type->raw)
                                                : Result<std::string>(std::string());
    if (!text || !IsValidEventType(*text)) {
      errors.push_back({"type", "must be 1-255 characters of A-Z a-z 0-9 . _ : -"});
    } else if (IsReservedEventType(*text)) {
      errors.push_back(
          {"type", "types starting with \"webhookd.\" are reserved for webhookd's own events"});
    } else {
      event.type = std::move(*text);
    }
  }
  if (const JsonMember* payload = member("payload"); payload == nullptr) {
    errors.push_back({"payload", "is required"});
  } else if (payload->kind != JsonKind::kObject) {
    errors.push_back({"payload", "must be a JSON object"});
  } else {
    event.payload = std::string(payload->raw);
  }
  if (const JsonMember* target = member("destination_id");
      target != nullptr && target->kind != JsonKind::kNull) {
    std::optional<int64_t> id;
    if (target->kind == JsonKind::kString) {
      if (auto text = DecodeJsonString(target->raw)) id = ParseId(kDestinationPrefix, *text);
    }
    if (!id) {
      errors.push_back({"destination_id", "no destination with that id"});
    } else {
      event.destination_id = id;
    }
  }
  if (const JsonMember* tenant = member("tenant_id");
      tenant != nullptr && tenant->kind != JsonKind::kNull) {
    auto text = tenant->kind == JsonKind::kString ? DecodeJsonString(tenant->raw)
                                                  : Result<std::string>(std::string());
    if (!text || !IsValidTenantId(*text)) {
      errors.push_back({"tenant_id", kTenantIdRule});
    } else {
      event.tenant_id = std::move(*text);
    }
  }
  if (const JsonMember* key = member("ordering_key");
      key != nullptr && key->kind != JsonKind::kNull) {
    auto text = key->kind == JsonKind::kString ? DecodeJsonString(key->raw)
                                               : Result<std::string>(std::string());
    if (!text || !IsValidOrderingKey(*text)) {
      errors.push_back({"ordering_key", kOrderingKeyRule});
    } else {
      event.ordering_key = std::move(*text);
    }
  }
  if (const JsonMember* subjects = member("subjects");
      subjects != nullptr && subjects->kind != JsonKind::kNull) {
    auto list = ParseSubjects(subjects->kind == JsonKind::kArray ? subjects->raw : "");
    if (!list) {
      errors.push_back({"subjects", kSubjectsRule});
    } else {
      event.subjects = std::move(*list);
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return event;
}

std::optional<std::vector<std::string>> ParseSubjects(std::string_view array) {
  // The body was scanned whole, so its strings are valid UTF-8 and its nesting bounded.
  const Json parsed = Json::parse(array, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array() || parsed.size() > kMaxSubjects) return std::nullopt;
  std::vector<std::string> subjects;
  for (const Json& s : parsed) {
    if (!s.is_string() || !IsValidSubject(s.get_ref<const std::string&>())) return std::nullopt;
    // Each once, in the order first given.
    if (std::find(subjects.begin(), subjects.end(), s.get_ref<const std::string&>()) ==
        subjects.end()) {
      subjects.push_back(s.get<std::string>());
    }
  }
  return subjects;
}

Json DeliveryJson(const Delivery& d) {
  return {{"id", FormatId(kDeliveryPrefix, d.id)},
          {"event_id", FormatId(kEventPrefix, d.event_id)},
          {"destination_id", FormatId(kDestinationPrefix, d.destination_id)},
          {"status", DeliveryStatusName(d.status)},
          {"attempt_count", d.attempt_count},
          {"next_attempt_at", TimeOrNull(d.next_attempt_at)},
          {"last_attempt_at", TimeOrNull(d.last_attempt_at)},
          {"last_status_code", OrNull(d.last_status_code)},
          {"last_error", OrNull(d.last_error)},
          {"created_at", FormatRfc3339(d.created_at)},
          {"updated_at", FormatRfc3339(d.updated_at)},
          {"tenant_id", OrNull(d.tenant_id)},
          {"ordering_key", OrNull(d.ordering_key)},
          {"blocked_by", d.blocked_by ? Json(FormatId(kDeliveryPrefix, *d.blocked_by)) : Json()}};
}

Json ReceiptJson(const Event& e) {
  Json deliveries = Json::array();
  for (const Delivery& d : e.deliveries) {
    deliveries.push_back({{"id", FormatId(kDeliveryPrefix, d.id)},
                          {"destination_id", FormatId(kDestinationPrefix, d.destination_id)},
                          {"status", DeliveryStatusName(d.status)}});
  }
  return {{"id", FormatId(kEventPrefix, e.id)},
          {"type", e.type},
          {"created_at", FormatRfc3339(e.created_at)},
          {"ordering_key", OrNull(e.ordering_key)},
          {"deliveries", std::move(deliveries)}};
}

std::string EventText(const Event& e, bool with_deliveries) {
  Json j = {{"id", FormatId(kEventPrefix, e.id)},        {"type", e.type},
            {"created_at", FormatRfc3339(e.created_at)}, {"tenant_id", OrNull(e.tenant_id)},
            {"ordering_key", OrNull(e.ordering_key)},    {"subjects", e.subjects},
            {"erased_at", TimeOrNull(e.erased_at)}};
  // Only an event a source received has one (docs/inbound.md).
  if (e.source) {
    j["source"] = {{"id", FormatId(kSourcePrefix, e.source->id)},
                   {"provider", e.source->provider},
                   {"dedupe_key", OrNull(e.source->dedupe_key)}};
  }
  if (with_deliveries) {
    Json deliveries = Json::array();
    for (const Delivery& d : e.deliveries) deliveries.push_back(DeliveryJson(d));
    j["deliveries"] = std::move(deliveries);
  }
  // The payload goes in as its stored bytes: through a JSON value it would lose big
  // numbers' precision, its key order and its spacing.
  std::string text = Dump(j);
  text.pop_back();  // the closing brace
  text += R"(,"payload":)";
  text += e.erased_at ? std::string_view("null") : std::string_view(e.payload);
  text += '}';
  return text;
}

Json AttemptJson(const Attempt& a) {
  return {{"attempt_number", a.attempt_number}, {"started_at", FormatRfc3339(a.started_at)},
          {"duration_ms", a.duration_ms},       {"status_code", OrNull(a.status_code)},
          {"error", OrNull(a.error)},           {"response_body", a.response_body},
          {"outcome", OutcomeName(a.outcome)}};
}

Json AttemptsJson(const Listing<Attempt>& attempts) {
  Json data = Json::array();
  for (const Attempt& a : attempts.items) data.push_back(AttemptJson(a));
  // The cursor is the last attempt number of the page.
  Json next = attempts.next_before_id ? Json(std::to_string(*attempts.next_before_id)) : Json();
  return Json{{"data", std::move(data)}, {"next_cursor", std::move(next)}};
}

std::string EventListText(const Listing<Event>& listing) {
  // Written as text: each payload goes in as its stored bytes.
  std::string body = R"({"data":[)";
  for (size_t i = 0; i < listing.items.size(); ++i) {
    if (i > 0) body += ',';
    body += EventText(listing.items[i], /*with_deliveries=*/false);
  }
  body += R"(],"next_cursor":)";
  body += listing.next_before_id ? Dump(Json(FormatId(kEventPrefix, *listing.next_before_id)))
                                 : std::string("null");
  body += '}';
  return body;
}

}  // namespace webhookd
