// `webhookd feed read|ack`: a feed's messages from the command line (docs/feeds.md). Each
// goes through the API's own handler (server/feeds_api.cc) with the operator's scope, so
// every rule has one home.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "cmd/webhookd/route_call.h"
#include "net/resolver.h"
#include "server/api.h"
#include "server/feed_waiters.h"

namespace webhookd::cmd {
namespace {

using Json = nlohmann::json;

constexpr const char* kFeedHelp = R"(Usage:
  webhookd feed read DESTINATION [--limit N] [--lease D] [--wait D] [--ack]
  webhookd feed ack DESTINATION ID...

read leases up to --limit (1-1000, default 100) of the feed's waiting messages for
--lease (1s-12h, default 30s) and prints each as one JSON line on stdout: {"id",
"delivery_id", "event_id", "type", "timestamp", "attempt", "body", "headers"}. With
--wait (0-30 s, as 10 or 10s) and nothing waiting, it waits until a message arrives or
the wait ends (then it prints nothing). With --ack it acks what it printed, and prints
the ack's answer on stderr.
ack acks the messages named by their ids (each message's "id") and prints the API's
answer, {"acked": n, "expired": [ids]}: an id whose lease had ended is listed under
expired and not acked.
DESTINATION is a feed's id (dst_..., a destination whose url is feed:). A refusal prints
the API's problem on stderr and exits 1.
Environment: DATABASE_URL, WEBHOOKD_RETRY_SCHEDULE, WEBHOOKD_ENCRYPTION_KEY.
)";

// A read with a wait, as the listener runs it: taken by ReadFeedLater and answered from
// the waiters' thread, or handed back to be read again after a wake-up. The answer's state
// is shared: a late answer (at the waiters' stop) finds it alive.
Result<Reply> ReadWaiting(Api& api, ApiRequest& req) {
  struct Answered {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<std::optional<Result<Reply>>> got;
  };
  for (int round = 0; round < 10000; ++round) {
    auto state = std::make_shared<Answered>();
    const bool taken = api.ReadFeedLater(req, [state](std::optional<Result<Reply>> reply) {
      std::lock_guard lock(state->mu);
      state->got.emplace(std::move(reply));
      state->cv.notify_all();
    });
    if (!taken) return api.ReadFeed(req);
    std::unique_lock lock(state->mu);
    // The wait ends within 30 s of the request; a margin over that.
    if (!state->cv.wait_for(lock, std::chrono::seconds(40),
                            [&] { return state->got.has_value(); })) {
      return Fail(ErrorKind::kUnavailable, "the read was not answered");
    }
    if (*state->got) return std::move(**state->got);
  }
  return api.ReadFeed(req);
}

}  // namespace

int Feed(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kFeedHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args.front();
  if (sub != "read" && sub != "ack") {
    return Usage("feed: unknown subcommand \"" + sub + "\"; expected read or ack");
  }
  const bool read = sub == "read";
  auto flags =
      read ? ParseFlags({args.begin() + 1, args.end()}, {"--limit", "--lease", "--wait"}, {"--ack"})
           : ParseFlags({args.begin() + 1, args.end()}, {});
  if (!flags) return 2;
  if (read ? flags->positional.size() != 1 : flags->positional.size() < 2) {
    return Usage(read ? "feed read: expected a destination id like dst_12"
                      : "feed ack: expected a destination id and one or more message ids");
  }

  auto config = LoadOrComplain();
  if (!config) return 2;
  auto store = OpenStore(*config, StoreUse::kCommand);
  SystemResolver resolver;
  ApiOptions options;
  options.retry_schedule = config->retry_schedule;
  options.retry_jitter = config->retry_jitter;
  // A read that waits is woken as the API's are: a listener of its own, made only then.
  std::optional<FeedWaiters> waiters;
  if (read && flags->values.contains("--wait")) {
    waiters.emplace([&store] { return store->Listen(); },
                    [&store](std::span<const int64_t> feeds) { return store->ReadyFeeds(feeds); });
    waiters->Start();
    options.feed_waiters = &*waiters;
  }
  Api api(ApiStores{*store, *store, *store, *store, *store, *store, *store, *store, *store, *store,
                    store.get()},
          resolver, options);

  ApiRequest req(Scope::All());
  req.path_args = {flags->positional[0]};
  if (!read) {
    Json body = {
        {"ids", std::vector<std::string>(flags->positional.begin() + 1, flags->positional.end())}};
    req.body = body.dump();
    return PrintReply(api.AckFeed(req));
  }
  for (const auto& [flag, query] :
       {std::pair{"--limit", "limit"}, {"--lease", "lease"}, {"--wait", "wait"}}) {
    if (auto it = flags->values.find(flag); it != flags->values.end()) {
      req.query.emplace(query, it->second);
    }
  }
  req.arrived = std::chrono::steady_clock::now();
  Result<Reply> reply = waiters ? ReadWaiting(api, req) : api.ReadFeed(req);
  if (!reply) return PrintReply(reply);
  const Json answer = Json::parse(reply->body, nullptr, false);
  std::vector<std::string> ids;
  for (const Json& m : answer.value("data", Json::array())) {
    std::printf("%s\n", m.dump().c_str());
    ids.push_back(m.value("id", ""));
  }
  std::fflush(stdout);
  if (!flags->values.contains("--ack") || ids.empty()) return 0;
  ApiRequest ack(Scope::All());
  ack.path_args = req.path_args;
  ack.body = Json({{"ids", ids}}).dump();
  Result<Reply> acked = api.AckFeed(ack);
  if (!acked) return PrintReply(acked);
  std::fprintf(stderr, "%s\n", acked->body.c_str());
  return 0;
}

}  // namespace webhookd::cmd
