#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace webhookd::testing {

// A child process with its stdout and stderr appended to a log file.
class Process {
 public:
  Process(std::vector<std::string> argv, std::map<std::string, std::string> env,
          std::string log_path);
  ~Process();  // SIGKILLs the child if it still runs
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // The exit code (128 + signal when killed), or nullopt if still running at the timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  bool Running();
  const std::string& log_path() const { return log_path_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string log_path_;
};

// A shell command's wait status (as pclose gives it; 0: exited 0) and standard output.
std::pair<int, std::string> RunCommand(const std::string& command);

// The whole text of a file ("" if missing).
std::string ReadFile(const std::string& path);

// SIGSTOP to process `pid` (with `group`, to its whole process group) and a wait, at most
// a second, until every thread of each has stopped: kill() returns before a thread busy
// on another core has stopped, and that thread may still answer what is sent after it.
void StopAndWait(int pid, bool group = false);

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreePort();

}  // namespace webhookd::testing
