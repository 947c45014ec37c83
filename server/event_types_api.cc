// The event catalog's routes (/v1/event-types) and the filter test (/v1/filters/test).
#include "core/validation.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/event_type_codec.h"

namespace webhookd {

using namespace api;

namespace {

Reply TextReply(int status, std::string body) {
  return Reply{status, std::move(body), "application/json", {}};
}

// A name in the path: anything that is not a valid type names nothing (404, as unknown).
Result<std::string> PathName(const ApiRequest& req) {
  if (req.path_args.empty() || !IsValidEventType(req.path_args[0])) {
    return Fail(ErrorKind::kNotFound, "no event type with that name");
  }
  return req.path_args[0];
}

}  // namespace

Result<Reply> Api::ListEventTypes(const ApiRequest& req) {
  EventTypePage page;
  std::vector<FieldError> errors;
  page.limit = ParseLimit(req, errors, 100);
  if (auto cursor = QueryValue(req, "cursor"); cursor && !cursor->empty()) {
    if (IsValidEventType(*cursor)) {
      page.after = *cursor;
    } else {
      errors.push_back({"cursor", "is not a cursor from this list"});
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  WEBHOOKD_ASSIGN_OR_RETURN(EventTypeListing listing, stores_.catalog.ListEventTypes(page));
  return TextReply(200, EventTypeListText(listing));
}

Result<Reply> Api::GetEventType(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(std::string name, PathName(req));
  WEBHOOKD_ASSIGN_OR_RETURN(EventType type, stores_.catalog.GetEventType(name));
  return TextReply(200, EventTypeText(type));
}

Result<Reply> Api::CreateEventType(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(EventTypeBody parsed,
                            ParseEventTypeBody(req.body, /*creating=*/true, std::nullopt, "[]"));
  EventType type;
  type.name = std::move(parsed.name);
  type.description = parsed.fields.description.value_or("");
  type.schema = parsed.fields.schema.value_or(std::nullopt);
  type.examples = parsed.fields.examples.value_or("[]");
  type.deprecated = parsed.fields.deprecated.value_or(false);
  WEBHOOKD_ASSIGN_OR_RETURN(EventType created, stores_.catalog.CreateEventType(type));
  return TextReply(201, EventTypeText(created));
}

Result<Reply> Api::UpdateEventType(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(std::string name, PathName(req));
  // The stored schema and examples, which the patch's own must agree with.
  WEBHOOKD_ASSIGN_OR_RETURN(EventType current, stores_.catalog.GetEventType(name));
  if (current.builtin)
    return Fail(ErrorKind::kForbidden, "webhookd's own event types are read-only");
  WEBHOOKD_ASSIGN_OR_RETURN(
      EventTypeBody parsed,
      ParseEventTypeBody(req.body, /*creating=*/false, current.schema, current.examples, name));
  WEBHOOKD_ASSIGN_OR_RETURN(EventType updated,
                            stores_.catalog.UpdateEventType(name, parsed.fields));
  return TextReply(200, EventTypeText(updated));
}

Result<Reply> Api::DeleteEventType(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(std::string name, PathName(req));
  WEBHOOKD_RETURN_IF_ERROR(stores_.catalog.DeleteEventType(name));
  return Reply{204, "", "", {}};
}

Result<Reply> Api::TestFilter(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(FilterTest test, ParseFilterTest(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(bool matches, stores_.catalog.TestFilter(test.filter, test.payload));
  return JsonReply(200, Json{{"matches", matches}});
}

}  // namespace webhookd
