#pragma once

#include <string>
#include <vector>

namespace webhookd::cmd {

// Each returns the process exit code: 0 done, 1 failed, 2 bad usage or configuration.
int Migrate(const std::vector<std::string>& args);
int Serve(const std::vector<std::string>& args, bool api, bool worker);
int Keys(const std::vector<std::string>& args);
int DeadLetters(const std::vector<std::string>& args);

}  // namespace webhookd::cmd
