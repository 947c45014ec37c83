#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"

namespace webhookd::cmd {

// True when the arguments ask for help (--help or -h anywhere).
bool WantsHelp(const std::vector<std::string>& args);

// Prints "webhookd: <message>" to stderr and returns 2, the exit code of bad usage.
int Usage(const std::string& message);

// The configuration from the environment; on a bad value prints one line naming the
// variable and returns nullopt (the caller exits 2).
std::optional<Config> LoadOrComplain();

// "--flag value" pairs; a bare argument is positional.
struct Flags {
  std::map<std::string, std::string> values;
  std::vector<std::string> positional;
};

// Unknown flags are refused with a line on stderr (nullopt). `switches` take no value.
std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<std::string>& known,
                                const std::vector<std::string>& switches = {});

}  // namespace webhookd::cmd
