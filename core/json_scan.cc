#include "core/json_scan.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace webhookd {
namespace {

// Bytes a string holds as they are: printable ASCII except '"' and '\'. One table lookup per
// byte keeps the common case (long runs of ASCII text) a tight loop.
constexpr std::array<bool, 256> kPlainStringByte = [] {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
  return table;
}();

bool IsWhitespace(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

int HexDigit(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The length of the well-formed UTF-8 sequence (RFC 3629 section 4) starting at p[0] >= 0x80,
// or 0. The narrowed second-byte ranges after E0, ED, F0 and F4 are what exclude overlong
// forms, UTF-16 surrogates and code points above U+10FFFF.
size_t Utf8SequenceLength(const unsigned char* p, size_t available) {
  const auto in = [&](size_t i, unsigned char lo, unsigned char hi) {
    return i < available && p[i] >= lo && p[i] <= hi;
  };
  const unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return in(1, 0x80, 0xBF) ? 2 : 0;
  if (c == 0xE0) return in(1, 0xA0, 0xBF) && in(2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xED) return in(1, 0x80, 0x9F) && in(2, 0x80, 0xBF) ? 3 : 0;
  if (c >= 0xE1 && c <= 0xEF) return in(1, 0x80, 0xBF) && in(2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xF0) return in(1, 0x90, 0xBF) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) {
    return in(1, 0x80, 0xBF) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
  }
  if (c == 0xF4) return in(1, 0x80, 0x8F) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
  return 0;
}

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

JsonKind KindOf(unsigned char first) {
  switch (first) {
    case '{':
      return JsonKind::kObject;
    case '[':
      return JsonKind::kArray;
    case '"':
      return JsonKind::kString;
    case 't':
      return JsonKind::kTrue;
    case 'f':
      return JsonKind::kFalse;
    case 'n':
      return JsonKind::kNull;
    default:
      return JsonKind::kNumber;
  }
}

// One pass over the input. Each scanning method either consumes a whole token and returns true,
// or records where and why the input stopped being JSON and returns false.
class Scanner {
 public:
  explicit Scanner(std::string_view text)
      : text_(text), p_(reinterpret_cast<const unsigned char*>(text.data())), n_(text.size()) {}

  // The whole input as one JSON text; members of a top-level object go to `members`.
  bool Document(int max_depth, std::vector<JsonMember>& members);
  // A string token at pos(); its decoded value is appended to `out` unless it is null.
  bool String(std::string* out);

  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ >= n_; }
  bool too_deep() const { return too_deep_; }
  JsonKind top_kind() const { return top_kind_; }

  // "<prefix> at byte N: <why>".
  std::string ErrorMessage(std::string_view prefix) const {
    std::string message(prefix);
    message += " at byte ";
    message += std::to_string(error_at_);
    message += ": ";
    message += error_;
    // "expected ':'" alone would leave a reader to work out that N is the input's length.
    if (error_at_ >= n_ && std::strncmp(error_, "expected", 8) == 0) message += ", found the end";
    return message;
  }
  bool Fail(size_t at, const char* why) {
    error_at_ = at;
    error_ = why;
    return false;
  }

 private:
  int Peek() const { return pos_ < n_ ? p_[pos_] : -1; }
  void SkipWhitespace() {
    while (pos_ < n_ && IsWhitespace(p_[pos_])) ++pos_;
  }
  bool Number();
  bool Literal(std::string_view word);
  // Four hex digits at p_[at..at+4), or -1.
  int32_t Hex4(size_t at) const;

  std::string_view text_;
  const unsigned char* p_;
  size_t n_;
  size_t pos_ = 0;
  bool too_deep_ = false;
  JsonKind top_kind_ = JsonKind::kNull;
  size_t error_at_ = 0;
  const char* error_ = "";
};

bool Scanner::Document(int max_depth, std::vector<JsonMember>& members) {
  if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
  // The open containers, outermost first, as '{' or '['. Nesting is tracked here instead of on
  // the call stack; it keeps growing past max_depth so the rest of the input is still checked
  // and a too-deep text that is not JSON at all is reported as malformed.
  std::string open;
  size_t value_start = 0;
  enum class Next { kValue, kFirstKey, kKey, kAfterValue };
  Next next = Next::kValue;
  bool members_wanted = false;  // set once the top level is known to be an object
  for (;;) {
    switch (next) {
      case Next::kValue: {
        SkipWhitespace();
        const int c = Peek();
        if (c < 0) return Fail(pos_, "expected a value");
        if (open.empty()) {
          top_kind_ = KindOf(c);
        } else if (members_wanted && open.size() == 1) {
          value_start = pos_;
          members.back().kind = KindOf(c);
        }
        if (c == '{' || c == '[') {
          open += static_cast<char>(c);
          ++pos_;
          if (std::cmp_greater(open.size(), max_depth)) too_deep_ = true;
          if (open.size() == 1) members_wanted = c == '{';
          SkipWhitespace();
          if (Peek() == (c == '{' ? '}' : ']')) {
            ++pos_;
            open.pop_back();
            next = Next::kAfterValue;
          } else {
            next = c == '{' ? Next::kFirstKey : Next::kValue;
          }
          continue;
        }
        bool ok;
        if (c == '"') {
          ok = String(nullptr);
        } else if (c == '-' || IsDigit(c)) {
          ok = Number();
        } else if (c == 't') {
          ok = Literal("true");
        } else if (c == 'f') {
          ok = Literal("false");
        } else if (c == 'n') {
          ok = Literal("null");
        } else {
          ok = Fail(pos_, "expected a value");
        }
        if (!ok) return false;
        next = Next::kAfterValue;
        continue;
      }
      case Next::kFirstKey:
      case Next::kKey: {
        SkipWhitespace();
        if (Peek() != '"') {
          return Fail(pos_, next == Next::kFirstKey ? "expected a string key or '}'"
                                                    : "expected a string key");
        }
        std::string* key = nullptr;
        if (members_wanted && open.size() == 1) key = &members.emplace_back().key;
        if (!String(key)) return false;
        SkipWhitespace();
        if (Peek() != ':') return Fail(pos_, "expected ':'");
        ++pos_;
        next = Next::kValue;
        continue;
      }
      case Next::kAfterValue: {
        if (open.empty()) {
          SkipWhitespace();
          if (!at_end()) return Fail(pos_, "unexpected data after the JSON value");
          return true;
        }
        if (members_wanted && open.size() == 1) {
          members.back().raw = text_.substr(value_start, pos_ - value_start);
        }
        SkipWhitespace();
        const int c = Peek();
        const char close = open.back() == '{' ? '}' : ']';
        if (c == ',') {
          ++pos_;
          next = close == '}' ? Next::kKey : Next::kValue;
        } else if (c == close) {
          ++pos_;
          open.pop_back();
        } else {
          return Fail(pos_, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        continue;
      }
    }
  }
}

int32_t Scanner::Hex4(size_t at) const {
  if (at > n_ || n_ - at < 4) return -1;
  int32_t value = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const int digit = HexDigit(p_[i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

bool Scanner::String(std::string* out) {
  size_t i = pos_ + 1;  // past the opening quote
  size_t run = i;       // the start of the bytes not yet appended to `out`
  for (;;) {
    while (i < n_ && kPlainStringByte[p_[i]]) ++i;
    if (i >= n_) return Fail(n_, "unterminated string");
    const unsigned char c = p_[i];
    if (c == '"') {
      if (out != nullptr) out->append(text_.substr(run, i - run));
      pos_ = i + 1;
      return true;
    }
    if (c < 0x20) return Fail(i, "unescaped control character in a string");
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(p_ + i, n_ - i);
      if (length == 0) return Fail(i, "invalid UTF-8 in a string");
      i += length;
      continue;
    }
    // A backslash.
    if (out != nullptr) out->append(text_.substr(run, i - run));
    if (i + 1 >= n_) return Fail(n_, "unterminated string");
    char simple = 0;
    switch (p_[i + 1]) {
      case '"':
        simple = '"';
        break;
      case '\\':
        simple = '\\';
        break;
      case '/':
        simple = '/';
        break;
      case 'b':
        simple = '\b';
        break;
      case 'f':
        simple = '\f';
        break;
      case 'n':
        simple = '\n';
        break;
      case 'r':
        simple = '\r';
        break;
      case 't':
        simple = '\t';
        break;
      case 'u':
        break;
      default:
        return Fail(i, "invalid escape in a string");
    }
    if (simple != 0) {
      if (out != nullptr) *out += simple;
      i += 2;
      run = i;
      continue;
    }
    const int32_t unit = Hex4(i + 2);
    if (unit < 0) return Fail(i, "\\u must be followed by four hex digits");
    uint32_t code_point = static_cast<uint32_t>(unit);
    // A lone surrogate is grammatical JSON (RFC 8259 section 8.2) but decodes to no Unicode
    // text: refused, as the parser used before this one did, so every decoded string and every
    // stored payload is valid UTF-16 and UTF-8 alike.
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return Fail(i, "\\u escape of a low surrogate without a high surrogate before it");
    }
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      const int32_t low = i + 8 <= n_ && p_[i + 6] == '\\' && p_[i + 7] == 'u' ? Hex4(i + 8) : -1;
      if (low < 0xDC00 || low > 0xDFFF) {
        return Fail(i, "\\u escape of a high surrogate without a low surrogate after it");
      }
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00);
      i += 6;
    }
    if (out != nullptr) AppendUtf8(code_point, *out);
    i += 6;
    run = i;
  }
}

bool Scanner::Number() {
  size_t i = pos_;
  if (p_[i] == '-') ++i;
  if (i >= n_ || !IsDigit(p_[i])) return Fail(i, "expected a digit");
  if (p_[i] == '0') {
    ++i;
    if (i < n_ && IsDigit(p_[i])) return Fail(i, "a number cannot have a leading zero");
  } else {
    while (i < n_ && IsDigit(p_[i])) ++i;
  }
  if (i < n_ && p_[i] == '.') {
    ++i;
    if (i >= n_ || !IsDigit(p_[i])) return Fail(i, "expected a digit after '.'");
    while (i < n_ && IsDigit(p_[i])) ++i;
  }
  if (i < n_ && (p_[i] == 'e' || p_[i] == 'E')) {
    ++i;
    if (i < n_ && (p_[i] == '+' || p_[i] == '-')) ++i;
    if (i >= n_ || !IsDigit(p_[i])) return Fail(i, "expected a digit in the exponent");
    while (i < n_ && IsDigit(p_[i])) ++i;
  }
  pos_ = i;
  return true;
}

bool Scanner::Literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return Fail(pos_, "invalid literal");
  pos_ += word.size();
  return true;
}

std::unexpected<Error> BodyInvalid(std::string message) {
  Error error{ErrorKind::kInvalid, message, {}};
  error.fields.push_back({"body", std::move(message)});
  return std::unexpected<Error>(std::move(error));
}

}  // namespace

Result<std::vector<JsonMember>> ScanJsonObject(std::string_view text, int max_depth) {
  Scanner scanner(text);
  std::vector<JsonMember> members;
  if (!scanner.Document(max_depth, members)) {
    return Fail(ErrorKind::kMalformed, scanner.ErrorMessage("invalid JSON"));
  }
  if (scanner.too_deep()) {
    return BodyInvalid("JSON nested deeper than " + std::to_string(max_depth) + " levels");
  }
  if (scanner.top_kind() != JsonKind::kObject) return BodyInvalid("the body must be a JSON object");
  return members;
}

Result<std::string> DecodeJsonString(std::string_view raw) {
  Scanner scanner(raw);
  std::string decoded;
  bool ok;
  if (raw.empty() || raw.front() != '"') {
    ok = scanner.Fail(0, "expected '\"'");
  } else {
    ok = scanner.String(&decoded) &&
         (scanner.at_end() || scanner.Fail(scanner.pos(), "unexpected data after the string"));
  }
  if (!ok) return Fail(ErrorKind::kMalformed, scanner.ErrorMessage("invalid JSON string"));
  return decoded;
}

}  // namespace webhookd
