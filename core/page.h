#pragma once

// Paging of the newest-first lists.

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

}  // namespace webhookd
