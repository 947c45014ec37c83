#pragma once

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace webhookd::trace::node {

// tests/otlp: the Node.js helpers that read OTLP with OpenTelemetry's own definitions.
inline const std::string kOtlpDir = std::string(WEBHOOKD_SOURCE_DIR) + "/tests/otlp";

// The node executable on PATH, or "".
inline std::string FindNode() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/node";
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Why the Node.js checks cannot run here, or "" when they can.
inline std::string Unavailable() {
  if (FindNode().empty()) return "needs node on PATH";
  if (::access((kOtlpDir + "/node_modules/@opentelemetry/otlp-transformer").c_str(), R_OK) != 0) {
    return "needs `npm ci` in tests/otlp";
  }
  return "";
}

inline std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct Run {
  int exit_code = -1;
  std::string out;  // stdout; stderr goes to the test's own
};

// Runs `argv` through the shell and collects what it prints.
inline Run Capture(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& word : argv) command += ShellQuote(word) + " ";
  Run run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = ::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace webhookd::trace::node
