// An HTTP/1.1 request and its incremental parser, for bench_sink's event loop: bytes
// arrive in whatever pieces the socket gives, so the parser keeps its place between calls
// and never needs the whole request at once.
#ifndef WEBHOOKD_BENCH_HTTP_REQUEST_H_
#define WEBHOOKD_BENCH_HTTP_REQUEST_H_

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace webhookd::bench {

struct Request {
  std::string method;
  std::string path;                                          // the target without its query
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;                                          // chunked bodies decoded
  bool keep_alive = true;

  // The first header called `name` (lower-case), or nullptr.
  const std::string* Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return &value;
    }
    return nullptr;
  }
};

class RequestParser {
 public:
  static constexpr size_t kMaxHead = 64 * 1024;
  static constexpr size_t kMaxBody = 1024 * 1024;

  enum class Status { kIncomplete, kComplete, kBad };

  // Parses what it can of `in`, which starts where the last call's consumed bytes ended.
  // Sets `consumed` to the bytes taken (the caller drops them). After kComplete,
  // TakeRequest() gives the request and the parser starts over; after kBad, error_status()
  // is the answer to send before closing the connection.
  Status Parse(std::string_view in, size_t& consumed) {
    consumed = 0;
    for (;;) {
      const std::string_view rest = in.substr(consumed);
      switch (state_) {
        case State::kHead: {
          // Some clients end a body with a stray CRLF; it is not the next request's start.
          if (scanned_ == 0 && rest.starts_with("\r\n")) {
            consumed += 2;
            break;
          }
          // The terminator may straddle two reads: look again from 3 bytes back.
          const size_t end = rest.find("\r\n\r\n", scanned_ > 3 ? scanned_ - 3 : 0);
          if (end == std::string_view::npos) {
            scanned_ = rest.size();
            if (rest.size() > kMaxHead) return Fail(431);
            return Status::kIncomplete;
          }
          if (end + 4 > kMaxHead) return Fail(431);
          scanned_ = 0;
          if (!ParseHead(rest.substr(0, end + 2))) return Status::kBad;
          consumed += end + 4;
          break;
        }
        case State::kLengthBody: {
          const size_t take = TakeBody(rest, consumed);
          body_seen_ |= take > 0;
          if (remaining_ > 0) return Status::kIncomplete;
          return Complete();
        }
        case State::kChunkSize: {
          const size_t eol = rest.find("\r\n");
          if (eol == std::string_view::npos) {
            return rest.size() > kMaxLine ? Fail(400) : Status::kIncomplete;
          }
          uint64_t size = 0;
          if (!ParseHex(rest.substr(0, eol), size)) return Fail(400);
          if (size > kMaxBody - request_.body.size()) return Fail(413);
          consumed += eol + 2;
          body_seen_ = true;
          remaining_ = size;
          state_ = size == 0 ? State::kTrailers : State::kChunkData;
          break;
        }
        case State::kChunkData: {
          TakeBody(rest, consumed);
          if (remaining_ > 0) return Status::kIncomplete;
          state_ = State::kChunkEnd;
          break;
        }
        case State::kChunkEnd:
          if (rest.size() < 2) return Status::kIncomplete;
          if (!rest.starts_with("\r\n")) return Fail(400);
          consumed += 2;
          state_ = State::kChunkSize;
          break;
        case State::kTrailers: {
          // Trailer fields carry nothing the sink needs: skip them up to the empty line.
          const size_t eol = rest.find("\r\n");
          if (eol == std::string_view::npos) {
            return rest.size() > kMaxLine ? Fail(400) : Status::kIncomplete;
          }
          consumed += eol + 2;
          trailer_bytes_ += eol + 2;
          if (trailer_bytes_ > kMaxHead) return Fail(431);
          if (eol == 0) return Complete();
          break;
        }
      }
    }
  }

  // True once per request whose head asked for "100 Continue" while no body byte has come:
  // such a client waits for that interim answer (or a timeout) before sending the body.
  bool TakeContinue() {
    if (!expect_continue_ || state_ == State::kHead || body_seen_) return false;
    expect_continue_ = false;
    return true;
  }
  int error_status() const { return error_status_; }

  Request TakeRequest() {
    Request out = std::move(request_);
    request_ = Request{};
    return out;
  }

 private:
  enum class State { kHead, kLengthBody, kChunkSize, kChunkData, kChunkEnd, kTrailers };
  static constexpr size_t kMaxLine = 1024;

