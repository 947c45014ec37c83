#include "cmd/webhookd/cli.h"

#include <algorithm>
#include <cstdio>

#include "base/log.h"

namespace webhookd::cmd {

bool WantsHelp(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "webhookd: %s\n", message.c_str());
  return 2;
}

std::optional<Config> LoadOrComplain() {
  auto config = LoadConfig(ProcessEnv());
  if (!config) {
    std::fprintf(stderr, "webhookd: %s\n", config.error().message.c_str());
    return std::nullopt;
  }
  if (config->database_url.empty()) {
    std::fprintf(stderr,
                 "webhookd: DATABASE_URL: expected a PostgreSQL connection string, got nothing\n");
    return std::nullopt;
  }
  SetLogLevel(config->log_level);
  return *config;
}

std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<std::string>& known,
                                const std::vector<std::string>& switches) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!a.starts_with("--")) {
      flags.positional.push_back(a);
      continue;
    }
    if (std::find(switches.begin(), switches.end(), a) != switches.end()) {
      flags.values[a] = "true";
      continue;
    }
    if (std::find(known.begin(), known.end(), a) == known.end()) {
      Usage("unknown flag " + a + "; see --help");
      return std::nullopt;
    }
    if (i + 1 >= args.size()) {
      Usage(a + ": expected a value");
      return std::nullopt;
    }
    flags.values[a] = args[++i];
  }
  return flags;
}

}  // namespace webhookd::cmd
