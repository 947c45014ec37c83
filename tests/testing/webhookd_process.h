#pragma once

#include <httplib.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/process.h"

namespace webhookd::testing {

// The path of the webhookd binary under test ($WEBHOOKD_BIN, set by scripts/test).
std::string WebhookdBinary();

// A running `webhookd <mode>` on a free loopback port, with an admin and a publisher key.
class WebhookdProcess {
 public:
  // `env` adds to or overrides the defaults: DATABASE_URL=`database_url`,
  // WEBHOOKD_ADDR=127.0.0.1:<free>, WEBHOOKD_WORKER_ADDR=127.0.0.1:0,
  // WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS=true, WEBHOOKD_BOOTSTRAP_ADMIN_KEY=<admin key>,
  // WEBHOOKD_LOG_LEVEL=debug. Waits for /healthz (server, all) unless mode is "worker".
  // `wrapper` goes before the binary in the command line (e.g. a namespace to run in).
  WebhookdProcess(const std::string& database_url, std::string mode = "all",
                  std::map<std::string, std::string> env = {},
                  std::vector<std::string> wrapper = {});

  int port() const { return port_; }
  const std::string& admin_key() const { return admin_key_; }
  Process& process() { return *process_; }
  const std::string& log_path() const { return log_path_; }

  // A client for the API with the admin key as Bearer (or `key` if given).
  std::unique_ptr<httplib::Client> Client(const std::string& key = "") const;

  // Convenience: a JSON request with the admin key; returns the response (status 0 on a
  // transport error).
  httplib::Response Call(const std::string& method, const std::string& path,
                         const nlohmann::json& body = nullptr, const std::string& key = "") const;

  // Runs `webhookd <args>` against the same database and returns its stdout+stderr and
  // exit code.
  static std::pair<int, std::string> RunCommand(const std::vector<std::string>& args,
                                                const std::map<std::string, std::string>& env);

  // `webhookd keys create <flags>` against `database_url`: the key it printed alone on its
  // last line, or "" when the command failed.
  static std::string CreateKey(const std::string& database_url,
                               const std::vector<std::string>& flags);

 private:
  // True once /healthz answers and the admin key works (30 s at most); false when the
  // process ended or the time ran out.
  bool WaitHealthy();

  int port_ = 0;
  std::string admin_key_;
  std::string log_path_;
  std::unique_ptr<Process> process_;
};

// Every test's log files go here; the e2e suite greps them for secrets.
std::string TestLogDir();

// `n` times `wait`, comma-separated: a WEBHOOKD_RETRY_SCHEDULE of n equal waits.
inline std::string RetrySchedule(const std::string& wait, int n) {
  std::string out = wait;
  for (int i = 1; i < n; ++i) out += "," + wait;
  return out;
}

}  // namespace webhookd::testing
