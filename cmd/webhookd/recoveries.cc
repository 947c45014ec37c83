// `webhookd recoveries get ID [--wait]` and what `webhookd destinations recover` shares with
// it: a recovery read through the API's own handler (server/recoveries_api.cc). The
// recovery itself is carried out by the running server processes (`server`, `all`), not by
// the command.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "cmd/webhookd/route_call.h"
#include "net/resolver.h"
#include "server/api.h"
#include "server/json_codec.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kRecoveriesHelp = R"(Usage:
  webhookd recoveries get ID [--wait]

Prints the recovery ID (rec_...) as GET /v1/recoveries/{id} answers it: its status
(running or done), how many dead letters it replayed, its window and its times. With
--wait it reads it again every second until it is done (a recovery is carried out by the
running `webhookd server` or `webhookd all` processes), then prints it. A refusal prints
the API's problem on stderr and exits 1.
Environment: DATABASE_URL.
)";

}  // namespace

int PrintRecovery(Api& api, const std::string& id, bool wait) {
  ApiRequest req(Scope::All());
  req.path_args = {id};
  for (;;) {
    auto reply = api.GetRecovery(req);
    if (!reply || !wait) return PrintReply(reply);
    const auto body = Json::parse(reply->body, nullptr, false);
    if (body.is_discarded() || body.value("status", "") != "running") return PrintReply(reply);
    std::fprintf(stderr, "%s: running, %lld replayed\n", id.c_str(),
                 static_cast<long long>(body.value("replayed", int64_t{0})));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

int Recoveries(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kRecoveriesHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args.front() != "get") {
    return Usage("recoveries: unknown subcommand \"" + args.front() + "\"; expected get");
  }
  auto flags = ParseFlags({args.begin() + 1, args.end()}, {}, {"--wait"});
  if (!flags) return 2;
  if (flags->positional.size() != 1) return Usage("recoveries get: expected an id like rec_12");
  auto config = LoadOrComplain();
  if (!config) return 2;
  auto store = OpenStore(*config, StoreUse::kCommand);
  SystemResolver resolver;
  ApiStores stores{*store, *store, *store, *store, *store, *store, *store, *store, *store, *store};
  stores.recoveries = store.get();
  Api api(stores, resolver, ApiOptions{});
  return PrintRecovery(api, flags->positional[0], flags->values.contains("--wait"));
}

}  // namespace webhookd::cmd
