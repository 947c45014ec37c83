#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace webhookd::cmd {

// `webhookd send ARGS`: publishes one event, or a file of them, and returns the exit
// status (0 all accepted, 1 some refused, 3 some gave up, 2 bad usage). Reads
// WEBHOOKD_URL and WEBHOOKD_API_KEY from the process environment, the payload from stdin
// when no other source is given, and writes to stdout and stderr.
int RunSend(const std::vector<std::string>& args);

// The same with the environment and the streams supplied.
int RunSend(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace webhookd::cmd
