#include "server/client_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdio>

namespace webhookd {

std::string ClientOf(std::string_view address) {
  std::string text(address);
  std::array<unsigned char, 16> b{};
  if (text.find(':') == std::string::npos || inet_pton(AF_INET6, text.c_str(), b.data()) != 1) {
    return text;
  }
  const bool mapped =
      std::all_of(b.begin(), b.begin() + 10, [](unsigned char c) { return c == 0; }) &&
      b[10] == 0xff && b[11] == 0xff;
  char out[48];
  if (mapped) {
    std::snprintf(out, sizeof(out), "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
  } else {
    std::snprintf(out, sizeof(out), "%x:%x:%x:%x::/64", (b[0] << 8) | b[1], (b[2] << 8) | b[3],
                  (b[4] << 8) | b[5], (b[6] << 8) | b[7]);
  }
  return out;
}

}  // namespace webhookd
