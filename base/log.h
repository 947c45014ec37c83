#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

namespace webhookd {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// One field of a log line. Values are ids, numbers and short messages: never a
// secret, an API key, a header value or a payload.
struct LogField {
  std::string_view key;
  std::variant<std::string_view, int64_t, double, bool> value;
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, int v) : key(k), value(static_cast<int64_t>(v)) {}
  LogField(std::string_view k, int64_t v) : key(k), value(v) {}
  LogField(std::string_view k, double v) : key(k), value(v) {}
  LogField(std::string_view k, bool v) : key(k), value(v) {}
};

void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// Writes one JSON object per line to stderr: {"ts","level","msg", fields...}; a whole
// line per write(2), so lines from threads never interleave.
void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});

// The JSON line Log would write, without the newline (for tests).
std::string FormatLogLine(std::string_view ts, LogLevel level, std::string_view msg,
                          std::initializer_list<LogField> fields);

}  // namespace webhookd
