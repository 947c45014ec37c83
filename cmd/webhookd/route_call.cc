#include "cmd/webhookd/route_call.h"

#include <cstdio>
#include <iostream>
#include <iterator>

namespace webhookd::cmd {

std::string BodyArgument(const std::string& arg) {
  if (arg != "-") return arg;
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

int PrintReply(const Result<Reply>& reply) {
  if (!reply) {
    const Reply problem = ProblemReply(reply.error());
    std::fprintf(stderr, "%s\n", problem.body.c_str());
    return 1;
  }
  if (!reply->body.empty()) std::printf("%s\n", reply->body.c_str());
  return 0;
}

}  // namespace webhookd::cmd
