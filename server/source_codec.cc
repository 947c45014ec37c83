#include "server/source_codec.h"

#include "base/config.h"
#include "base/duration.h"
#include "core/destination.h"
#include "core/ids.h"
#include "core/signing.h"
#include "core/validation.h"

namespace webhookd {
namespace {

constexpr size_t kMaxDescription = 1024;

// A string member, or an error on `field`; null is absent.
std::optional<std::string> Text(const Json& body, const char* name, std::vector<FieldError>& errors,
                                std::string_view field = {}) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxDescription) {
    errors.push_back({field.empty() ? std::string(name) : std::string(field),
                      "must be a string of at most 1024 characters"});
    return std::nullopt;
  }
  return it->get<std::string>();
}

void ParseHmac(const Json& value, SourceFields& out, std::vector<FieldError>& errors) {
  if (!value.is_object()) {
    errors.push_back({"hmac", "must be an object: header, algorithm, encoding, prefix"});
    return;
  }
  const size_t before = errors.size();
  CheckMembers(value, {{"header", "algorithm", "encoding", "prefix"}}, "hmac.", errors);
  HmacScheme scheme;
  scheme.header = Text(value, "header", errors, "hmac.header").value_or("");
  scheme.prefix = Text(value, "prefix", errors, "hmac.prefix").value_or("");
  if (auto algorithm = Text(value, "algorithm", errors, "hmac.algorithm")) {
    if (auto parsed = ParseHmacAlgorithm(*algorithm)) {
      scheme.algorithm = *parsed;
    } else {
      errors.push_back({"hmac.algorithm", "must be sha1, sha256 or sha512"});
    }
  }
  if (auto encoding = Text(value, "encoding", errors, "hmac.encoding")) {
    if (auto parsed = ParseSignatureEncoding(*encoding)) {
      scheme.encoding = *parsed;
    } else {
      errors.push_back({"hmac.encoding", "must be hex or base64"});
    }
  }
  if (errors.size() == before) out.hmac = std::move(scheme);
}

}  // namespace

Result<SourceFields> ParseSourceFields(const Json& body, bool creating) {
  if (!body.is_object()) return Invalid({{"body", "must be a JSON object"}});
  SourceFields out;
  std::vector<FieldError> errors;
  // The read-only members are those of the view, so that an answer can be sent back.
  CheckMembers(body,
               {{"provider", "secret", "tenant_id", "description", "type_prefix", "tolerance",
                 "url", "hmac", "event_type", "dedupe_header"},
                {"id", "ingest_url", "created_at", "updated_at", "previous_secret_valid_until"}},
               "", errors);
  if (auto provider = Text(body, "provider", errors)) {
    out.provider = ParseInboundProvider(*provider);
    if (!out.provider) {
      errors.push_back({"provider",
                        "must be one of stripe, github, shopify, slack, twilio, "
                        "standard-webhooks, hmac"});
    }
  } else if (creating && !body.contains("provider")) {
    errors.push_back({"provider", "is required"});
  }
  if (auto it = body.find("secret"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) {
      errors.push_back({"secret", "must be a string"});
    } else if (!creating) {
      if (it->get_ref<const std::string&>() != kHiddenHeaderValue) {
        errors.push_back({"secret", "changes through POST /v1/sources/{id}/secret/rotate"});
      }
    } else if (it->get_ref<const std::string&>() == kHiddenHeaderValue) {
      errors.push_back({"secret", "is the provider's secret itself when a source is created"});
    } else {
      out.secret = it->get<std::string>();
    }
  } else if (creating) {
    errors.push_back({"secret", "is required"});
  }
  if (auto it = body.find("tenant_id"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || !IsValidTenantId(it->get_ref<const std::string&>())) {
      errors.push_back({"tenant_id", kTenantIdRule});
    } else {
      out.tenant_id = it->get<std::string>();
    }
  }
  out.description = Text(body, "description", errors);
  out.type_prefix = Text(body, "type_prefix", errors);
  out.url = Text(body, "url", errors);
  out.event_type = Text(body, "event_type", errors);
  out.dedupe_header = Text(body, "dedupe_header", errors);
  if (body.contains("tolerance") && !body["tolerance"].is_null()) {
    Duration tolerance = kDefaultInboundTolerance;
    DurationField(body, "tolerance", /*zero_ok=*/true, kMaxInboundTolerance,
                  "must be a duration from 0s to 1h, such as 5m", tolerance, errors);
    out.tolerance = tolerance;
  }
  if (auto it = body.find("hmac"); it != body.end() && !it->is_null()) ParseHmac(*it, out, errors);
  if (!errors.empty()) return Invalid(std::move(errors));
  return out;
}