  // Appends what `rest` holds of the body part still expected (remaining_) and returns
  // its size; a Content-Length body and a chunk's data are read alike.
  size_t TakeBody(std::string_view rest, size_t& consumed) {
    const size_t take = std::min<size_t>(remaining_, rest.size());
    request_.body.append(rest.substr(0, take));
    consumed += take;
    remaining_ -= take;
    return take;
  }

  Status Fail(int status) {
    error_status_ = status;
    return Status::kBad;
  }

  bool Refuse(int status) {
    error_status_ = status;
    return false;
  }

  Status Complete() {
    state_ = State::kHead;
    expect_continue_ = false;
    body_seen_ = false;
    trailer_bytes_ = 0;
    return Status::kComplete;
  }

  static std::string Lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }

  static std::string_view Trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  }

  static bool IsTokenChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  }

  static bool ParseHex(std::string_view line, uint64_t& out) {
    line = Trim(line.substr(0, line.find(';')));  // chunk extensions carry nothing for us
    if (line.empty() || line.size() > 8) return false;
    out = 0;
    for (char c : line) {
      const int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                        : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                                    : -1;
      if (digit < 0) return false;
      out = out * 16 + static_cast<uint64_t>(digit);
    }
    return true;
  }

  // Every line of `head` ends in CRLF.
  bool ParseHead(std::string_view head) {
    size_t eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    const size_t sp1 = line.find(' ');
    const size_t sp2 = line.rfind(' ');
    if (sp1 == std::string_view::npos || sp1 == 0 || sp2 == sp1 || sp2 == sp1 + 1) {
      return Refuse(400);
    }
    request_.method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = line.substr(sp2 + 1);
    if (version != "HTTP/1.1" && version != "HTTP/1.0") return Refuse(505);
    if (target.find(' ') != std::string_view::npos) return Refuse(400);
    request_.path = target.substr(0, target.find('?'));
    request_.keep_alive = version == "HTTP/1.1";

    bool has_length = false;
    bool chunked = false;
    uint64_t length = 0;
    for (size_t at = eol + 2; at < head.size(); at = eol + 2) {
      eol = head.find("\r\n", at);
      const std::string_view field = head.substr(at, eol - at);
      const size_t colon = field.find(':');
      if (colon == std::string_view::npos || colon == 0) return Refuse(400);
      // A name must be a token: this also refuses folded lines and "name :".
      const std::string_view name = field.substr(0, colon);
      if (!std::all_of(name.begin(), name.end(), IsTokenChar)) return Refuse(400);
      std::string key = Lower(name);
      const std::string_view value = Trim(field.substr(colon + 1));
      if (key == "content-length") {
        uint64_t n = 0;
        if (value.empty() || value.size() > 12 ||
            !std::all_of(value.begin(), value.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
          return Refuse(400);
        }
        for (char c : value) n = n * 10 + static_cast<uint64_t>(c - '0');
        // Two lengths that disagree leave the body's end ambiguous: refuse.
        if (has_length && n != length) return Refuse(400);
        has_length = true;
        length = n;
      } else if (key == "transfer-encoding") {
        if (Lower(value) != "chunked") return Refuse(501);
        chunked = true;
      } else if (key == "connection") {
        for (const std::string& token : Tokens(Lower(value))) {
          if (token == "close") request_.keep_alive = false;
          if (token == "keep-alive") request_.keep_alive = true;
        }
      } else if (key == "expect") {
        if (Lower(value) != "100-continue") return Refuse(417);
        expect_continue_ = true;
      }
      request_.headers.emplace_back(std::move(key), value);
    }
    // Both at once is how requests get smuggled past a proxy; no honest client sends it.
    if (has_length && chunked) return Refuse(400);
    if (length > kMaxBody) return Refuse(413);
    remaining_ = length;
    state_ = chunked ? State::kChunkSize : State::kLengthBody;
    return true;
  }

  static std::vector<std::string> Tokens(const std::string& list) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= list.size()) {
      const size_t comma = std::min(list.find(',', at), list.size());
      out.emplace_back(Trim(std::string_view(list).substr(at, comma - at)));
      at = comma + 1;
    }
    return out;
  }

  State state_ = State::kHead;
  Request request_;
  size_t scanned_ = 0;  // bytes of the head already searched for its end
  uint64_t remaining_ = 0;
  size_t trailer_bytes_ = 0;
  bool expect_continue_ = false;
  bool body_seen_ = false;
  int error_status_ = 400;
};

}  // namespace webhookd::bench

#endif  // WEBHOOKD_BENCH_HTTP_REQUEST_H_
