// Differential fuzzing of ScanJsonObject against nlohmann::json, the parser it replaces:
// both must agree on what is JSON (except numbers too large for a double, which nlohmann
// refuses and the scanner keeps as written), every member's raw bytes must parse to what
// nlohmann finds under that key, and a value wrapped as {"payload":V} must come back as V
// byte for byte.
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_scan.h"
#include "core/validation.h"
#include "fuzz/fuzz_check.h"

namespace {

using Json = nlohmann::json;
using webhookd::ErrorKind;
using webhookd::JsonKind;
using webhookd::JsonMember;
using webhookd::Result;

constexpr int kDepth = webhookd::kMaxJsonDepth;
constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool IsJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// True when nlohmann refuses `text` only because a number in it does not fit a double.
bool NlohmannNumberOverflow(std::string_view text) {
  try {
    (void)Json::parse(text);
    return false;
  } catch (const Json::out_of_range& e) {
    return e.id == 406;
  } catch (const Json::exception&) {
    return false;
  }
}

bool KindMatches(JsonKind kind, const Json& value) {
  switch (kind) {
    case JsonKind::kObject:
      return value.is_object();
    case JsonKind::kArray:
      return value.is_array();
    case JsonKind::kString:
      return value.is_string();
    case JsonKind::kNumber:
      return value.is_number();
    case JsonKind::kTrue:
      return value.is_boolean() && value.get<bool>();
    case JsonKind::kFalse:
      return value.is_boolean() && !value.get<bool>();
    case JsonKind::kNull:
      return value.is_null();
  }
  return false;
}

// What every member of a successful scan satisfies, nlohmann or not.
void CheckMemberShapes(std::string_view text, const std::vector<JsonMember>& members) {
  const char* previous_end = text.data();
  for (const JsonMember& m : members) {
    FUZZ_CHECK(!m.raw.empty());
    FUZZ_CHECK(m.raw.data() >= previous_end);
    FUZZ_CHECK(m.raw.data() + m.raw.size() <= text.data() + text.size());
    previous_end = m.raw.data() + m.raw.size();
    FUZZ_CHECK(!IsJsonWhitespace(m.raw.front()) && !IsJsonWhitespace(m.raw.back()));
    // A member's raw bytes are a JSON text by themselves, of the kind reported.
    const Result<std::vector<JsonMember>> alone = webhookd::ScanJsonObject(m.raw, kDepth);
    if (m.kind == JsonKind::kObject) {
      FUZZ_CHECK(alone.has_value());
    } else {
      FUZZ_CHECK(!alone && alone.error().message == "the body must be a JSON object");
    }
    if (m.kind == JsonKind::kString) FUZZ_CHECK(webhookd::DecodeJsonString(m.raw).has_value());
  }
}

// The scan agrees with nlohmann's parse of the same (accepted, shallow enough) object.
void CheckMembersAgainstNlohmann(std::string_view text, const std::vector<JsonMember>& members) {
  const Json parsed = Json::parse(text);
  FUZZ_CHECK(parsed.is_object());
  // nlohmann keeps the last of duplicated keys.
  std::map<std::string, const JsonMember*> last;
  for (const JsonMember& m : members) last[m.key] = &m;
  FUZZ_CHECK(last.size() == parsed.size());
  for (const JsonMember& m : members) {
    const auto it = parsed.find(m.key);
    FUZZ_CHECK(it != parsed.end());
    const Json value = Json::parse(m.raw);
    FUZZ_CHECK(KindMatches(m.kind, value));
    if (last[m.key] == &m) FUZZ_CHECK(value == *it);
    if (m.kind == JsonKind::kString) {
      FUZZ_CHECK(*webhookd::DecodeJsonString(m.raw) == value.get_ref<const std::string&>());
    }
  }
}

// {"payload":V} gives V back byte for byte, however the object around it is spaced.
void CheckWrapped(std::string_view value, const Json* parsed) {
  for (const auto& [before, after] :
       {std::pair<std::string_view, std::string_view>{"{\"payload\":", "}"},
        {" {\"a\":[],\r\n \"pa\\u0079load\" :\t", " \n}\n"}}) {
    const std::string wrapped = std::string(before) + std::string(value) + std::string(after);
    const Result<std::vector<JsonMember>> members = webhookd::ScanJsonObject(wrapped, kDepth);
    FUZZ_CHECK(members.has_value());
    const JsonMember& payload = members->back();
    FUZZ_CHECK(payload.key == "payload");
    FUZZ_CHECK(payload.raw == value);
    if (parsed != nullptr) FUZZ_CHECK(KindMatches(payload.kind, *parsed));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // nlohmann's lexer takes a NUL byte outside a string as the end of the input, so it accepts
  // "{}\0anything". A NUL is never JSON (not whitespace, not allowed raw in a string): the
  // scanner refuses it, and the two are compared on what comes before it.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const Result<std::vector<JsonMember>> with_nul = webhookd::ScanJsonObject(text, kDepth);
    FUZZ_CHECK(!with_nul && with_nul.error().kind == ErrorKind::kMalformed);
    text = text.substr(0, nul);
  }
  const bool nlohmann_accepts = Json::accept(text);
  const Result<std::vector<JsonMember>> scanned = webhookd::ScanJsonObject(text, kDepth);

  if (!scanned && scanned.error().kind == ErrorKind::kMalformed) {
    FUZZ_CHECK(!nlohmann_accepts);
    constexpr std::string_view kPrefix = "invalid JSON at byte ";
    const std::string& message = scanned.error().message;
    FUZZ_CHECK(message.starts_with(kPrefix));
    // The byte named is in the input or just past its end.
    FUZZ_CHECK(std::stoull(message.substr(kPrefix.size())) <= text.size());
    return 0;
  }
  // From here on the scanner found one valid JSON text.
  if (!nlohmann_accepts) FUZZ_CHECK(NlohmannNumberOverflow(text));
  const bool shallow = webhookd::JsonDepth(text, kDepth) <= kDepth;
  std::string_view value = text;
  if (value.starts_with(kBom)) value.remove_prefix(kBom.size());
  while (!value.empty() && IsJsonWhitespace(value.front())) value.remove_prefix(1);
  while (!value.empty() && IsJsonWhitespace(value.back())) value.remove_suffix(1);

  if (!scanned) {
    FUZZ_CHECK(scanned.error().kind == ErrorKind::kInvalid);
    FUZZ_CHECK(scanned.error().fields.size() == 1);
    if (scanned.error().message ==
        "JSON nested deeper than " + std::to_string(kDepth) + " levels") {
      FUZZ_CHECK(!shallow);
    } else {
      FUZZ_CHECK(scanned.error().message == "the body must be a JSON object");
      FUZZ_CHECK(shallow);
      FUZZ_CHECK(value.front() != '{');
    }
  } else {
    FUZZ_CHECK(shallow);
    FUZZ_CHECK(value.front() == '{');
    CheckMemberShapes(text, *scanned);
    if (nlohmann_accepts) CheckMembersAgainstNlohmann(text, *scanned);
    // A lower limit refuses exactly the objects nested deeper than it.
    const bool fits_in_two = webhookd::JsonDepth(text, 2) <= 2;
    const Result<std::vector<JsonMember>> shallower = webhookd::ScanJsonObject(text, 2);
    FUZZ_CHECK(shallower.has_value() == fits_in_two);
    if (shallower) FUZZ_CHECK(shallower->size() == scanned->size());
  }

  // One level is added around the value: only values that leave room for it.
  if (webhookd::JsonDepth(value, kDepth) < kDepth) {
    if (nlohmann_accepts) {
      const Json parsed = Json::parse(value);
      CheckWrapped(value, &parsed);
    } else {
      CheckWrapped(value, nullptr);
    }
  }
  return 0;
}
