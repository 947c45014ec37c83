#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>

#include "base/clock.h"
#include "base/encoding.h"

namespace webhookd {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

std::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

void AppendValue(std::string& out, const LogField& field) {
  if (const auto* s = std::get_if<std::string_view>(&field.value)) {
    AppendJsonString(out, *s);
  } else if (const auto* i = std::get_if<int64_t>(&field.value)) {
    out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&field.value)) {
    if (!std::isfinite(*d)) {
      out += "null";  // JSON has no NaN or infinity
    } else {
      char buffer[32];
      const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, *d);
      out.append(buffer, ec == std::errc() ? end : buffer);
    }
  } else if (const auto* b = std::get_if<bool>(&field.value)) {
    out += *b ? "true" : "false";
  }
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

std::string FormatLogLine(std::string_view ts, LogLevel level, std::string_view msg,
                          std::initializer_list<LogField> fields) {
  std::string line = "{\"ts\":";
  AppendJsonString(line, ts);
  line += ",\"level\":";
  AppendJsonString(line, LevelName(level));
  line += ",\"msg\":";
  AppendJsonString(line, msg);
  for (const LogField& field : fields) {
    line += ',';
    AppendJsonString(line, field.key);
    line += ':';
    AppendValue(line, field);
  }
  line += '}';
  return line;
}

void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!LogEnabled(level)) return;
  std::string line = FormatLogLine(FormatRfc3339(SystemClock().Now()), level, msg, fields);
  line += '\n';
  // One write per line so lines from threads never interleave; a short write (rare, for
  // a pipe nearly full) continues where it stopped.
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere left to report a logging failure
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace webhookd
