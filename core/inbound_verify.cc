#include "core/inbound_verify.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "base/encoding.h"
#include "base/result.h"
#include "base/strings.h"
#include "core/json_scan.h"
#include "core/validation.h"

namespace webhookd {
namespace {

// The HTTP optional white space around a header value.
constexpr std::string_view kWhitespace = " \t";
// Timestamps are decimal Unix seconds; the bound keeps the arithmetic far from overflow.
constexpr int64_t kMaxUnixSeconds = 99'999'999'999;

std::unexpected<InboundFailure> Unverified() {
  return std::unexpected(InboundFailure::kUnverified);
}
std::unexpected<InboundFailure> Malformed() { return std::unexpected(InboundFailure::kMalformed); }

const EVP_MD* Digest(HmacAlgorithm algorithm) {
  switch (algorithm) {
    case HmacAlgorithm::kSha1:
      return EVP_sha1();
    case HmacAlgorithm::kSha256:
      return EVP_sha256();
    case HmacAlgorithm::kSha512:
      return EVP_sha512();
  }
  return EVP_sha256();
}

std::string Hmac(HmacAlgorithm algorithm, std::string_view key, std::string_view message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_length = 0;
  if (HMAC(Digest(algorithm), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
           &mac_length) == nullptr) {
    abort();  // an HMAC of a built-in digest cannot fail short of a broken OpenSSL
  }
  return {reinterpret_cast<const char*>(mac), mac_length};
}

// Constant time in the contents; the lengths (a digest's) are no secret.
bool SameBytes(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Either case: a signature's bytes are compared, not its spelling.
std::optional<std::string> HexDecode(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  bytes.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int high = HexValue(text[i]);
    const int low = HexValue(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes += static_cast<char>((high << 4) | low);
  }
  return bytes;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// A header the scheme reads: exactly one non-empty value (trimmed). Sent twice, even
// with equal values, it is ambiguous: which one did the provider sign?
enum class Presence { kAbsent, kOne, kMany };
struct Header {
  Presence presence = Presence::kAbsent;
  std::string_view value;
};

Header ReadHeader(const HeaderLookup& headers, std::string_view name) {
  Header header;
  for (const std::string_view raw : headers.Values(name)) {
    const std::string_view value = Trim(raw, kWhitespace);
    if (value.empty()) continue;
    if (header.presence == Presence::kOne) return {Presence::kMany, {}};
    header = {Presence::kOne, value};
  }
  return header;
}

std::optional<std::string_view> OneHeader(const HeaderLookup& headers, std::string_view name) {
  const Header header = ReadHeader(headers, name);
  if (header.presence != Presence::kOne) return std::nullopt;
  return header.value;
}

// Whole seconds on both sides: a tolerance of 0 takes the current second alone.
bool WithinTolerance(int64_t unix_seconds, Timestamp now, Duration tolerance) {
  const int64_t slack = std::chrono::duration_cast<std::chrono::seconds>(tolerance).count();
  const int64_t age = UnixSeconds(now) - unix_seconds;
  return age <= slack && -age <= slack;
}

std::optional<int64_t> TimestampWithin(std::string_view text, Timestamp now, Duration tolerance) {
  const std::optional<int64_t> seconds = ParseBoundedInt(text, 0, kMaxUnixSeconds);
  if (!seconds || !WithinTolerance(*seconds, now, tolerance)) return std::nullopt;
  return seconds;
}

// The index of the first secret whose MAC of `message` equals one of `signatures`
// (decoded bytes); every pair is compared, a match ends the search.
std::optional<size_t> MatchingSecret(std::span<const std::string> secrets, HmacAlgorithm algorithm,
                                     std::string_view message,
                                     std::span<const std::string> signatures) {
  for (size_t i = 0; i < secrets.size(); ++i) {
    if (secrets[i].empty()) continue;  // a key anyone can compute verifies nothing
    const std::string mac = Hmac(algorithm, secrets[i], message);
    for (const std::string& signature : signatures) {
      if (SameBytes(mac, signature)) return i;
    }
  }
  return std::nullopt;
}

std::optional<size_t> MatchingSecret(std::span<const std::string> secrets, HmacAlgorithm algorithm,
                                     std::string_view message, const std::string& signature) {
  return MatchingSecret(secrets, algorithm, message, std::span<const std::string>(&signature, 1));
}

// ---- The body, read only once a signature matched.

using Members = std::vector<JsonMember>;

std::expected<Members, InboundFailure> ObjectMembers(std::string_view json) {
  Result<Members> members = ScanJsonObject(json, kMaxJsonDepth);
  if (!members) return Malformed();
  return std::move(*members);
}

// A member the scheme reads: absent, or a string given once. A duplicate key or another
// kind is no provider's format.
std::expected<std::optional<std::string>, InboundFailure> OptionalString(const Members& members,
                                                                         std::string_view key) {
  const JsonMember* found = nullptr;
  for (const JsonMember& member : members) {
    if (member.key != key) continue;
    if (found != nullptr) return Malformed();
    found = &member;
  }
  if (found == nullptr) return std::nullopt;
  if (found->kind != JsonKind::kString) return Malformed();
  Result<std::string> text = DecodeJsonString(found->raw);
  if (!text) return Malformed();
  return std::move(*text);
}

std::expected<std::string, InboundFailure> RequiredString(const Members& members,
                                                          std::string_view key) {
  auto text = OptionalString(members, key);
  if (!text) return std::unexpected(text.error());
  if (!*text) return Malformed();
  return std::move(**text);
}

std::expected<std::string, InboundFailure> EventType(const SourceSettings& settings,
                                                     std::string_view type) {
  std::string full(TypePrefix(settings));
  full += '.';
  full.append(type);
  if (type.empty() || !IsValidEventType(full) || IsReservedEventType(full)) return Malformed();
  return full;
}

// A duplicate key is held to an ordering key's rule: 1-255 characters of UTF-8, no
// control characters.
std::expected<std::string, InboundFailure> DedupeKey(std::string_view key) {
  if (!IsValidOrderingKey(key)) return Malformed();
  return std::string(key);
}

VerifiedRequest Verified(size_t secret_index, std::string event_type,
                         std::optional<std::string> dedupe_key, std::string payload) {
  VerifiedRequest request;
  request.event_type = std::move(event_type);
  request.dedupe_key = std::move(dedupe_key);
  request.payload = std::move(payload);
  request.secret_index = secret_index;
  return request;
}

// A verified request's type and duplicate key, each held to its rule: what every provider
// whose key is a plain value ends with.
VerifyResult Accepted(const SourceSettings& settings, size_t secret_index, std::string_view type,
                      std::string_view dedupe, std::string payload) {
  auto event_type = EventType(settings, type);
  if (!event_type) return std::unexpected(event_type.error());
  auto key = DedupeKey(dedupe);
  if (!key) return std::unexpected(key.error());
  return Verified(secret_index, std::move(*event_type), std::move(*key), std::move(payload));
}

// ---- Stripe: Stripe-Signature "t=<unix>,v1=<hex>[,v1=<hex>…]" (also v0 and other schemes,
// ignored), each v1 an HMAC-SHA256 of "<t>.<body>".

VerifyResult VerifyStripe(const SourceSettings& settings, std::span<const std::string> secrets,
                          const HeaderLookup& headers, std::string_view body, Timestamp now) {
  const std::optional<std::string_view> header = OneHeader(headers, "Stripe-Signature");
  if (!header) return Unverified();
  std::optional<std::string_view> t;
  std::vector<std::string> signatures;
  for (const std::string_view item : Split(*header, ',')) {
    const std::string_view part = Trim(item, kWhitespace);
    const size_t equals = part.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view key = part.substr(0, equals);
    const std::string_view value = part.substr(equals + 1);
    if (key == "t") {
      if (t) return Unverified();  // two timestamps: which one was signed?
      t = value;
    } else if (key == "v1") {
      if (std::optional<std::string> bytes = HexDecode(value)) signatures.push_back(*bytes);
    }
  }
  if (!t || signatures.empty()) return Unverified();
  const std::optional<int64_t> seconds = TimestampWithin(*t, now, settings.tolerance);
  if (!seconds) return Unverified();
  // Stripe's own verifier signs the timestamp as it parsed it, so a "0" in front of it
  // does not matter.
  std::string message = std::to_string(*seconds);
  message += '.';
  message.append(body);
  const std::optional<size_t> secret =
      MatchingSecret(secrets, HmacAlgorithm::kSha256, message, signatures);
  if (!secret) return Unverified();

  auto members = ObjectMembers(body);
  if (!members) return std::unexpected(members.error());
  auto id = RequiredString(*members, "id");
  if (!id) return std::unexpected(id.error());
  auto type = RequiredString(*members, "type");
  if (!type) return std::unexpected(type.error());
  return Accepted(settings, *secret, *type, *id, std::string(body));
}

// ---- GitHub: X-Hub-Signature-256 "sha256=<hex>", an HMAC-SHA256 of the body.

VerifyResult VerifyGithub(const SourceSettings& settings, std::span<const std::string> secrets,
                          const HeaderLookup& headers, std::string_view body) {
  constexpr std::string_view kScheme = "sha256=";
  const std::optional<std::string_view> header = OneHeader(headers, "X-Hub-Signature-256");
  if (!header || !header->starts_with(kScheme)) return Unverified();
  const std::optional<std::string> signature = HexDecode(header->substr(kScheme.size()));
  if (!signature) return Unverified();
  const std::optional<size_t> secret =
      MatchingSecret(secrets, HmacAlgorithm::kSha256, body, *signature);
  if (!secret) return Unverified();

  auto members = ObjectMembers(body);
  if (!members) return std::unexpected(members.error());
  const std::optional<std::string_view> github_event = OneHeader(headers, "X-GitHub-Event");
  if (!github_event) return Malformed();
  const std::optional<std::string_view> delivery = OneHeader(headers, "X-GitHub-Delivery");
  if (!delivery) return Malformed();
  auto action = OptionalString(*members, "action");
  if (!action) return std::unexpected(action.error());
  std::string type(*github_event);
  if (*action) type += '.' + **action;
  return Accepted(settings, *secret, type, *delivery, std::string(body));
}

// ---- Shopify: X-Shopify-Hmac-Sha256, the base64 HMAC-SHA256 of the body. Its newer event
// deliveries send the same headers without "X-" (shopify-hmac-sha256, shopify-topic…).

VerifyResult VerifyShopify(const SourceSettings& settings, std::span<const std::string> secrets,
                           const HeaderLookup& headers, std::string_view body) {
  // One family of headers, as for Standard Webhooks below.
  const std::string family =
      ReadHeader(headers, "X-Shopify-Hmac-Sha256").presence != Presence::kAbsent ? "X-Shopify-"
                                                                                 : "Shopify-";
  const std::optional<std::string_view> header = OneHeader(headers, family + "Hmac-Sha256");
  if (!header) return Unverified();
  const std::optional<std::string> signature = Base64Decode(*header);
  if (!signature) return Unverified();
  const std::optional<size_t> secret =
      MatchingSecret(secrets, HmacAlgorithm::kSha256, body, *signature);
  if (!secret) return Unverified();

  auto members = ObjectMembers(body);
  if (!members) return std::unexpected(members.error());
  const std::optional<std::string_view> topic = OneHeader(headers, family + "Topic");
  if (!topic) return Malformed();
  std::string type(*topic);
  std::replace(type.begin(), type.end(), '/', '.');
  // The event id names one event across its webhook subscriptions; older deliveries
  // carry the webhook id alone.
  const Header event_id = ReadHeader(headers, family + "Event-Id");
  if (event_id.presence == Presence::kMany) return Malformed();
  std::string_view id = event_id.value;
  if (event_id.presence == Presence::kAbsent) {
    const std::optional<std::string_view> webhook_id = OneHeader(headers, family + "Webhook-Id");
    if (!webhook_id) return Malformed();
    id = *webhook_id;
  }
  return Accepted(settings, *secret, type, id, std::string(body));
}

// ---- Slack: X-Slack-Signature "v0=<hex>", an HMAC-SHA256 of "v0:<timestamp>:<body>" with
// X-Slack-Request-Timestamp.

VerifyResult VerifySlack(const SourceSettings& settings, std::span<const std::string> secrets,
                         const HeaderLookup& headers, std::string_view body, Timestamp now) {
  constexpr std::string_view kScheme = "v0=";
  const std::optional<std::string_view> header = OneHeader(headers, "X-Slack-Signature");
  const std::optional<std::string_view> timestamp = OneHeader(headers, "X-Slack-Request-Timestamp");
  if (!header || !timestamp || !header->starts_with(kScheme)) return Unverified();
  const std::optional<std::string> signature = HexDecode(header->substr(kScheme.size()));
  if (!signature || !TimestampWithin(*timestamp, now, settings.tolerance)) return Unverified();
  std::string message = "v0:";
  message.append(*timestamp);
  message += ':';
  message.append(body);
  const std::optional<size_t> secret =
      MatchingSecret(secrets, HmacAlgorithm::kSha256, message, *signature);
  if (!secret) return Unverified();

  auto members = ObjectMembers(body);
  if (!members) return std::unexpected(members.error());
  auto outer_type = OptionalString(*members, "type");
  if (!outer_type) return std::unexpected(outer_type.error());
  if (*outer_type == "url_verification") {
    auto challenge = RequiredString(*members, "challenge");
    if (!challenge) return std::unexpected(challenge.error());
    auto event_type = EventType(settings, "url_verification");
    if (!event_type) return std::unexpected(event_type.error());
    VerifiedRequest request = Verified(*secret, std::move(*event_type), std::nullopt, "");
    request.challenge = std::move(*challenge);
    return request;
  }
  // event.type names what happened; an envelope without one is typed by its own type.
  std::optional<std::string> type;
  const JsonMember* event = nullptr;
  for (const JsonMember& member : *members) {
    if (member.key != "event") continue;
    if (event != nullptr) return Malformed();
    event = &member;
  }
  if (event != nullptr) {
    if (event->kind != JsonKind::kObject) return Malformed();
    auto event_members = ObjectMembers(event->raw);
    if (!event_members) return std::unexpected(event_members.error());
    auto inner_type = OptionalString(*event_members, "type");
    if (!inner_type) return std::unexpected(inner_type.error());
    type = std::move(*inner_type);
  }
  if (!type) type = std::move(*outer_type);
  if (!type) return Malformed();
  auto event_type = EventType(settings, *type);
  if (!event_type) return std::unexpected(event_type.error());
  // Slack retries an event with its event_id; other envelopes are named by their
  // signature, which a retry of the same request repeats.
  auto event_id = OptionalString(*members, "event_id");
  if (!event_id) return std::unexpected(event_id.error());
  auto key = DedupeKey(
      *event_id ? **event_id : HexEncode(Hmac(HmacAlgorithm::kSha256, secrets[*secret], message)));
  if (!key) return std::unexpected(key.error());
  return Verified(*secret, std::move(*event_type), std::move(*key), std::string(body));
}

// ---- Twilio: X-Twilio-Signature, the base64 HMAC-SHA1 of the URL it called followed by
// each form parameter's name and value, sorted by name; a JSON body is signed through the
// URL's bodySHA256 query parameter instead.

struct FormParameter {
  std::string name;
  std::string value;
};

std::optional<std::string> FormDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = HexValue(text[i + 1]);
      const int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out += static_cast<char>((high << 4) | low);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// application/x-www-form-urlencoded: "&"-separated name=value pairs, empty pairs skipped,
// a pair without "=" a name with an empty value. A bad %-escape: nullopt.
std::optional<std::vector<FormParameter>> ParseForm(std::string_view text) {
  std::vector<FormParameter> parameters;
  for (const std::string_view pair : Split(text, '&')) {
    if (pair.empty()) continue;
    const size_t equals = pair.find('=');
    std::optional<std::string> name = FormDecode(pair.substr(0, equals));
    std::optional<std::string> value =
        FormDecode(equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1));
    if (!name || !value) return std::nullopt;
    parameters.push_back({std::move(*name), std::move(*value)});
  }
  return parameters;
}

// Twilio's signed string after the URL: names in byte order, a name's distinct values in
// byte order, each as name then value (as Twilio's own validator builds it).
std::string SortedParameters(std::vector<FormParameter> parameters) {
  std::sort(parameters.begin(), parameters.end(), [](const auto& a, const auto& b) {
    return a.name != b.name ? a.name < b.name : a.value < b.value;
  });
  std::string data;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i > 0 && parameters[i].name == parameters[i - 1].name &&
        parameters[i].value == parameters[i - 1].value) {
      continue;
    }
    data += parameters[i].name;
    data += parameters[i].value;
  }
  return data;
}

// The URL with its port removed, and with the scheme's default port added when it has
// none: a proxy in front of webhookd may have dropped or kept one, and Twilio's validator
// accepts either.
std::vector<std::string> PortVariants(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {std::string(url)};
  const std::string_view scheme = url.substr(0, scheme_end + 3);
  const size_t authority_end = url.find_first_of("/?#", scheme.size());
  const std::string_view authority = url.substr(
      scheme.size(), authority_end == std::string_view::npos ? std::string_view::npos
                                                             : authority_end - scheme.size());
  const std::string_view rest =
      authority_end == std::string_view::npos ? std::string_view() : url.substr(authority_end);
  const size_t at = authority.rfind('@');
  const std::string_view user_info =
      at == std::string_view::npos ? std::string_view() : authority.substr(0, at + 1);
  const std::string_view host_port =
      at == std::string_view::npos ? authority : authority.substr(at + 1);
  const size_t bracket = host_port.rfind(']');
  const size_t colon = host_port.find(':', bracket == std::string_view::npos ? 0 : bracket + 1);
  const std::string_view host = host_port.substr(0, colon);
  const std::string head = std::string(scheme) + std::string(user_info) + std::string(host);
  std::string with_port = colon == std::string_view::npos
                              ? head + (EqualsIgnoreCase(scheme, "https://") ? ":443" : ":80")
                              : head + std::string(host_port.substr(colon));
  return {head + std::string(rest), with_port + std::string(rest)};
}

VerifyResult VerifyTwilio(const SourceSettings& settings, std::span<const std::string> secrets,
                          const HeaderLookup& headers, std::string_view query,
                          std::string_view body) {
  const std::optional<std::string_view> header = OneHeader(headers, "X-Twilio-Signature");
  if (!header || settings.url.empty()) return Unverified();
  const std::optional<std::string> signature = Base64Decode(*header);
  if (!signature) return Unverified();
  // Twilio signs the URL it called: the source's, with the query the request carries.
  std::string url = settings.url.substr(0, settings.url.find('?'));
  if (!query.empty()) {
    url += '?';
    url.append(query);
  }
  const std::optional<std::vector<FormParameter>> query_parameters = ParseForm(query);
  if (!query_parameters) return Unverified();
  std::optional<std::string_view> body_sha256;
  for (const FormParameter& parameter : *query_parameters) {
    if (parameter.name != "bodySHA256") continue;
    if (body_sha256) return Unverified();
    body_sha256 = parameter.value;
  }

  std::optional<std::vector<FormParameter>> form;
  std::string signed_parameters;
  if (body_sha256) {
    const std::optional<std::string> expected = HexDecode(*body_sha256);
    if (!expected || !SameBytes(*expected, Sha256(body))) return Unverified();
  } else {
    form = ParseForm(body);
    if (!form) return Unverified();
    signed_parameters = SortedParameters(*form);
  }
  std::optional<size_t> secret;
  for (const std::string& candidate : PortVariants(url)) {
    secret =
        MatchingSecret(secrets, HmacAlgorithm::kSha1, candidate + signed_parameters, *signature);
    if (secret) break;
  }
  if (!secret) return Unverified();

  const Header token = ReadHeader(headers, "I-Twilio-Idempotency-Token");
  if (token.presence == Presence::kMany) return Malformed();
  auto key = DedupeKey(token.presence == Presence::kOne ? std::string(token.value)
                                                        : Base64Encode(*signature));
  if (!key) return std::unexpected(key.error());
  if (body_sha256) {
    auto members = ObjectMembers(body);
    if (!members) return std::unexpected(members.error());
    auto event_type = EventType(settings, "request");
    if (!event_type) return std::unexpected(event_type.error());
    return Verified(*secret, std::move(*event_type), std::move(*key), std::string(body));
  }

  // The form as a JSON object, its names in the order received: a name sent once is a
  // string, a name sent several times an array of its values in order.
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> grouped;
  std::optional<std::string_view> twilio_type;
  for (const FormParameter& parameter : *form) {
    // A NUL has no place in a stored payload (PostgreSQL's jsonb refuses \u0000).
    if (!IsValidUtf8(parameter.name) || !IsValidUtf8(parameter.value) ||
        parameter.name.find('\0') != std::string::npos ||
        parameter.value.find('\0') != std::string::npos) {
      return Malformed();
    }
    auto group = std::find_if(grouped.begin(), grouped.end(),
                              [&](const auto& g) { return g.first == parameter.name; });
    if (group == grouped.end()) {
      grouped.push_back({parameter.name, {parameter.value}});
    } else {
      group->second.push_back(parameter.value);
    }
  }
  std::string payload = "{";
  for (const auto& [name, values] : grouped) {
    if (payload.size() > 1) payload += ',';
    AppendJsonString(payload, name);
    payload += ':';
    if (values.size() == 1) {
      AppendJsonString(payload, values.front());
    } else {
      payload += '[';
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) payload += ',';
        AppendJsonString(payload, values[i]);
      }
      payload += ']';
    }
    if (name == "EventType") {
      if (values.size() != 1) return Malformed();
      twilio_type = values.front();
    }
  }
  payload += '}';
  auto event_type = EventType(settings, twilio_type ? *twilio_type : "request");
  if (!event_type) return std::unexpected(event_type.error());
  return Verified(*secret, std::move(*event_type), std::move(*key), std::move(payload));
}

