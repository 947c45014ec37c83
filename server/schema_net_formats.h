#pragma once

// The network formats of JSON Schema draft 7 (and uuid), each a hand-written scanner:
// one pass over the text, no regular expression, so a check costs time linear in the
// text whatever it holds.

#include <string_view>

namespace webhookd::schema {

// RFC 1123 host name: dot-separated labels of letters, digits and hyphens, 1 to 63
// characters, neither first nor last a hyphen, 253 characters in all. A label with "--"
// in its third and fourth places must be an A-label ("xn--") that decodes as Punycode
// (RFC 3492) to no "--" there.
bool IsHostname(std::string_view text);

// Dotted decimal, four numbers of 0 to 255 without leading zeros.
bool IsIpv4(std::string_view text);

// RFC 4291's text forms: eight groups of 1 to 4 hex digits, or fewer with one "::", the
// last two optionally as an IPv4 address. No zone, no brackets, no prefix length.
bool IsIpv6(std::string_view text);

// RFC 5321's Mailbox: a dot-string or quoted-string local part of at most 64 octets, "@",
// and a host name or an address literal ([192.0.2.1], [IPv6:2001:db8::1]).
bool IsEmail(std::string_view text);

// RFC 3986: a URI (scheme required), or a URI-reference (a relative reference too). ASCII
// alone, every % followed by two hex digits.
bool IsUri(std::string_view text);
bool IsUriReference(std::string_view text);

// RFC 4122's string form: 8-4-4-4-12 hex digits, either case.
bool IsUuid(std::string_view text);

}  // namespace webhookd::schema
