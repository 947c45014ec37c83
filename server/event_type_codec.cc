#include "server/event_type_codec.h"

#include <map>
#include <vector>

#include "base/clock.h"
#include "core/json_scan.h"
#include "core/validation.h"
#include "server/json_schema.h"

namespace webhookd {
namespace {

constexpr size_t kMaxExamples = 20;

// Each example must be an object the schema (if any) accepts; errors name
// /examples/<i>/<pointer>.
void CheckExamples(const Json& examples, const Json* schema, std::vector<FieldError>& errors) {
  if (!examples.is_array() || examples.size() > kMaxExamples) {
    errors.push_back({"examples", "must be an array of at most 20 JSON objects"});
    return;
  }
  std::shared_ptr<const JsonSchema> compiled;
  if (schema != nullptr) {
    auto c = JsonSchema::Compile(*schema, "/schema");
    if (!c) return;  // the schema's own error is reported
    compiled = *c;
  }
  for (size_t i = 0; i < examples.size(); ++i) {
    const std::string at = "/examples/" + std::to_string(i);
    if (!examples[i].is_object()) {
      errors.push_back({at, "must be a JSON object"});
    } else if (compiled) {
      for (auto& e : compiled->Validate(examples[i], at)) errors.push_back(std::move(e));
    }
  }
}

}  // namespace

Result<EventTypeBody> ParseEventTypeBody(std::string_view raw, bool creating,
                                         const std::optional<std::string>& current_schema,
                                         const std::string& current_examples,
                                         std::string_view patched) {
  // The schema and examples are kept as written (key order, big numbers), so they are
  // taken from the scanner as raw text; the checks parse a copy.
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<JsonMember> members, ScanJsonBody(raw));
  std::map<std::string, std::string_view> raws;  // a repeated member keeps its last value
  for (const JsonMember& m : members) raws[m.key] = m.raw;
  const Json body = Json::parse(raw, nullptr, /*allow_exceptions=*/false);
  EventTypeBody out;
  std::vector<FieldError> errors;
  // The read-only members are those of the type's view (EventTypeText); `name` has a rule
  // of its own below.
  CheckMembers(members,
               {{"name", "description", "schema", "examples", "deprecated"},
                {"builtin", "created_at", "updated_at"}},
               "", errors);
  if (creating) {
    auto it = body.find("name");
    if (it == body.end() || it->is_null()) {
      errors.push_back({"name", "is required"});
    } else if (!it->is_string() || !IsValidEventType(it->get_ref<const std::string&>())) {
      errors.push_back({"name", "must be 1-255 characters of A-Z a-z 0-9 . _ : - (no wildcards)"});
    } else if (IsReservedEventType(it->get_ref<const std::string&>())) {
      errors.push_back(
          {"name", "types starting with \"webhookd.\" are reserved for webhookd's own events"});
    } else {
      out.name = it->get<std::string>();
    }
  } else if (auto it = body.find("name");
             it != body.end() &&
             !(it->is_string() && it->get_ref<const std::string&>() == patched)) {
    errors.push_back({"name", "is the type's identity and cannot be changed"});
  }
  if (auto it = body.find("description"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxDescriptionLength ||
        it->get_ref<const std::string&>().find('\0') != std::string::npos) {
      errors.push_back({"description", "must be a string of at most 1024 bytes without NUL"});
    } else {
      out.fields.description = it->get<std::string>();
    }
  }
  // The schema the examples must satisfy: the body's if it has one, else the stored one.
  std::optional<Json> schema;
  bool schema_ok = true;
  if (auto it = body.find("schema"); it != body.end()) {
    if (it->is_null()) {
      out.fields.schema = std::optional<std::string>();
    } else if (auto compiled = JsonSchema::Compile(*it, "/schema"); !compiled) {
      schema_ok = false;
      for (auto& e : compiled.error().fields) errors.push_back(std::move(e));
    } else {
      out.fields.schema = std::optional<std::string>(std::string(raws["schema"]));
      schema = *it;
    }
  } else if (current_schema) {
    schema = Json::parse(*current_schema, nullptr, /*allow_exceptions=*/false);
  }
  if (auto it = body.find("examples"); it != body.end() && !it->is_null()) {
    if (schema_ok) CheckExamples(*it, schema ? &*schema : nullptr, errors);
    out.fields.examples = std::string(raws["examples"]);
  } else if (schema_ok && out.fields.schema && *out.fields.schema) {
    // A new schema must hold the examples already stored.
    CheckExamples(Json::parse(current_examples, nullptr, false), &*schema, errors);
  }
  if (auto it = body.find("deprecated"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      errors.push_back({"deprecated", "must be true or false"});
    } else {
      out.fields.deprecated = it->get<bool>();
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return out;
}

std::string EventTypeText(const EventType& t) {
  const Json j = {{"name", t.name},
                  {"description", t.description},
                  {"deprecated", t.deprecated},
                  {"builtin", t.builtin},
                  {"created_at", FormatRfc3339(t.created_at)},
                  {"updated_at", FormatRfc3339(t.updated_at)}};
  // The schema and examples go in as stored, which is as written.
  std::string text = Dump(j);
  text.pop_back();  // the closing brace
  text += R"(,"schema":)";
  text += t.schema.value_or("null");
  text += R"(,"examples":)";
  text += t.examples;
  text += '}';
  return text;
}

std::string EventTypeListText(const EventTypeListing& listing) {
  std::string text = R"({"data":[)";
  for (size_t i = 0; i < listing.items.size(); ++i) {
    if (i > 0) text += ',';
    text += EventTypeText(listing.items[i]);
  }
  text += R"(],"next_cursor":)";
  text += listing.next_after ? Dump(Json(*listing.next_after)) : "null";
  text += '}';
  return text;
}

Result<FilterTest> ParseFilterTest(std::string_view body) {
  // The payload's own bytes, as an event's are: a number beyond 2^64 is tested as written.
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<JsonMember> members, ScanJsonBody(body));
  const JsonMember* filter = nullptr;
  const JsonMember* payload = nullptr;
  for (const JsonMember& m : members) {  // a repeated member keeps its last value
    if (m.key == "filter") filter = &m;
    if (m.key == "payload") payload = &m;
  }
  FilterTest out;
  std::vector<FieldError> errors;
  CheckMembers(members, {{"filter", "payload"}}, "", errors);
  if (filter == nullptr || filter->kind == JsonKind::kNull) {
    errors.push_back({"filter", "is required"});
  } else {
    auto text = filter->kind == JsonKind::kString ? DecodeJsonString(filter->raw)
                                                  : Result<std::string>(std::string(1, '\0'));
    if (!text || text->find('\0') != std::string::npos) {
      errors.push_back({"filter", "must be a SQL/JSON path predicate (a string)"});
    } else {
      out.filter = std::move(*text);
    }
  }
  if (payload == nullptr || payload->kind == JsonKind::kNull) {
    errors.push_back({"payload", "is required"});
  } else if (payload->kind != JsonKind::kObject) {
    errors.push_back({"payload", "must be a JSON object"});
  } else {
    out.payload = std::string(payload->raw);
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return out;
}

}  // namespace webhookd
