// `webhookd retention status`.
#include <cstdio>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kRetentionHelp = R"(Usage:
  webhookd retention status
      lists each partition of the history: its day (UTC) or "kept" (events carried past
      their day because their deliveries were unfinished, with everything about them), its
      table, its rows (PostgreSQL's running estimate), its size with indexes, and when
      retention drops it ("never" under WEBHOOKD_RETENTION=0; a kept row goes once its
      event's deliveries have finished and it is older than WEBHOOKD_RETENTION)
Environment: DATABASE_URL, WEBHOOKD_RETENTION. See docs/retention.md.
)";

std::string Size(int64_t bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%.0f %s", value, units[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  }
  return text;
}

}  // namespace

int Retention(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kRetentionHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args.front() != "status") {
    return Usage("retention: unknown subcommand \"" + args.front() + "\"; expected status");
  }
  if (args.size() > 1) return Usage("retention status takes no arguments");
  auto config = LoadOrComplain();
  if (!config) return 2;
  auto store = OpenStore(*config, StoreUse::kCommand);
  auto partitions = store->ListHistoryPartitions(config->retention);
  if (!partitions) {
    std::fprintf(stderr, "webhookd: %s\n", partitions.error().message.c_str());
    return 1;
  }
  std::printf("%-10s  %-14s  %12s  %10s  %s\n", "day", "table", "rows", "size", "goes");
  for (const HistoryPartition& p : *partitions) {
    std::string goes;
    if (!p.day) {
      goes = "once finished";
    } else if (p.dropping) {
      goes = "being dropped";
    } else if (p.goes_at) {
      goes = FormatRfc3339(*p.goes_at);
    } else {
      goes = "never";
    }
    std::printf("%-10s  %-14s  %12lld  %10s  %s\n", p.day ? p.day->c_str() : "kept",
                p.table.c_str(), static_cast<long long>(p.rows), Size(p.bytes).c_str(),
                goes.c_str());
  }
  return 0;
}

}  // namespace webhookd::cmd
