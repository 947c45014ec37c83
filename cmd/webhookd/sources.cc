// `webhookd sources list|get|create|rotate|delete`: the inbound source routes of the REST
// API from the command line (docs/inbound.md). Each goes through the API's own handler
// (server/sources_api.cc) with the operator's scope, so every rule has one home.
#include <cstdio>
#include <string>
#include <vector>

#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "cmd/webhookd/route_call.h"
#include "net/resolver.h"
#include "server/api.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kSourcesHelp = R"(Usage:
  webhookd sources list [--tenant TENANT] [--limit N]
  webhookd sources get ID
  webhookd sources create JSON
  webhookd sources rotate ID JSON
  webhookd sources delete ID

JSON is the body of POST /v1/sources (create) or POST /v1/sources/{id}/secret/rotate
(rotate: {"secret", "grace_period"?}), as docs/inbound.md describes it; "-" reads it
from stdin, which keeps a secret off the command line:
  webhookd sources create '{"provider": "github", "secret": "…", "tenant_id": "acme"}'
The API's answer is printed on stdout as JSON (a secret shows as "set"; ingest_url is
the address to give the provider). A refusal prints the API's problem on stderr and
exits 1.
Environment: DATABASE_URL, WEBHOOKD_PUBLIC_URL, WEBHOOKD_SECRET_GRACE,
WEBHOOKD_ENCRYPTION_KEY.
)";

}  // namespace

int Sources(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kSourcesHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args.front();
  size_t positional = 0;  // its id and/or body
  if (sub == "list") {
    positional = 0;
  } else if (sub == "get" || sub == "delete" || sub == "create") {
    positional = 1;
  } else if (sub == "rotate") {
    positional = 2;
  } else {
    return Usage("sources: unknown subcommand \"" + sub +
                 "\"; expected list, get, create, rotate or delete");
  }
  auto flags = ParseFlags(
      {args.begin() + 1, args.end()},
      sub == "list" ? std::vector<std::string>{"--tenant", "--limit"} : std::vector<std::string>{});
  if (!flags) return 2;
  if (flags->positional.size() != positional) {
    return Usage("sources " + sub + ": expected " +
                 (sub == "create"   ? std::string("the JSON body")
                  : sub == "rotate" ? std::string("an id and the JSON body")
                  : sub == "list"   ? std::string("no positional arguments")
                                    : std::string("an id like src_12")));
  }

  auto config = LoadOrComplain();
  if (!config) return 2;
  auto store = OpenStore(*config, StoreUse::kCommand);
  SystemResolver resolver;
  ApiOptions options;
  options.secret_grace = config->secret_grace;
  options.public_url = config->public_url;
  Api api(ApiStores{*store, *store, *store, *store, *store, *store, *store, *store, *store, *store,
                    store.get()},
          resolver, options);

  ApiRequest req(Scope::All());
  if (sub == "list") {
    for (const auto& [flag, query] : {std::pair{"--tenant", "tenant_id"}, {"--limit", "limit"}}) {
      if (auto it = flags->values.find(flag); it != flags->values.end()) {
        req.query.emplace(query, it->second);
      }
    }
    return PrintReply(api.ListSources(req));
  }
  if (sub == "create") {
    req.body = BodyArgument(flags->positional[0]);
    return PrintReply(api.CreateSource(req));
  }
  req.path_args = {flags->positional[0]};
  if (sub == "get") return PrintReply(api.GetSource(req));
  if (sub == "delete") {
    const int code = PrintReply(api.DeleteSource(req));
    if (code == 0) std::printf("deleted %s\n", flags->positional[0].c_str());
    return code;
  }
  req.body = BodyArgument(flags->positional[1]);
  return PrintReply(api.RotateSourceSecret(req));
}

}  // namespace webhookd::cmd
