#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"
#include "core/source.h"
#include "server/json_codec.h"

namespace webhookd {

// The JSON of inbound sources (sources_api): bodies in, views out.

// The members of a source body, each type-checked; absent members stay nullopt. Whether
// the settings fit together (a provider's own fields) is checked on the whole source
// (SourceSettingsErrors) once the body is applied.
struct SourceFields {
  std::optional<InboundProvider> provider;
  std::optional<std::string> secret;
  std::optional<std::string> tenant_id;
  std::optional<std::string> description;
  std::optional<std::string> type_prefix;
  std::optional<Duration> tolerance;
  std::optional<std::string> url;
  std::optional<HmacScheme> hmac;
  std::optional<std::string> event_type;
  std::optional<std::string> dedupe_header;
};

// `creating` makes provider and secret required; a patch may send the secret only as
// "set" (it changes by rotation) and may not change the provider or the tenant.
Result<SourceFields> ParseSourceFields(const Json& body, bool creating);

// `fields` applied to `source`'s settings; kInvalid naming each field the result breaks.
Result<void> ApplySourceFields(const SourceFields& fields, Source& source);

// The body of POST /v1/sources/{id}/secret/rotate: {"secret", "grace_period"?}.
struct SourceRotation {
  std::string secret;
  Duration grace{0};
};
Result<SourceRotation> ParseSourceRotation(std::string_view body, InboundProvider provider,
                                           Duration default_grace);

// The view of a source; `public_url` is WEBHOOKD_PUBLIC_URL, the base of its ingest_url.
Json SourceJson(const Source& source, std::string_view public_url);

}  // namespace webhookd