// ---- Standard Webhooks (and Svix): webhook-id, webhook-timestamp, webhook-signature (a
// space-separated list of "v1,<base64>"), each an HMAC-SHA256 of "<id>.<timestamp>.<body>"
// keyed with the secret's base64 after "whsec_".

VerifyResult VerifyStandardWebhooks(const SourceSettings& settings,
                                    std::span<const std::string> secrets,
                                    const HeaderLookup& headers, std::string_view body,
                                    Timestamp now) {
  // One family of headers: a request carrying any webhook-* header is read by those alone,
  // so a svix-* header cannot stand in for a webhook-* one the request sent wrong.
  const bool standard = ReadHeader(headers, "webhook-id").presence != Presence::kAbsent ||
                        ReadHeader(headers, "webhook-timestamp").presence != Presence::kAbsent ||
                        ReadHeader(headers, "webhook-signature").presence != Presence::kAbsent;
  const std::string family = standard ? "webhook-" : "svix-";
  const std::optional<std::string_view> id = OneHeader(headers, family + "id");
  const std::optional<std::string_view> timestamp = OneHeader(headers, family + "timestamp");
  const std::optional<std::string_view> header = OneHeader(headers, family + "signature");
  if (!id || !timestamp || !header) return Unverified();
  if (!TimestampWithin(*timestamp, now, settings.tolerance)) return Unverified();
  std::vector<std::string> signatures;
  for (const std::string_view entry : Split(*header, ' ')) {
    if (!entry.starts_with("v1,")) continue;  // other versions, and the empty entries
    if (std::optional<std::string> bytes = Base64Decode(entry.substr(3))) {
      signatures.push_back(std::move(*bytes));
    }
  }
  if (signatures.empty()) return Unverified();
  std::vector<std::string> keys;
  keys.reserve(secrets.size());
  for (const std::string& secret : secrets) {
    std::string_view text = secret;
    if (text.starts_with("whsec_")) text.remove_prefix(6);
    // An undecodable secret stays in its place, empty, so the index still names it.
    keys.push_back(Base64Decode(text).value_or(""));
  }
  std::string message(*id);
  message += '.';
  message.append(*timestamp);
  message += '.';
  message.append(body);
  const std::optional<size_t> secret =
      MatchingSecret(keys, HmacAlgorithm::kSha256, message, signatures);
  if (!secret) return Unverified();

  auto members = ObjectMembers(body);
  if (!members) return std::unexpected(members.error());
  auto type = RequiredString(*members, "type");
  if (!type) return std::unexpected(type.error());
  return Accepted(settings, *secret, *type, *id, std::string(body));
}

