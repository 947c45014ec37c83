#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "core/api_key_info.h"
#include "core/dead_letter.h"
#include "core/delivery.h"
#include "core/destination.h"
#include "core/event.h"
#include "store/delivery_queue_types.h"

namespace webhookd::pg {

// Row mappers: each reads the columns its statement's file in sql/ selects, in order.
ApiKeyInfo ToApiKey(const pqxx::row& r);        // create/list/find_api_key(s)
Destination ToDestination(const pqxx::row& r);  // *_destination(s)
Delivery ToDelivery(const pqxx::row& r);        // delivery_rows (store/pg/schema/delivery_rows.sql)
Event ToEvent(const pqxx::row& r);              // get_event, list_events
DeadLetter ToDeadLetter(const pqxx::row& r);    // list_dead_letters
Attempt ToAttempt(const pqxx::row& r);          // list_attempts
ClaimedDelivery ToClaimed(const pqxx::row& r, int64_t claim_token);  // claim_due

// A delivery just made by a fan-out, as the 202 shows it: pending, due at once.
// Its tenant is the event's.
Delivery NewDelivery(int64_t id, int64_t event_id, int64_t destination_id, Timestamp created_at,
                     const std::optional<std::string>& tenant_id);

// Encodings of the destination columns.
std::string HeadersJson(const Headers& headers);
Headers ParseHeaders(const char* json);
std::string TextArray(const std::vector<std::string>& items);
// The `broker` column: the settings that are not credentials, as a JSON object; and back,
// with the username and password of their own columns.
std::string BrokerJson(const BrokerSettings& broker);
BrokerSettings ParseBroker(const nlohmann::json& settings, std::optional<std::string> username,
                           std::optional<std::string> password);

}  // namespace webhookd::pg