Result<void> ApplySourceFields(const SourceFields& fields, Source& source) {
  std::vector<FieldError> errors;
  // The provider and the tenant name what the source is: a new source, not a patch.
  if (fields.provider && source.id != 0 && *fields.provider != source.settings.provider) {
    errors.push_back({"provider", "cannot change; create another source"});
  }
  if (fields.tenant_id && source.id != 0 && fields.tenant_id != source.tenant_id) {
    errors.push_back({"tenant_id", "cannot change; create another source"});
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  SourceSettings& s = source.settings;
  if (fields.description) source.description = *fields.description;
  if (fields.type_prefix) s.type_prefix = *fields.type_prefix;
  if (fields.tolerance) s.tolerance = *fields.tolerance;
  if (fields.url) s.url = *fields.url;
  if (fields.hmac) s.hmac = *fields.hmac;
  if (fields.event_type) s.event_type = *fields.event_type;
  if (fields.dedupe_header) s.dedupe_header = *fields.dedupe_header;
  errors = SourceSettingsErrors(s);
  if (!errors.empty()) return Invalid(std::move(errors));
  return {};
}

Result<SourceRotation> ParseSourceRotation(std::string_view body, InboundProvider provider,
                                           Duration default_grace) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  SourceRotation rotation{"", default_grace};
  std::vector<FieldError> errors;
  CheckMembers(json, {{"secret", "grace_period"}}, "", errors);
  auto it = json.find("secret");
  if (it == json.end() || it->is_null()) {
    errors.push_back({"secret", "is required: the provider's new secret"});
  } else if (!it->is_string()) {
    errors.push_back({"secret", "must be a string"});
  } else if (auto problem = SourceSecretError(provider, it->get_ref<const std::string&>())) {
    errors.push_back({"secret", *problem});
  } else {
    rotation.secret = it->get<std::string>();
  }
  DurationField(json, "grace_period", /*zero_ok=*/true, kMaxSecretGrace,
                "must be 0 or a duration up to 7d, such as 24h", rotation.grace, errors);
  if (!errors.empty()) return Invalid(std::move(errors));
  return rotation;
}

Json SourceJson(const Source& source, std::string_view public_url) {
  const SourceSettings& s = source.settings;
  const std::string id = FormatId(kSourcePrefix, source.id);
  Json view = {{"id", id},
               {"provider", InboundProviderName(s.provider)},
               {"secret", kHiddenHeaderValue},
               {"tenant_id", OrNull(source.tenant_id)},
               {"description", source.description},
               {"type_prefix", TypePrefix(s)},
               {"tolerance", FormatDuration(s.tolerance)},
               {"ingest_url", std::string(public_url) + "/in/" + id},
               {"previous_secret_valid_until", TimeOrNull(source.previous_valid_until)},
               {"created_at", FormatRfc3339(source.created_at)},
               {"updated_at", FormatRfc3339(source.updated_at)}};
  // Each provider's own fields alone, so that a view sent back patches nothing else.
  if (s.provider == InboundProvider::kTwilio) view["url"] = s.url;
  if (s.provider == InboundProvider::kHmac) {
    view["hmac"] = {{"header", s.hmac.header},
                    {"algorithm", HmacAlgorithmName(s.hmac.algorithm)},
                    {"encoding", SignatureEncodingName(s.hmac.encoding)},
                    {"prefix", s.hmac.prefix}};
    view["event_type"] = s.event_type;
    view["dedupe_header"] = s.dedupe_header;
  }
  return view;
}

}  // namespace webhookd
