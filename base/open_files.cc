#include "base/open_files.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace webhookd {

Result<int64_t> RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return Fail(ErrorKind::kInternal, std::string("getrlimit: ") + std::strerror(errno));
  }
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      return Fail(ErrorKind::kInternal, std::string("setrlimit: ") + std::strerror(errno));
    }
    limit = raised;
  }
  if (limit.rlim_cur == RLIM_INFINITY) return INT64_MAX;
  return static_cast<int64_t>(limit.rlim_cur);
}

int ConnectionBudget(int64_t open_file_limit, int64_t reserve, int configured, int floor) {
  const int64_t left = open_file_limit - std::max<int64_t>(0, reserve);
  const int64_t budget = std::min<int64_t>(configured, left);
  return static_cast<int>(std::max<int64_t>(std::min(floor, configured), budget));
}

}  // namespace webhookd
