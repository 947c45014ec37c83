#include "client/event.h"

#include <cstdio>

namespace webhookd::client {

std::string JsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string EventBody(const Event& event) {
  std::string body = "{\"type\":" + JsonQuote(event.type) + ",\"payload\":" + event.payload;
  if (event.tenant_id) body += ",\"tenant_id\":" + JsonQuote(*event.tenant_id);
  if (event.destination_id) body += ",\"destination_id\":" + JsonQuote(*event.destination_id);
  body += '}';
  return body;
}

}  // namespace webhookd::client
