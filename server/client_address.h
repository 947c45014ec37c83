#pragma once

#include <string>
#include <string_view>

namespace webhookd {

// The client a remote address is counted as, by the connection cap and the failed-
// authentication limit: an IPv4 address is itself, an IPv4-mapped IPv6 address is its
// IPv4 address, and any other IPv6 address is its /64 ("2001:db8:1:2::/64"), because one
// host is commonly handed a whole /64 and could otherwise walk around a per-address
// limit. Text that is no address is itself.
std::string ClientOf(std::string_view address);

}  // namespace webhookd
