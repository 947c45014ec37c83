#include "core/delivery_body.h"

namespace webhookd {

std::string DeliveryBody(std::string_view event_type, Timestamp event_created_at,
                         std::string_view payload) {
  std::string body;
  body.reserve(payload.size() + event_type.size() + 64);
  body += R"({"type":")";
  body += event_type;  // [A-Za-z0-9._:-] only: nothing to escape
  body += R"(","timestamp":")";
  body += FormatRfc3339(event_created_at);
  body += R"(","data":)";
  body += payload;
  body += '}';
  return body;
}

}  // namespace webhookd