// ---- Any HMAC signer: the source's header holds its prefix and the encoded HMAC of the
// body.

VerifyResult VerifyHmac(const SourceSettings& settings, std::span<const std::string> secrets,
                        const HeaderLookup& headers, std::string_view body) {
  const HmacScheme& scheme = settings.hmac;
  if (scheme.header.empty()) return Unverified();
  const std::optional<std::string_view> header = OneHeader(headers, scheme.header);
  if (!header || !header->starts_with(scheme.prefix)) return Unverified();
  const std::string_view encoded = header->substr(scheme.prefix.size());
  const std::optional<std::string> signature =
      scheme.encoding == SignatureEncoding::kHex ? HexDecode(encoded) : Base64Decode(encoded);
  if (!signature) return Unverified();
  const std::optional<size_t> secret = MatchingSecret(secrets, scheme.algorithm, body, *signature);
  if (!secret) return Unverified();

  auto members = ObjectMembers(body);
  if (!members) return std::unexpected(members.error());
  auto event_type = EventType(settings, settings.event_type);
  if (!event_type) return std::unexpected(event_type.error());
  std::optional<std::string> dedupe_key;
  if (!settings.dedupe_header.empty()) {
    const std::optional<std::string_view> value = OneHeader(headers, settings.dedupe_header);
    if (!value) return Malformed();
    auto key = DedupeKey(*value);
    if (!key) return std::unexpected(key.error());
    dedupe_key = std::move(*key);
  }
  return Verified(*secret, std::move(*event_type), std::move(dedupe_key), std::string(body));
}

}  // namespace

VerifyResult Verify(const SourceSettings& settings, std::span<const std::string> secrets,
                    const HeaderLookup& headers, std::string_view query, std::string_view body,
                    Timestamp now) {
  switch (settings.provider) {
    case InboundProvider::kStripe:
      return VerifyStripe(settings, secrets, headers, body, now);
    case InboundProvider::kGithub:
      return VerifyGithub(settings, secrets, headers, body);
    case InboundProvider::kShopify:
      return VerifyShopify(settings, secrets, headers, body);
    case InboundProvider::kSlack:
      return VerifySlack(settings, secrets, headers, body, now);
    case InboundProvider::kTwilio:
      return VerifyTwilio(settings, secrets, headers, query, body);
    case InboundProvider::kStandardWebhooks:
      return VerifyStandardWebhooks(settings, secrets, headers, body, now);
    case InboundProvider::kHmac:
      return VerifyHmac(settings, secrets, headers, body);
  }
  return Unverified();
}

}  // namespace webhookd
