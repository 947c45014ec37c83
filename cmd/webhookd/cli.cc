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

std::expected<Flags, std::string> ParseFlagList(const std::vector<std::string>& args,
                                                const FlagSpec& spec) {
  const auto listed = [](const std::vector<std::string>& list, const std::string& flag) {
    return std::find(list.begin(), list.end(), flag) != list.end();
  };
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    if (!flag.starts_with("--")) {
      if (!spec.positional) return std::unexpected("unexpected argument \"" + flag + "\"");
      flags.positional.push_back(flag);
      continue;
    }
    std::optional<std::string> value;
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    if (listed(spec.switches, flag)) {
      if (value) return std::unexpected(flag + ": takes no value");
      value = "true";
    } else if (!listed(spec.known, flag) && !listed(spec.repeatable, flag)) {
      return std::unexpected(flag + ": unknown flag");
    } else if (!value) {
      if (i + 1 == args.size()) return std::unexpected(flag + ": expected a value");
      value = args[++i];
    }
    if (listed(spec.repeatable, flag)) {
      flags.repeated[flag].push_back(*value);
    } else if (!flags.values.emplace(flag, *value).second) {
      return std::unexpected(flag + ": given more than once");
    }
  }
  return flags;
}

std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<std::string>& known,
                                const std::vector<std::string>& switches) {
  auto flags = ParseFlagList(args, FlagSpec{known, switches});
  if (!flags) {
    Usage(flags.error() + "; see --help");
    return std::nullopt;
  }
  return *flags;
}

}  // namespace webhookd::cmd
