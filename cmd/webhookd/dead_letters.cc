// `webhookd dead-letters list|replay`.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "core/ids.h"
#include "core/validation.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kDeadLettersHelp = R"(Usage:
  webhookd dead-letters list [--destination ID] [--tenant TENANT] [--since T] [--until T]
                             [--reason R] [--limit N]
  webhookd dead-letters replay ID
  webhookd dead-letters replay --destination ID [--tenant TENANT] [--since T] [--until T]
                               [--reason R]
  webhookd dead-letters replay --tenant TENANT [--since T] [--until T] [--reason R]
  webhookd dead-letters replay --all [--since T] [--until T] [--reason R]

T is an RFC 3339 time (2026-01-02T03:04:05Z); R is exhausted or permanent_failure;
--tenant keeps the dead letters of that tenant alone.
A replayed delivery is due at once with a fresh cycle of the retry schedule.
Environment: DATABASE_URL.
)";

}  // namespace

int DeadLetters(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kDeadLettersHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args.front();
  if (sub != "list" && sub != "replay") {
    return Usage("dead-letters: unknown subcommand \"" + sub + "\"; expected list or replay");
  }
  auto flags = ParseFlags(
      {args.begin() + 1, args.end()},
      {"--destination", "--tenant", "--since", "--until", "--reason", "--limit"}, {"--all"});
  if (!flags) return 2;
  DeadLetterFilter filter;
  if (auto it = flags->values.find("--destination"); it != flags->values.end()) {
    filter.destination_id = ParseId(kDestinationPrefix, it->second);
    if (!filter.destination_id)
      return Usage("--destination: expected an id like dst_12, got \"" + it->second + "\"");
  }
  if (auto it = flags->values.find("--tenant"); it != flags->values.end()) {
    if (!IsValidTenantId(it->second)) {
      return Usage(std::string("--tenant: ") + kTenantIdRule + ", got \"" + it->second + "\"");
    }
    filter.tenant_id = it->second;
  }
  for (const char* name : {"--since", "--until"}) {
    if (auto it = flags->values.find(name); it != flags->values.end()) {
      auto t = ParseRfc3339(it->second);
      if (!t)
        return Usage(std::string(name) + ": expected an RFC 3339 time, got \"" + it->second + "\"");
      (std::string_view(name) == "--since" ? filter.since : filter.until) = *t;
    }
  }
  if (auto it = flags->values.find("--reason"); it != flags->values.end()) {
    filter.reason = ParseDeadLetterReason(it->second);
    if (!filter.reason) return Usage("--reason: expected exhausted or permanent_failure");
  }
  Page page;
  page.limit = 100;
  if (auto it = flags->values.find("--limit"); it != flags->values.end()) {
    try {
      page.limit = std::stoi(it->second);
    } catch (const std::exception&) {
      page.limit = 0;
    }
    if (page.limit < 1 || page.limit > 1000) return Usage("--limit: expected 1 to 1000");
  }
  std::optional<int64_t> single;
  if (sub == "replay") {
    if (flags->positional.size() == 1) {
      single = ParseId(kDeadLetterPrefix, flags->positional[0]);
      if (!single)
        return Usage("dead-letters replay: expected an id like dlq_7, got \"" +
                     flags->positional[0] + "\"");
      if (filter.destination_id || filter.tenant_id || filter.since || filter.until ||
          filter.reason) {
        return Usage("dead-letters replay: give an id or filters, not both");
      }
    } else if (!flags->positional.empty()) {
      return Usage("dead-letters replay: expected at most one id");
    } else if (!filter.destination_id && !filter.tenant_id && !flags->values.count("--all")) {
      // A bare bulk replay is a big hammer: make the operator say so.
      return Usage("dead-letters replay: give an id, --destination ID, --tenant TENANT or --all");
    }
  } else if (!flags->positional.empty()) {
    return Usage("dead-letters list takes no positional arguments");
  }

  auto config = LoadOrComplain();
  if (!config) return 2;
  auto store_owner = OpenStore(*config, StoreUse::kCommand);
  DeadLetterStore& store = *store_owner;
  if (sub == "list") {
    auto listing = store.ListDeadLetters(filter, page, Scope::All());
    if (!listing) {
      std::fprintf(stderr, "webhookd: %s\n", listing.error().message.c_str());
      return 1;
    }
    std::printf("%-12s %-12s %-12s %-12s %-20s %-18s %-8s %-6s %-28s %s\n", "ID", "DELIVERY",
                "EVENT", "DESTINATION", "TENANT", "REASON", "ATTEMPTS", "CODE", "DEAD-LETTERED",
                "REPLAYED");
    for (const auto& d : listing->items) {
      std::printf("%-12s %-12s %-12s %-12s %-20s %-18s %-8d %-6s %-28s %s\n",
                  FormatId(kDeadLetterPrefix, d.id).c_str(),
                  FormatId(kDeliveryPrefix, d.delivery_id).c_str(),
                  FormatId(kEventPrefix, d.event_id).c_str(),
                  FormatId(kDestinationPrefix, d.destination_id).c_str(),
                  d.tenant_id ? d.tenant_id->c_str() : "-",
                  std::string(DeadLetterReasonName(d.reason)).c_str(), d.attempt_count,
                  d.last_status_code ? std::to_string(*d.last_status_code).c_str() : "-",
                  FormatRfc3339(d.dead_lettered_at).c_str(),
                  d.replayed_at ? FormatRfc3339(*d.replayed_at).c_str() : "-");
    }
    if (listing->next_before_id) {
      std::printf("(more: showing the newest %d)\n", page.limit);
    }
    return 0;
  }
  if (single) {
    auto delivery = store.ReplayDeadLetter(*single, Scope::All());
    if (!delivery) {
      std::fprintf(stderr, "webhookd: %s\n", delivery.error().message.c_str());
      return 1;
    }
    std::printf("replayed %s: delivery %s is pending again\n", flags->positional[0].c_str(),
                FormatId(kDeliveryPrefix, *delivery).c_str());
    return 0;
  }
  // The operator's command replays every match; the API bounds each request.
  auto count = store.ReplayDeadLetters(filter, Scope::All(), std::nullopt);
  if (!count) {
    std::fprintf(stderr, "webhookd: %s\n", count.error().message.c_str());
    return 1;
  }
  std::printf("replayed %lld dead letters\n", static_cast<long long>(count->replayed));
  return 0;
}

}  // namespace webhookd::cmd
