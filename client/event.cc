#include "client/event.h"

#include <cstdio>

#include "base/encoding.h"

namespace webhookd::client {

std::string EventBody(const Event& event) {
  std::string body = "{\"type\":" + JsonQuote(event.type) + ",\"payload\":" + event.payload;
  if (event.tenant_id) body += ",\"tenant_id\":" + JsonQuote(*event.tenant_id);
  if (event.destination_id) body += ",\"destination_id\":" + JsonQuote(*event.destination_id);
  if (event.ordering_key) body += ",\"ordering_key\":" + JsonQuote(*event.ordering_key);
  if (!event.subjects.empty()) {
    body += ",\"subjects\":[";
    for (size_t i = 0; i < event.subjects.size(); ++i) {
      if (i > 0) body += ',';
      body += JsonQuote(event.subjects[i]);
    }
    body += ']';
  }
  body += '}';
  return body;
}

}  // namespace webhookd::client
