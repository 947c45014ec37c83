#pragma once

#include <string>

#include "base/result.h"
#include "server/problem.h"

namespace webhookd {
class Api;
}

namespace webhookd::cmd {

// What the commands that run the API's own routes (destinations, sources) share.

// A JSON body argument: the text itself, or stdin for "-".
std::string BodyArgument(const std::string& arg);

// Prints the route's answer on stdout, or its problem on stderr; returns the exit code
// (0, or 1 for a refusal).
int PrintReply(const Result<Reply>& reply);

// Prints recovery `id` (rec_...) as PrintReply does; with `wait`, once it is done, with a line
// of progress on stderr each second until then (cmd/webhookd/recoveries.cc).
int PrintRecovery(Api& api, const std::string& id, bool wait);

}  // namespace webhookd::cmd
