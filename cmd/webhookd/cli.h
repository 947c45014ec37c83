#pragma once

#include <expected>
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
  std::map<std::string, std::vector<std::string>> repeated;  // FlagSpec::repeatable, in order
  std::vector<std::string> positional;
};

// What a command accepts: flags that take a value, switches that take none, and whether
// bare (positional) arguments are allowed.
struct FlagSpec {
  std::vector<std::string> known;
  std::vector<std::string> switches = {};
  bool positional = true;
  // Flags that take a value and may be given again (`send --subject`): Flags::repeated.
  std::vector<std::string> repeatable = {};
};

// The one flag parser of every command: "--flag value", "--flag=value" and switches. An
// unknown flag, a flag without its value, a flag given twice (unless repeatable), a switch
// given a value, or a bare argument where none is allowed is an error whose message starts
// with the flag (or with `unexpected argument "x"`).
std::expected<Flags, std::string> ParseFlagList(const std::vector<std::string>& args,
                                                const FlagSpec& spec);

// ParseFlagList, with an error printed as a usage line on stderr (then nullopt).
std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<std::string>& known,
                                const std::vector<std::string>& switches = {});

}  // namespace webhookd::cmd
