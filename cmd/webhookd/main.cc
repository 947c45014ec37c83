// webhookd: parses the command and hands over to it.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "cmd/webhookd/commands.h"
#include "cmd/webhookd/send.h"

namespace {

constexpr const char* kUsage = R"(webhookd - durable webhook delivery

Usage: webhookd <command> [options]

Commands:
  migrate                 apply the database migrations (safe to run concurrently)
  server                  serve the REST API on WEBHOOKD_ADDR
  worker                  deliver webhooks (any number may run against one database)
  all                     server and one worker in one process
  keys create --role publisher|admin [--name N] [--ttl D]
  keys create --role tenant --tenant T [--name N] [--ttl D]
  keys list
  keys revoke ID
  dead-letters list [--destination ID] [--tenant T] [--since T] [--until T] [--reason R]
                    [--limit N]
  dead-letters replay (ID | --destination ID | --tenant T | --all)
                      [--since T] [--until T] [--reason R]
  destinations list [--tenant T] [--limit N] | get ID | create JSON | update ID JSON
               | delete ID | recover ID --since T [--until T] [--wait]
                          the destination routes of the API (broker destinations too),
                          and the replay of its dead letters of a time window
  recoveries get ID [--wait]
                          a recovery's progress
  sources list [--tenant T] [--limit N] | get ID | create JSON | rotate ID JSON
          | delete ID
                          the inbound source routes of the API
  feed read DESTINATION [--limit N] [--lease D] [--wait D] [--ack] | ack DESTINATION ID...
                          read a feed's messages (one JSON line each), ack them
  secrets status | reencrypt
                          count stored credentials by encryption key; encrypt them all
                          with WEBHOOKD_ENCRYPTION_KEY
  retention status        list the history's partitions: rows, size, when each goes
  send --type T [--data JSON] [--tenant T] | --batch F
                          publish events to the API with retries (WEBHOOKD_URL, WEBHOOKD_API_KEY)
  version                 print the version

Every command answers --help. Configuration comes from the environment (DATABASE_URL,
WEBHOOKD_ADDR, WEBHOOKD_RETRY_SCHEDULE, ...): see docs/configuration.md.
)";

}  // namespace

int main(int argc, char** argv) {
  // A peer that hangs up makes a write fail with EPIPE rather than end the process (the
  // broker connections also block it in their threads, for embedders and tests).
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "version" || command == "--version") {
    std::puts("webhookd " WEBHOOKD_VERSION);
    return 0;
  }
  if (command == "migrate") return webhookd::cmd::Migrate(args);
  if (command == "server") return webhookd::cmd::Serve(args, webhookd::cmd::Mode::kServer);
  if (command == "worker") return webhookd::cmd::Serve(args, webhookd::cmd::Mode::kWorker);
  if (command == "all") return webhookd::cmd::Serve(args, webhookd::cmd::Mode::kAll);
  if (command == "keys") return webhookd::cmd::Keys(args);
  if (command == "dead-letters") return webhookd::cmd::DeadLetters(args);
  if (command == "destinations") return webhookd::cmd::Destinations(args);
  if (command == "sources") return webhookd::cmd::Sources(args);
  if (command == "recoveries") return webhookd::cmd::Recoveries(args);
  if (command == "feed") return webhookd::cmd::Feed(args);
  if (command == "secrets") return webhookd::cmd::Secrets(args);
  if (command == "retention") return webhookd::cmd::Retention(args);
  if (command == "send") return webhookd::cmd::RunSend(args);
  std::fprintf(stderr, "webhookd: unknown command \"%s\"; see webhookd --help\n", command.c_str());
  return 2;
}
