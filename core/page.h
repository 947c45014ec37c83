#pragma once

// Paging of the lists: newest first, and a delivery's attempts oldest first.

#include <cstdint>
#include <optional>
#include <vector>

namespace webhookd {

// Newest first: a page holds ids below `before_id` (the cursor).
struct Page {
  int limit = 50;
  std::optional<int64_t> before_id;
};

template <typename T>
struct Listing {
  std::vector<T> items;
  std::optional<int64_t> next_before_id;  // nullopt: this was the last page
};

// A delivery's attempts, oldest first: a page holds attempt numbers above `after`. The
// default page is the API's largest, so "every attempt" is one page for any delivery a
// retry schedule and a few replays make, and a bounded one beyond that.
struct AttemptPage {
  int limit = 1000;
  int after = 0;
};

}  // namespace webhookd
