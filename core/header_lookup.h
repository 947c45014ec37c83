#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace webhookd {

// A request's headers as received, looked up by name ASCII case-insensitively. A name
// sent several times keeps every value in order, so a caller can tell one from many.
class HeaderLookup {
 public:
  HeaderLookup() = default;
  HeaderLookup(std::initializer_list<std::pair<std::string, std::string>> headers)
      : headers_(headers) {}

  void Add(std::string name, std::string value) {
    headers_.emplace_back(std::move(name), std::move(value));
  }

  // Every value of `name`, in the order received; empty when it was not sent.
  std::vector<std::string_view> Values(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> headers_;
};

}  // namespace webhookd
