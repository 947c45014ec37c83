#include "base/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace webhookd::log_test {
namespace {

TEST(LogTest, FormatsOneJsonObject) {
  EXPECT_EQ(FormatLogLine("2026-01-01T00:00:00.000000Z", LogLevel::kInfo, "delivery sent",
                          {{"delivery_id", "dlv_7"},
                           {"attempt", 2},
                           {"status", int64_t{503}},
                           {"seconds", 1.5},
                           {"retry", true},
                           {"disabled", false}}),
            R"({"ts":"2026-01-01T00:00:00.000000Z","level":"info","msg":"delivery sent",)"
            R"("delivery_id":"dlv_7","attempt":2,"status":503,"seconds":1.5,"retry":true,)"
            R"("disabled":false})");
}

TEST(LogTest, NamesEveryLevel) {
  EXPECT_NE(FormatLogLine("t", LogLevel::kDebug, "m", {}).find(R"("level":"debug")"),
            std::string::npos);
  EXPECT_NE(FormatLogLine("t", LogLevel::kWarn, "m", {}).find(R"("level":"warn")"),
            std::string::npos);
  EXPECT_NE(FormatLogLine("t", LogLevel::kError, "m", {}).find(R"("level":"error")"),
            std::string::npos);
}

TEST(LogTest, EscapesStrings) {
  EXPECT_EQ(FormatLogLine("t", LogLevel::kInfo, "say \"hi\" \\ bye", {}),
            R"({"ts":"t","level":"info","msg":"say \"hi\" \\ bye"})");
  EXPECT_EQ(FormatLogLine("t", LogLevel::kInfo, std::string("a\nb\rc\td\x01\x1f"), {}),
            R"({"ts":"t","level":"info","msg":"a\nb\rc\td\u0001\u001f"})");
  EXPECT_EQ(FormatLogLine("t", LogLevel::kInfo, std::string("nul\0", 4), {{"k\"ey", "v"}}),
            R"({"ts":"t","level":"info","msg":"nul\u0000","k\"ey":"v"})");
  // Invalid UTF-8 would make the line invalid JSON; it is replaced.
  EXPECT_EQ(FormatLogLine("t", LogLevel::kInfo, "caf\xc3\xa9 \xff", {}),
            "{\"ts\":\"t\",\"level\":\"info\",\"msg\":\"caf\xc3\xa9 \xef\xbf\xbd\"}");
}

TEST(LogTest, NumbersAreJsonNumbers) {
  EXPECT_EQ(FormatLogLine("t", LogLevel::kInfo, "m",
                          {{"neg", int64_t{-9223372036854775807LL - 1}}, {"d", 0.1}}),
            R"({"ts":"t","level":"info","msg":"m","neg":-9223372036854775808,"d":0.1})");
  EXPECT_EQ(FormatLogLine("t", LogLevel::kInfo, "m", {{"nan", 0.0 / 0.0}}),
            R"({"ts":"t","level":"info","msg":"m","nan":null})");
}

TEST(LogTest, LevelFilters) {
  SetLogLevel(LogLevel::kWarn);
  EXPECT_FALSE(LogEnabled(LogLevel::kDebug));
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarn));
  EXPECT_TRUE(LogEnabled(LogLevel::kError));
  SetLogLevel(LogLevel::kDebug);
  EXPECT_TRUE(LogEnabled(LogLevel::kDebug));
  SetLogLevel(LogLevel::kInfo);
}

// Runs `body` with stderr redirected to a file and returns what was written.
template <typename F>
std::string CaptureStderr(F body) {
  char path[] = "/tmp/webhookd_log_test_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  const int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  body();
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

TEST(LogTest, LogWritesWholeLinesAtOrAboveTheLevel) {
  SetLogLevel(LogLevel::kWarn);
  const std::string out = CaptureStderr([] {
    Log(LogLevel::kInfo, "hidden");
    Log(LogLevel::kWarn, "shown", {{"n", 1}});
    Log(LogLevel::kError, "also shown");
  });
  SetLogLevel(LogLevel::kInfo);
  EXPECT_EQ(out.find("hidden"), std::string::npos) << out;
  const size_t first_newline = out.find('\n');
  ASSERT_NE(first_newline, std::string::npos) << out;
  const std::string first = out.substr(0, first_newline);
  EXPECT_TRUE(first.starts_with(R"({"ts":")")) << first;
  EXPECT_NE(first.find(R"("level":"warn","msg":"shown","n":1})"), std::string::npos) << first;
  // ts is RFC 3339 UTC with microseconds.
  EXPECT_EQ(first[7 + 27 - 1], 'Z') << first;
  EXPECT_NE(out.find(R"("msg":"also shown")"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2);
}

}  // namespace
}  // namespace webhookd::log_test
