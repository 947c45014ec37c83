// `webhookd destinations list|get|create|update|delete|recover|stats`: the destination
// routes of the REST API from the command line. Each goes through the API's own handler
// (server/destinations_api.cc) with the operator's scope, so every rule (the url and
// broker checks, the private-address rule, the carried credentials, sealing) has one home.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "cmd/webhookd/route_call.h"
#include "net/resolver.h"
#include "server/api.h"
#include "server/json_codec.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kDestinationsHelp = R"(Usage:
  webhookd destinations list [--tenant TENANT] [--limit N]
  webhookd destinations get ID
  webhookd destinations create JSON
  webhookd destinations update ID JSON
  webhookd destinations delete ID
  webhookd destinations recover ID --since T [--until T] [--wait]
  webhookd destinations stats ID [--since TIME] [--until TIME] [--step 1m|5m|1h|1d]

JSON is the body of POST /v1/destinations (create) or PATCH /v1/destinations/{id}
(update), as docs/api.md describes it; "-" reads it from stdin. A broker destination is
one whose url is amqp://, nats://, redis:// or kafka:// (docs/brokers.md):
  webhookd destinations create '{"url": "redis://redis.example:6379/0",
                                 "broker": {"stream": "webhooks"}}'
stats prints GET /v1/destinations/{id}/stats: the destination's outcomes and latency in
buckets of --step from --since (RFC 3339; default a day before --until) to --until
(default now), at most 1,000 buckets.
The API's answer is printed on stdout as JSON (create prints the signing secret once; a
credential shows as "set"). A refusal prints the API's problem on stderr and exits 1.

recover replays every dead letter of the destination dead-lettered from --since until
--until (default: now) and not replayed yet, at the destination's own pace, and prints the
recovery (GET /v1/recoveries/{id}; `webhookd recoveries get`). The running `webhookd
server` or `webhookd all` processes carry it out, a page at a time, and resume it after a
restart; --wait prints its progress on stderr every second and the recovery once done.
Times are RFC 3339, such as 2026-01-02T03:04:05Z.
Environment: DATABASE_URL, WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS,
WEBHOOKD_DESTINATION_MAX_IN_FLIGHT, WEBHOOKD_MAX_DESTINATIONS_PER_TENANT,
WEBHOOKD_ENCRYPTION_KEY.
)";

}  // namespace

int Destinations(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kDestinationsHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args.front();
  // How many positional arguments each subcommand takes: its id and/or body.
  size_t positional = 0;
  if (sub == "list") {
    positional = 0;
  } else if (sub == "get" || sub == "delete" || sub == "create" || sub == "recover" ||
             sub == "stats") {
    positional = 1;
  } else if (sub == "update") {
    positional = 2;
  } else {
    return Usage("destinations: unknown subcommand \"" + sub +
                 "\"; expected list, get, create, update, delete, recover or stats");
  }
  std::vector<std::string> known;
  if (sub == "list") known = {"--tenant", "--limit"};
  if (sub == "recover") known = {"--since", "--until"};
  if (sub == "stats") known = {"--since", "--until", "--step"};
  auto flags = ParseFlags(
      {args.begin() + 1, args.end()}, known,
      sub == "recover" ? std::vector<std::string>{"--wait"} : std::vector<std::string>{});
  if (!flags) return 2;
  if (flags->positional.size() != positional) {
    return Usage("destinations " + sub + ": expected " +
                 (sub == "create"   ? std::string("the JSON body")
                  : sub == "update" ? std::string("an id and the JSON body")
                  : sub == "list"   ? std::string("no positional arguments")
                                    : std::string("an id like dst_12")));
  }

  auto config = LoadOrComplain();
  if (!config) return 2;
  auto store = OpenStore(*config, StoreUse::kCommand);
  SystemResolver resolver;
  ApiOptions options;
  options.allow_private_destinations = config->allow_private_destinations;
  options.destination_max_in_flight = config->destination_max_in_flight;
  options.secret_grace = config->secret_grace;
  options.max_destinations_per_tenant = config->max_destinations_per_tenant;
  ApiStores stores{*store, *store, *store, *store, *store, *store, *store, *store, *store, *store};
  stores.recoveries = store.get();
  Api api(stores, resolver, options);

  ApiRequest req(Scope::All());
  if (sub == "list") {
    for (const auto& [flag, query] : {std::pair{"--tenant", "tenant_id"}, {"--limit", "limit"}}) {
      if (auto it = flags->values.find(flag); it != flags->values.end()) {
        req.query.emplace(query, it->second);
      }
    }
    return PrintReply(api.ListDestinations(req));
  }
  if (sub == "create") {
    req.body = BodyArgument(flags->positional[0]);
    return PrintReply(api.CreateDestination(req));
  }
  req.path_args = {flags->positional[0]};
  if (sub == "get") return PrintReply(api.GetDestination(req));
  if (sub == "recover") {
    if (!flags->values.contains("--since"))
      return Usage("destinations recover: --since is required");
    Json body = {{"since", flags->values["--since"]}};
    if (auto until = flags->values.find("--until"); until != flags->values.end()) {
      body["until"] = until->second;
    }
    req.body = body.dump();
    auto started = api.RecoverDestination(req);
    if (!started) return PrintReply(started);
    const auto id = Json::parse(started->body, nullptr, false);
    if (id.is_discarded() || !id.contains("id")) return PrintReply(started);
    return PrintRecovery(api, id["id"].get<std::string>(), flags->values.contains("--wait"));
  }
  if (sub == "stats") {
    for (const char* name : {"since", "until", "step"}) {
      if (auto it = flags->values.find(std::string("--") + name); it != flags->values.end()) {
        req.query.emplace(name, it->second);
      }
    }
    return PrintReply(api.GetDestinationStats(req));
  }
  if (sub == "delete") {
    const int code = PrintReply(api.DeleteDestination(req));
    if (code == 0) std::printf("deleted %s\n", flags->positional[0].c_str());
    return code;
  }
  req.body = BodyArgument(flags->positional[1]);
  return PrintReply(api.UpdateDestination(req));
}

}  // namespace webhookd::cmd
