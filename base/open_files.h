#pragma once

#include <cstdint>

#include "base/result.h"

namespace webhookd {

// Raises the process's soft open-file limit (RLIMIT_NOFILE) to its hard limit, so that
// idle connections are bounded by webhookd's own limits rather than by a default of
// 1,024. Returns the soft limit in force afterwards.
Result<int64_t> RaiseOpenFileLimit();

// How many client connections a listener may hold: the open-file limit less `reserve`
// (the descriptors kept for the database, deliveries, name lookups and the process's
// own files), at most `configured` and at least `floor`, so a low limit still serves.
int ConnectionBudget(int64_t open_file_limit, int64_t reserve, int configured, int floor = 64);

}  // namespace webhookd
