// `webhookd send` in process: flags, environment and payload sources. Publishing against
// an API is covered by send_e2e_test.
#include "cmd/webhookd/send.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/testing/process.h"

namespace webhookd::cmd::send_test {
namespace {

constexpr const char* kKey = "whk_test_never_printed_0123456789";

struct SendRun {
  int code = -1;
  std::string out;
  std::string err;
};

SendRun Send(const std::vector<std::string>& args, std::map<std::string, std::string> env = {},
             const std::string& stdin_text = "") {
  if (!env.contains("WEBHOOKD_API_KEY")) env["WEBHOOKD_API_KEY"] = kKey;
  if (!env.contains("WEBHOOKD_URL"))
    env["WEBHOOKD_URL"] = "http://127.0.0.1:" + std::to_string(testing::FreePort());
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  SendRun run;
  run.code = RunSend(args, env, in, out, err);
  run.out = out.str();
  run.err = err.str();
  EXPECT_EQ(run.out.find(kKey), std::string::npos);
  EXPECT_EQ(run.err.find(kKey), std::string::npos);
  return run;
}

// One line on stderr that names `what`, and exit status 2.
void ExpectUsageError(const SendRun& run, const std::string& what) {
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_TRUE(run.err.starts_with("webhookd send: " + what)) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(SendCommandTest, HelpGoesToStdout) {
  const SendRun run = Send({"--type", "x", "--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("Usage:"), std::string::npos);
  EXPECT_NE(run.out.find("--max-attempts"), std::string::npos);
  EXPECT_NE(run.out.find("WEBHOOKD_API_KEY"), std::string::npos);
}

TEST(SendCommandTest, BadFlagsNameTheFlag) {
  ExpectUsageError(Send({"--type", "x", "--colour", "red"}), "--colour");
  ExpectUsageError(Send({"--type"}), "--type");
  ExpectUsageError(Send({"--type", "x", "--type", "y", "--data", "{}"}), "--type");
  ExpectUsageError(Send({"--type", "x", "stray"}), "unexpected argument \"stray\"");
  ExpectUsageError(Send({"--data", "{}"}), "--type");
  ExpectUsageError(Send({"--batch", "f", "--type", "x"}), "--type");
  ExpectUsageError(Send({"--batch", "f", "--subject", "user:42"}), "--subject");
  ExpectUsageError(Send({"--type", "x", "--data", "{}", "--data-file", "f"}), "--data-file");
  ExpectUsageError(Send({"--batch", "f", "--concurrency", "0"}), "--concurrency");
  ExpectUsageError(Send({"--batch", "f", "--concurrency", "many"}), "--concurrency");
  ExpectUsageError(Send({"--type", "x", "--data", "{}", "--max-attempts", "0"}), "--max-attempts");
  ExpectUsageError(Send({"--type", "x", "--data", "{}", "--max-wait", "1.5s"}), "--max-wait");
  ExpectUsageError(Send({"--type", "x", "--data", "{}", "--max-wait=10"}), "--max-wait");
  ExpectUsageError(Send({"--type", "x", "--data", "{}", "--traceparent", "00-abc"}),
                   "--traceparent");
  ExpectUsageError(Send({"--type", "x", "--data", "{}", "--traceparent",
                         "00-00000000000000000000000000000000-b7ad6b7169203331-01"}),
                   "--traceparent");
  ExpectUsageError(Send({"--type", "x", "--data", "{}", "--tracestate", "a=1"}), "--tracestate");
  ExpectUsageError(
      Send({"--type", "x", "--data", "{}", "--traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "--tracestate", "novalue"}),
      "--tracestate");
}

TEST(SendCommandTest, ThePayloadMustBeAJsonObject) {
  ExpectUsageError(Send({"--type", "x", "--data", "[1]"}), "--data");
  ExpectUsageError(Send({"--type", "x", "--data", "{\"a\":"}), "--data");
  ExpectUsageError(Send({"--type", "x"}, {}, "not json"), "stdin");
  ExpectUsageError(Send({"--type", "x"}, {}, ""), "stdin");
  ExpectUsageError(Send({"--type", "x", "--data-file", "/nonexistent/payload.json"}),
                   "--data-file");
  const std::string path = ::testing::TempDir() + "/payload-array.json";
  std::ofstream(path) << "[]\n";
  ExpectUsageError(Send({"--type", "x", "--data-file", path}), "--data-file");
}

TEST(SendCommandTest, TheEnvironmentIsChecked) {
  ExpectUsageError(Send({"--type", "x", "--data", "{}"}, {{"WEBHOOKD_API_KEY", ""}}),
                   "WEBHOOKD_API_KEY");
  const SendRun bad_url = Send({"--type", "x", "--data", "{}"}, {{"WEBHOOKD_URL", kKey}});
  ExpectUsageError(bad_url, "WEBHOOKD_URL");
  ExpectUsageError(Send({"--batch", "/nonexistent/events.jsonl"}), "--batch");
}

TEST(SendCommandTest, AnUnreachableApiGivesUpWithExitThree) {
  const SendRun run =
      Send({"--type", "x", "--data", "{}", "--max-attempts", "2", "--max-wait", "10ms"});
  EXPECT_EQ(run.code, 3) << run.err;
  EXPECT_NE(run.out.find("\"error\":\"could not connect"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"status\":null,\"attempts\":2"), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1);
  EXPECT_NE(run.err.find("1 event: 0 accepted, 0 refused, 1 gave up; 2 requests"),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace webhookd::cmd::send_test
