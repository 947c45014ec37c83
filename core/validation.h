#pragma once

#include <cstddef>
#include <string_view>

namespace webhookd {

inline constexpr size_t kMaxEventTypeLength = 255;
inline constexpr size_t kMaxTenantIdLength = 128;
inline constexpr size_t kMaxIdempotencyKeyLength = 255;
inline constexpr size_t kMaxDescriptionLength = 1024;
inline constexpr size_t kMaxEventTypeFilters = 256;
inline constexpr size_t kMaxCustomHeaders = 32;
inline constexpr int kMaxMaxInFlight = 10000;
inline constexpr int kMaxRateLimit = 100000;
// Deeper JSON is refused before parsing: it has no use in a webhook and recursion over
// it is how a small body exhausts a stack.
inline constexpr int kMaxJsonDepth = 64;

// 1-255 of [A-Za-z0-9._:-].
bool IsValidEventType(std::string_view type);
// 1-128 of [A-Za-z0-9._:-]: the characters of an event type.
inline constexpr const char* kTenantIdRule = "must be 1-128 characters of A-Z a-z 0-9 . _ : -";
bool IsValidTenantId(std::string_view tenant_id);

// An event's ordering key: 1 to 255 characters (of valid UTF-8) without control
// characters. publish() holds keys to the same rule (store/pg/schema/publish.sql).
inline constexpr const char* kOrderingKeyRule =
    "must be 1-255 characters without control characters";
bool IsValidOrderingKey(std::string_view key);
// An event's subjects (docs/privacy.md): at most 16, each 1-256 bytes of valid UTF-8
// without control characters (C0, DEL or C1). publish() holds them to the same rule
// (store/pg/schema/subjects_problem.sql).
inline constexpr size_t kMaxSubjects = 16;
inline constexpr size_t kMaxSubjectBytes = 256;
inline constexpr const char* kSubjectsRule =
    "must be at most 16 strings, each 1-256 bytes of UTF-8 without control characters";
bool IsValidSubject(std::string_view subject);
// Types webhookd publishes about itself ("webhookd." and below); producers may not.
bool IsReservedEventType(std::string_view type);
// An event type, or a prefix pattern "p.*" whose "p" is 1+ event-type characters.
bool IsValidEventTypePattern(std::string_view pattern);

// An RFC 9110 token.
bool IsValidHeaderName(std::string_view name);
// Visible ASCII, spaces and tabs; no CR, LF or NUL, at most 4096 bytes.
bool IsValidHeaderValue(std::string_view value);
// Headers webhookd sets itself: webhook-*, content-type, content-length, host, user-agent.
bool IsReservedHeader(std::string_view name);

// 1-255 visible ASCII characters.
bool IsValidIdempotencyKey(std::string_view key);

// The deepest nesting of arrays and objects in `json`, strings skipped; stops counting
// (and returns a value above `limit`) as soon as `limit` is passed.
int JsonDepth(std::string_view json, int limit);

}  // namespace webhookd
