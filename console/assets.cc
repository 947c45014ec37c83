#include "console/assets.h"

#include <algorithm>

namespace webhookd {

const Asset* FindUiAsset(std::string_view path) {
  const std::span<const Asset> assets = UiAssets();
  const auto it = std::lower_bound(assets.begin(), assets.end(), path,
                                   [](const Asset& a, std::string_view p) { return a.path < p; });
  if (it == assets.end() || it->path != path) return nullptr;
  return &*it;
}

}  // namespace webhookd
