// The formats webhookd checks, each by a hand-written scanner: the JSON Schema Test
// Suite's draft-7 cases for them (tests/draft7/optional/format), then cases of our own.
#include "server/schema_formats.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace webhookd::schema::schema_formats_test {
namespace {

using namespace std::string_view_literals;

struct Case {
  Format format;
  std::string_view text;
  bool valid;
};

// Left out: the suite's IDNA2008 cases for A-labels that are valid Punycode but whose
// Unicode breaks a contextual rule (a combining mark first, a middle dot without 'l's, a
// joiner without a virama, mixed Arabic-Indic digits...). Checking those needs Unicode's
// tables; webhookd checks an A-label's Punycode alone (docs/catalog.md).
constexpr Case kSuite[] = {
    // a valid e-mail address
    {Format::kEmail, "joe.bloggs@example.com"sv, true},
    // an invalid e-mail address
    {Format::kEmail, "2962"sv, false},
    // tilde in local part is valid
    {Format::kEmail, "te~st@example.com"sv, true},
    // tilde before local part is valid
    {Format::kEmail, "~test@example.com"sv, true},
    // tilde after local part is valid
    {Format::kEmail, "test~@example.com"sv, true},
    // dot before local part is not valid
    {Format::kEmail, ".test@example.com"sv, false},
    // dot after local part is not valid
    {Format::kEmail, "test.@example.com"sv, false},
    // two separated dots inside local part are valid
    {Format::kEmail, "te.s.t@example.com"sv, true},
    // two subsequent dots inside local part are not valid
    {Format::kEmail, "te..st@example.com"sv, false},
    // two email addresses is not valid
    {Format::kEmail, "user1@oceania.org, user2@oceania.org"sv, false},
    // full "From" header is invalid
    {Format::kEmail, "\"Winston Smith\" <winston.smith@recdep.minitrue> (Records Department)"sv,
     false},
    // local part is required
    {Format::kEmail, "@example.com"sv, false},
    // domain is required
    {Format::kEmail, "joe.bloggs@"sv, false},
    // unquoted space in local part is invalid
    {Format::kEmail, "joe bloggs@example.com"sv, false},
    // a valid host name
    {Format::kHostname, "www.example.com"sv, true},
    // single label
    {Format::kHostname, "hostname"sv, true},
    // single label with digits
    {Format::kHostname, "h0stn4me"sv, true},
    // single label starting with digit
    {Format::kHostname, "1host"sv, true},
    // single label ending with digit
    {Format::kHostname, "hostnam3"sv, true},
    // empty string
    {Format::kHostname, ""sv, false},
    // single dot
    {Format::kHostname, "."sv, false},
    // leading dot
    {Format::kHostname, ".example"sv, false},
    // trailing dot
    {Format::kHostname, "example."sv, false},
    // IDN label separator
    {Format::kHostname, "example\357\274\216com"sv, false},
    // single label with hyphen
    {Format::kHostname, "host-name"sv, true},
    // starts with hyphen
    {Format::kHostname, "-hostname"sv, false},
    // ends with hyphen
    {Format::kHostname, "hostname-"sv, false},
    // contains underscore
    {Format::kHostname, "host_name"sv, false},
    // exceeds maximum overall length (256)
    {Format::kHostname,
     "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.com"sv,
     false},
    // maximum label length (63)
    {Format::kHostname, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.com"sv,
     true},
    // exceeds maximum label length (63)
    {Format::kHostname, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl.com"sv,
     false},
    // trailing newline is invalid
    {Format::kHostname, "example.com\012"sv, false},
    // invalid non-ASCII KELVIN SIGN (U+212A)
    {Format::kHostname, "\342\204\252elvin.example.com"sv, false},
    // consecutive hyphens inside a label
    {Format::kHostname, "a--b.com"sv, true},
    // invalid Punycode
    {Format::kHostname, "xn--X"sv, false},
    // a valid host name (example.test in Hangul)
    {Format::kHostname, "xn--9n2bp8q.xn--9t4b11yi5a"sv, true},
    // Exceptions that are PVALID, left-to-right chars
    {Format::kHostname, "xn--zca29lwxobi7a"sv, true},
    // Exceptions that are PVALID, right-to-left chars
    {Format::kHostname, "xn--qmbc"sv, true},
    // MIDDLE DOT with surrounding 'l's
    {Format::kHostname, "xn--ll-0ea"sv, true},
    // Greek KERAIA followed by Greek
    {Format::kHostname, "xn--wva3je"sv, true},
    // Hebrew GERESH preceded by Hebrew
    {Format::kHostname, "xn--4dbc5h"sv, true},
    // Hebrew GERSHAYIM preceded by Hebrew
    {Format::kHostname, "xn--4dbc8h"sv, true},
    // KATAKANA MIDDLE DOT with Hiragana
    {Format::kHostname, "xn--k8j5u"sv, true},
    // KATAKANA MIDDLE DOT with Katakana
    {Format::kHostname, "xn--bck0j"sv, true},
    // KATAKANA MIDDLE DOT with Han
    {Format::kHostname, "xn--vek778f"sv, true},
    // Arabic-Indic digits not mixed with Extended Arabic-Indic digits
    {Format::kHostname, "xn--ngba1o"sv, true},
    // Extended Arabic-Indic digits not mixed with Arabic-Indic digits
    {Format::kHostname, "xn--0-gyc"sv, true},
    // ZERO WIDTH JOINER preceded by Virama
    {Format::kHostname, "xn--11b2ezcw70k"sv, true},
    // ZERO WIDTH NON-JOINER preceded by Virama
    {Format::kHostname, "xn--11b2ezcs70k"sv, true},
    // ZERO WIDTH NON-JOINER not preceded by Virama but matches regexp
    {Format::kHostname, "xn--ngba5hb2804a"sv, true},
    // contains "--" in the 3rd and 4th position
    {Format::kHostname, "XN--aa---o47jg78q"sv, false},
    // a valid IP address
    {Format::kIpv4, "192.168.0.1"sv, true},
    // an IP address with too many components
    {Format::kIpv4, "127.0.0.0.1"sv, false},
    // an IP address with out-of-range values
    {Format::kIpv4, "256.256.256.256"sv, false},
    // an IP address without 4 components
    {Format::kIpv4, "127.0"sv, false},
    // a 2-part address resolving to a routable IP (inet_aton shorthand)
    {Format::kIpv4, "127.1"sv, false},
    // a 3-part address resolving to a routable IP (inet_aton shorthand)
    {Format::kIpv4, "127.0.1"sv, false},
    // an IP address as an integer
    {Format::kIpv4, "0x7f000001"sv, false},
    // an IP address as an integer (decimal)
    {Format::kIpv4, "2130706433"sv, false},
    // invalid non-ASCII '২' (a Bengali 2)
    {Format::kIpv4, "1\340\247\2507.0.0.1"sv, false},
    // invalid fullwidth digits (non-ASCII)
    {Format::kIpv4,
     "\357\274\221\357\274\231\357\274\222.\357\274\221\357\274\226\357\274\230.\357\274\221.\357\274\221"sv,
     false},
    // invalid mathematical bold digits (non-ASCII)
    {Format::kIpv4,
     "\360\235\237\217\360\235\237\227\360\235\237\220.\360\235\237\217\360\235\237\224\360\235\237\226.\360\235\237\217.\360\235\237\217"sv,
     false},
    // netmask is not a part of ipv4 address
    {Format::kIpv4, "192.168.1.0/24"sv, false},
    // leading whitespace is invalid
    {Format::kIpv4, " 192.168.0.1"sv, false},
    // trailing whitespace is invalid
    {Format::kIpv4, "192.168.0.1 "sv, false},
    // trailing newline is invalid
    {Format::kIpv4, "192.168.0.1\012"sv, false},
    // hexadecimal notation is invalid
    {Format::kIpv4, "0x7f.0.0.1"sv, false},
    // octal notation explicit is invalid
    {Format::kIpv4, "0o10.0.0.1"sv, false},
    // empty part (double dot) is invalid
    {Format::kIpv4, "192.168..1"sv, false},
    // leading dot is invalid
    {Format::kIpv4, ".192.168.0.1"sv, false},
    // trailing dot is invalid
    {Format::kIpv4, "192.168.0.1."sv, false},
    // minimum valid IPv4 address
    {Format::kIpv4, "0.0.0.0"sv, true},
    // maximum valid IPv4 address
    {Format::kIpv4, "255.255.255.255"sv, true},
    // valid IPv4 with an octet in the 200 to 249 range
    {Format::kIpv4, "200.0.0.0"sv, true},
    // valid IPv4 with two-digit octets
    {Format::kIpv4, "10.20.30.40"sv, true},
    // empty string is invalid
    {Format::kIpv4, ""sv, false},
    // plus sign is invalid
    {Format::kIpv4, "+1.2.3.4"sv, false},
    // negative sign is invalid
    {Format::kIpv4, "-1.2.3.4"sv, false},
    // exponential notation is invalid
    {Format::kIpv4, "1e2.0.0.1"sv, false},
    // alpha characters are invalid
    {Format::kIpv4, "192.168.a.1"sv, false},
    // internal whitespace is invalid
    {Format::kIpv4, "192. 168.0.1"sv, false},
    // tab character is invalid
    {Format::kIpv4, "192.168.0.1\011"sv, false},
    // additional content after an embedded NUL byte
    {Format::kIpv4, "192.168.0.1\000.evil.com"sv, false},
    // with port number is invalid
    {Format::kIpv4, "192.168.0.1:80"sv, false},
    // an IPv4-mapped IPv6 address is invalid
    {Format::kIpv4, "::ffff:192.168.0.1"sv, false},
    // single octet out of range in last position
    {Format::kIpv4, "192.168.0.256"sv, false},
    // a valid IPv6 address
    {Format::kIpv6, "::1"sv, true},
    // a group with 5 hex digits is invalid
    {Format::kIpv6, "12345::"sv, false},
    // trailing 4 hex symbols is valid
    {Format::kIpv6, "::abef"sv, true},
    // trailing 5 hex symbols is invalid
    {Format::kIpv6, "::abcef"sv, false},
    // an IPv6 address with too many components
    {Format::kIpv6, "1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1"sv, false},
    // an IPv6 address containing illegal characters
    {Format::kIpv6, "::laptop"sv, false},
    // no digits is valid
    {Format::kIpv6, "::"sv, true},
    // leading colons is valid
    {Format::kIpv6, "::42:ff:1"sv, true},
    // trailing colons is valid
    {Format::kIpv6, "d6::"sv, true},
    // missing leading octet is invalid
    {Format::kIpv6, ":2:3:4:5:6:7:8"sv, false},
    // missing trailing octet is invalid
    {Format::kIpv6, "1:2:3:4:5:6:7:"sv, false},
    // missing leading octet with omitted octets later
    {Format::kIpv6, ":2:3:4::8"sv, false},
    // single set of double colons in the middle is valid
    {Format::kIpv6, "1:d6::42"sv, true},
    // two sets of double colons is invalid
    {Format::kIpv6, "1::d6::42"sv, false},
    // mixed format with the ipv4 section as decimal octets
    {Format::kIpv6, "1::d6:192.168.0.1"sv, true},
    // mixed format with double colons between the sections
    {Format::kIpv6, "1:2::192.168.0.1"sv, true},
    // mixed format with ipv4 section with octet out of range
    {Format::kIpv6, "1::2:192.168.256.1"sv, false},
    // mixed format with ipv4 section with a hex octet
    {Format::kIpv6, "1::2:192.168.ff.1"sv, false},
    // mixed format with leading double colons (ipv4-mapped ipv6 address)
    {Format::kIpv6, "::ffff:192.168.0.1"sv, true},
    // triple colons is invalid
    {Format::kIpv6, "1:2:3:4:5:::8"sv, false},
    // 8 octets
    {Format::kIpv6, "1:2:3:4:5:6:7:8"sv, true},
    // insufficient octets without double colons
    {Format::kIpv6, "1:2:3:4:5:6:7"sv, false},
    // no colons is invalid
    {Format::kIpv6, "1"sv, false},
    // ipv4 is not ipv6
    {Format::kIpv6, "127.0.0.1"sv, false},
    // ipv4 segment must have 4 octets
    {Format::kIpv6, "1:2:3:4:1.2.3"sv, false},
    // leading whitespace is invalid
    {Format::kIpv6, "  ::1"sv, false},
    // trailing whitespace is invalid
    {Format::kIpv6, "::1  "sv, false},
    // netmask is not a part of ipv6 address
    {Format::kIpv6, "fe80::/64"sv, false},
    // zone id is not a part of ipv6 address
    {Format::kIpv6, "fe80::a%eth1"sv, false},
    // a long valid ipv6
    {Format::kIpv6, "1000:1000:1000:1000:1000:1000:255.255.255.255"sv, true},
    // a long invalid ipv6, below length limit, first
    {Format::kIpv6, "100:100:100:100:100:100:255.255.255.255.255"sv, false},
    // a long invalid ipv6, below length limit, second
    {Format::kIpv6, "100:100:100:100:100:100:100:255.255.255.255"sv, false},
    // invalid non-ASCII '৪' (a Bengali 4)
    {Format::kIpv6, "1:2:3:4:5:6:7:\340\247\252"sv, false},
    // invalid non-ASCII '৪' (a Bengali 4) in the IPv4 portion
    {Format::kIpv6, "1:2::192.16\340\247\252.0.1"sv, false},
    // a bracketed address is invalid
    {Format::kIpv6, "[::1]"sv, false},
    // a leading zero in the last IPv4 octet is invalid
    {Format::kIpv6, "::ffff:192.168.0.01"sv, false},
    // a valid URL with anchor tag
    {Format::kUri, "http://foo.bar/?baz=qux#quux"sv, true},
    // a valid URL with anchor tag and parentheses
    {Format::kUri, "http://foo.com/blah_(wikipedia)_blah#cite-1"sv, true},
    // a valid URL with URL-encoded stuff
    {Format::kUri, "http://foo.bar/?q=Test%20URL-encoded%20stuff"sv, true},
    // a valid puny-coded URL
    {Format::kUri, "http://xn--nw2a.xn--j6w193g/"sv, true},
    // a valid URL with many special characters
    {Format::kUri, "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com"sv, true},
    // a valid URL based on IPv4
    {Format::kUri, "http://223.255.255.254"sv, true},
    // a valid URL with ftp scheme
    {Format::kUri, "ftp://ftp.is.co.za/rfc/rfc1808.txt"sv, true},
    // a valid URL for a simple text file
    {Format::kUri, "http://www.ietf.org/rfc/rfc2396.txt"sv, true},
    // a valid URL
    {Format::kUri, "ldap://[2001:db8::7]/c=GB?objectClass?one"sv, true},
    // a valid mailto URI
    {Format::kUri, "mailto:John.Doe@example.com"sv, true},
    // a valid newsgroup URI
    {Format::kUri, "news:comp.infosystems.www.servers.unix"sv, true},
    // a valid tel URI
    {Format::kUri, "tel:+1-816-555-1212"sv, true},
    // a valid URN
    {Format::kUri, "urn:oasis:names:specification:docbook:dtd:xml:4.1.2"sv, true},
    // an invalid protocol-relative URI Reference
    {Format::kUri, "//foo.bar/?baz=qux#quux"sv, false},
    // an invalid relative URI Reference
    {Format::kUri, "/abc"sv, false},
    // an invalid URI
    {Format::kUri, "\\\\WINDOWS\\fileshare"sv, false},
    // an invalid URI though valid URI reference
    {Format::kUri, "abc"sv, false},
    // an invalid URI with spaces
    {Format::kUri, "http:// shouldfail.com"sv, false},
    // an invalid URI with spaces and missing scheme
    {Format::kUri, ":// should fail"sv, false},
    // an invalid URI with comma in scheme
    {Format::kUri, "bar,baz:foo"sv, false},
    // invalid userinfo
    {Format::kUri, "https://[@example.org/test.txt"sv, false},
    // unescaped non US-ASCII characters
    {Format::kUri, "https://example.org/foobar\302\256.txt"sv, false},
    // invalid backslash character
    {Format::kUri, "https://example.org/foobar\\.txt"sv, false},
    // invalid " character
    {Format::kUri, "https://example.org/foobar\".txt"sv, false},
    // invalid <> characters
    {Format::kUri, "https://example.org/foobar<>.txt"sv, false},
    // invalid {} characters
    {Format::kUri, "https://example.org/foobar{}.txt"sv, false},
    // invalid ^ character
    {Format::kUri, "https://example.org/foobar^.txt"sv, false},
    // invalid ` character
    {Format::kUri, "https://example.org/foobar`.txt"sv, false},
    // invalid SPACE character
    {Format::kUri, "https://example.org/foo bar.txt"sv, false},
    // invalid | character
    {Format::kUri, "https://example.org/foobar|.txt"sv, false},
    // URI with leading-zero IPv4 is structurally valid as a reg-name
    {Format::kUri, "http://087.10.0.1/"sv, true},
    // URI with out-of-bounds IPv4 is structurally valid as a reg-name
    {Format::kUri, "http://999.999.999.999/"sv, true},
    // invalid percent-encoding with non-hex digits
    {Format::kUri, "http://example.com/%6G"sv, false},
    // incomplete percent-encoding triplet
    {Format::kUri, "http://example.com/%A"sv, false},
    // lone percent sign is invalid
    {Format::kUri, "http://example.com/%"sv, false},
    // scheme must start with a letter
    {Format::kUri, "1http://example.com"sv, false},
    // invalid character in scheme
    {Format::kUri, "ht_tp://example.com"sv, false},
    // non-numeric port is invalid
    {Format::kUri, "http://example.com:abc/path"sv, false},
    // leading zero in an embedded IPv4 address is invalid
    {Format::kUri, "http://[::ffff:01.2.3.4]"sv, false},
    // square brackets are not allowed in a path segment
    {Format::kUri, "http:/[::1]"sv, false},
    // a valid URI
    {Format::kUriReference, "http://foo.bar/?baz=qux#quux"sv, true},
    // a valid protocol-relative URI Reference
    {Format::kUriReference, "//foo.bar/?baz=qux#quux"sv, true},
    // a valid relative URI Reference
    {Format::kUriReference, "/abc"sv, true},
    // an invalid URI Reference
    {Format::kUriReference, "\\\\WINDOWS\\fileshare"sv, false},
    // a valid URI Reference
    {Format::kUriReference, "abc"sv, true},
    // a valid URI fragment
    {Format::kUriReference, "#fragment"sv, true},
    // an invalid URI fragment
    {Format::kUriReference, "#frag\\ment"sv, false},
    // unescaped non US-ASCII characters
    {Format::kUriReference, "/foobar\302\256.txt"sv, false},
    // invalid backslash character
    {Format::kUriReference, "https://example.org/foobar\\.txt"sv, false},
    // URI with leading-zero IPv4 is structurally valid as a reg-name
    {Format::kUriReference, "http://087.10.0.1/"sv, true},
    // URI with out-of-bounds IPv4 is structurally valid as a reg-name
    {Format::kUriReference, "http://999.999.999.999/"sv, true},
    // an empty URI reference
    {Format::kUriReference, ""sv, true},
    // a query-only reference
    {Format::kUriReference, "?query=1"sv, true},
    // a network-path reference with an empty authority
    {Format::kUriReference, "//"sv, true},
    // an incomplete percent-encoding
    {Format::kUriReference, "/%zz"sv, false},
    // a double quote in a path
    {Format::kUriReference, "/a\"b"sv, false},
    // square brackets outside an authority
    {Format::kUriReference, "/[::1]"sv, false},
    // a non-numeric port in a network-path reference
    {Format::kUriReference, "//example.com:abc/p"sv, false},
    // more than one at-sign in the authority
    {Format::kUriReference, "//a@b@example.com/"sv, false},
    // a leading zero in the IPv4 part of an IPv6 literal
    {Format::kUriReference, "//[::ffff:192.168.0.01]/p"sv, false},
    // a colon in the first segment of a relative-path reference
    {Format::kUriReference, "1:b"sv, false},
    // a colon in the first segment preceded by a dot-segment
    {Format::kUriReference, "./this:that"sv, true},
    // a valid date-time string
    {Format::kDateTime, "1963-06-19T08:30:06.283185Z"sv, true},
    // a valid date-time string without second fraction
    {Format::kDateTime, "1963-06-19T08:30:06Z"sv, true},
    // a valid date-time string with plus offset
    {Format::kDateTime, "1937-01-01T12:00:27.87+00:20"sv, true},
    // a valid date-time string with minus offset
    {Format::kDateTime, "1990-12-31T15:59:50.123-08:00"sv, true},
    // a valid date-time with a leap second, UTC
    {Format::kDateTime, "1998-12-31T23:59:60Z"sv, true},
    // a valid date-time with a leap second, with minus offset
    {Format::kDateTime, "1998-12-31T15:59:60.123-08:00"sv, true},
    // an invalid date-time past leap second, UTC
    {Format::kDateTime, "1998-12-31T23:59:61Z"sv, false},
    // an invalid date-time with leap second on a wrong minute, UTC
    {Format::kDateTime, "1998-12-31T23:58:60Z"sv, false},
    // an invalid date-time with leap second on a wrong hour, UTC
    {Format::kDateTime, "1998-12-31T22:59:60Z"sv, false},
    // an invalid hour in date-time string
    {Format::kDateTime, "1990-12-31T24:00:00Z"sv, false},
    // an invalid minute in date-time string
    {Format::kDateTime, "1990-12-31T15:60:00Z"sv, false},
    // an invalid offset minute in date-time string
    {Format::kDateTime, "1990-12-31T10:00:00+10:60"sv, false},
    // an invalid day in date-time string
    {Format::kDateTime, "1990-02-31T15:59:59.123-08:00"sv, false},
    // an invalid offset in date-time string
    {Format::kDateTime, "1990-12-31T15:59:59-24:00"sv, false},
    // an invalid closing Z after time-zone offset
    {Format::kDateTime, "1963-06-19T08:30:06.28123+01:00Z"sv, false},
    // an invalid date-time string
    {Format::kDateTime, "06/19/1963 08:30:06 PST"sv, false},
    // case-insensitive T and Z
    {Format::kDateTime, "1963-06-19t08:30:06.283185z"sv, true},
    // only RFC3339 not all of ISO 8601 are valid
    {Format::kDateTime, "2013-350T01:01:01"sv, false},
    // invalid non-padded month dates
    {Format::kDateTime, "1963-6-19T08:30:06.283185Z"sv, false},
    // invalid non-padded day dates
    {Format::kDateTime, "1963-06-1T08:30:06.283185Z"sv, false},
    // invalid non-ASCII '৪' (a Bengali 4) in date portion
    {Format::kDateTime, "1963-06-1\340\247\252T00:00:00Z"sv, false},
    // invalid non-ASCII '৪' (a Bengali 4) in time portion
    {Format::kDateTime, "1963-06-11T0\340\247\252:00:00Z"sv, false},
    // invalid extended year
    {Format::kDateTime, "+11963-06-19T08:30:06.283185Z"sv, false},
    // a numeric offset without minutes is invalid
    {Format::kDateTime, "1985-04-12T23:20:50+01"sv, false},
    // hour 24 is invalid even with a leap second
    {Format::kDateTime, "2016-12-31T24:59:60+01:00"sv, false},
    // a second fraction of fifteen nines is valid
    {Format::kDateTime, "1985-04-12T00:59:59.999999999999999Z"sv, true},
    // a trailing newline is invalid
    {Format::kDateTime, "1985-04-12T23:20:50Z\012"sv, false},
    // a valid time string
    {Format::kTime, "08:30:06Z"sv, true},
    // invalid time string with extra leading zeros
    {Format::kTime, "008:030:006Z"sv, false},
    // invalid time string with no leading zero for single digit
    {Format::kTime, "8:3:6Z"sv, false},
    // hour, minute, second must be two digits
    {Format::kTime, "8:0030:6Z"sv, false},
    // a valid time string with leap second, Zulu
    {Format::kTime, "23:59:60Z"sv, true},
    // invalid leap second, Zulu (wrong hour)
    {Format::kTime, "22:59:60Z"sv, false},
    // invalid leap second, Zulu (wrong minute)
    {Format::kTime, "23:58:60Z"sv, false},
    // valid leap second, zero time-offset
    {Format::kTime, "23:59:60+00:00"sv, true},
    // invalid leap second, zero time-offset (wrong hour)
    {Format::kTime, "22:59:60+00:00"sv, false},
    // invalid leap second, zero time-offset (wrong minute)
    {Format::kTime, "23:58:60+00:00"sv, false},
    // valid leap second, positive time-offset
    {Format::kTime, "01:29:60+01:30"sv, true},
    // valid leap second, large positive time-offset
    {Format::kTime, "23:29:60+23:30"sv, true},
    // invalid leap second, positive time-offset (wrong hour)
    {Format::kTime, "23:59:60+01:00"sv, false},
    // invalid leap second, positive time-offset (wrong minute)
    {Format::kTime, "23:59:60+00:30"sv, false},
    // valid leap second, negative time-offset
    {Format::kTime, "15:59:60-08:00"sv, true},
    // valid leap second, large negative time-offset
    {Format::kTime, "00:29:60-23:30"sv, true},
    // invalid leap second, negative time-offset (wrong hour)
    {Format::kTime, "23:59:60-01:00"sv, false},
    // invalid leap second, negative time-offset (wrong minute)
    {Format::kTime, "23:59:60-00:30"sv, false},
    // a valid time string with second fraction
    {Format::kTime, "23:20:50.52Z"sv, true},
    // a valid time string with precise second fraction
    {Format::kTime, "08:30:06.283185Z"sv, true},
    // a valid time string with plus offset
    {Format::kTime, "08:30:06+00:20"sv, true},
    // a valid time string with minus offset
    {Format::kTime, "08:30:06-08:00"sv, true},
    // time with unknown local offset is valid
    {Format::kTime, "12:34:56-00:00"sv, true},
    // hour, minute in time-offset must be two digits
    {Format::kTime, "08:30:06-8:000"sv, false},
    // a valid time string with case-insensitive Z
    {Format::kTime, "08:30:06z"sv, true},
    // an invalid time string with invalid hour
    {Format::kTime, "24:00:00Z"sv, false},
    // an invalid time string with invalid minute
    {Format::kTime, "00:60:00Z"sv, false},
    // an invalid time string with invalid second
    {Format::kTime, "00:00:61Z"sv, false},
    // an invalid time string with invalid leap second (wrong hour)
    {Format::kTime, "22:59:60Z"sv, false},
    // an invalid time string with invalid leap second (wrong minute)
    {Format::kTime, "23:58:60Z"sv, false},
    // an invalid time string with invalid time numoffset hour
    {Format::kTime, "01:02:03+24:00"sv, false},
    // an invalid time string with invalid time numoffset minute
    {Format::kTime, "01:02:03+00:60"sv, false},
    // an invalid time string with invalid time with both Z and numoffset
    {Format::kTime, "01:02:03Z+00:30"sv, false},
    // an invalid offset indicator
    {Format::kTime, "08:30:06 PST"sv, false},
    // only RFC3339 not all of ISO 8601 are valid
    {Format::kTime, "01:01:01,1111"sv, false},
    // no time offset
    {Format::kTime, "12:00:00"sv, false},
    // no time offset with second fraction
    {Format::kTime, "12:00:00.52"sv, false},
    // invalid non-ASCII '২' (a Bengali 2)
    {Format::kTime, "1\340\247\250:00:00Z"sv, false},
    // offset not starting with plus or minus
    {Format::kTime, "08:30:06#00:20"sv, false},
    // contains letters
    {Format::kTime, "ab:cd:ef"sv, false},
    // an invalid time string in date-time format
    {Format::kTime, "2020-11-28T23:55:45Z"sv, false},
};

TEST(SchemaFormatsTest, TheSuitesDraft7Cases) {
  for (const Case& c : kSuite) {
    EXPECT_EQ(MatchesFormat(c.format, c.text), c.valid)
        << FormatName(c.format) << " \"" << c.text << "\"";
  }
}

TEST(SchemaFormatsTest, EachFormatHasItsName) {
  for (std::string_view name : {"date", "time", "date-time", "email", "hostname", "ipv4", "ipv6",
                                "uri", "uri-reference", "uuid"}) {
    EXPECT_EQ(FormatName(FormatNamed(name)), name);
    EXPECT_FALSE(FormatStandard(FormatNamed(name)).empty());
  }
  EXPECT_EQ(FormatNamed("idn-email"), Format::kNone);
  EXPECT_TRUE(MatchesFormat(Format::kNone, "anything"));
}

TEST(SchemaFormatsTest, Email) {
  EXPECT_TRUE(MatchesFormat(Format::kEmail, "\"joe bloggs\"@example.com"));
  EXPECT_TRUE(MatchesFormat(Format::kEmail, "\"joe\\\"q\"@example.com"));
  EXPECT_TRUE(MatchesFormat(Format::kEmail, "joe@[127.0.0.1]"));
  EXPECT_TRUE(MatchesFormat(Format::kEmail, "joe@[IPv6:::1]"));
  EXPECT_TRUE(MatchesFormat(Format::kEmail, "a!#$%&'*+-/=?^_`{|}~@example.com"));
  EXPECT_FALSE(MatchesFormat(Format::kEmail, "joe@[127.0.0.300]"));
  EXPECT_FALSE(MatchesFormat(Format::kEmail, "joe@[::1]"));
  EXPECT_FALSE(MatchesFormat(Format::kEmail, "\"unterminated@example.com"));
  EXPECT_FALSE(MatchesFormat(Format::kEmail, std::string(65, 'a') + "@example.com"));
  EXPECT_TRUE(MatchesFormat(Format::kEmail, std::string(64, 'a') + "@example.com"));
  EXPECT_FALSE(MatchesFormat(Format::kEmail, "joe@example..com"));
  EXPECT_FALSE(MatchesFormat(Format::kEmail, "joe@@example.com"));
}

TEST(SchemaFormatsTest, Hostname) {
  EXPECT_TRUE(MatchesFormat(Format::kHostname, "a"));
  std::string longest;
  for (int i = 0; i < 4; ++i)
    longest += std::string(i > 0 ? "." : "") + std::string(i < 3 ? 63 : 61, 'a');
  ASSERT_EQ(longest.size(), 253u);
  EXPECT_TRUE(MatchesFormat(Format::kHostname, longest));
  EXPECT_FALSE(MatchesFormat(Format::kHostname, longest + "a"));
  EXPECT_FALSE(MatchesFormat(Format::kHostname, "a..b"));
  EXPECT_FALSE(MatchesFormat(Format::kHostname, "ab--c"));     // "--" in 3rd and 4th: A-labels only
  EXPECT_FALSE(MatchesFormat(Format::kHostname, "xn--abc-"));  // nothing encoded
  EXPECT_FALSE(MatchesFormat(Format::kHostname, "xn--a_b"));
  EXPECT_TRUE(MatchesFormat(Format::kHostname, "xn--bcher-kva.example"));  // bücher
  // Overflowing Punycode is refused, not wrapped.
  EXPECT_FALSE(MatchesFormat(Format::kHostname, "xn--99999999999999999999"));
}

TEST(SchemaFormatsTest, Ipv4AndIpv6) {
  EXPECT_FALSE(MatchesFormat(Format::kIpv4, "087.10.0.1"));
  EXPECT_FALSE(MatchesFormat(Format::kIpv4, "1.2.3.4.5"));
  EXPECT_FALSE(MatchesFormat(Format::kIpv4, "1111.2.3.4"));
  EXPECT_TRUE(MatchesFormat(Format::kIpv6, "2001:db8:0:0:0:0:2:1"));
  EXPECT_TRUE(MatchesFormat(Format::kIpv6, "2001:DB8::2:1"));
  EXPECT_TRUE(MatchesFormat(Format::kIpv6, "1:2:3:4:5:6:7::"));
  EXPECT_FALSE(MatchesFormat(Format::kIpv6, "1:2:3:4:5:6:7:8::"));
  EXPECT_FALSE(MatchesFormat(Format::kIpv6, "1::2:3:4:5:6:7:8"));
  EXPECT_FALSE(MatchesFormat(Format::kIpv6, ":"));
  EXPECT_FALSE(MatchesFormat(Format::kIpv6, "1:2:3:4:5:6:1.2.3.4:8"));
}

TEST(SchemaFormatsTest, UriAndUriReference) {
  EXPECT_TRUE(MatchesFormat(Format::kUri, "http://[v1.fe80::a+en1]/"));
  EXPECT_TRUE(MatchesFormat(Format::kUri, "http://u:p@example.com:8080/a/b?c=d&e#f/g?h"));
  EXPECT_TRUE(MatchesFormat(Format::kUri, "x:"));
  EXPECT_FALSE(MatchesFormat(Format::kUri, "http://[::1"));
  EXPECT_FALSE(MatchesFormat(Format::kUri, "http://[::1]x/"));
  EXPECT_FALSE(MatchesFormat(Format::kUri, "http://example.com/a#b#c"));
  EXPECT_TRUE(MatchesFormat(Format::kUriReference, "a/b:c"));
  EXPECT_TRUE(MatchesFormat(Format::kUriReference, "/a:b"));
  EXPECT_FALSE(MatchesFormat(Format::kUriReference, "a b"));
}

TEST(SchemaFormatsTest, Uuid) {
  EXPECT_TRUE(MatchesFormat(Format::kUuid, "2eb8aa08-aa98-11ea-b4aa-73b441d16380"));
  EXPECT_TRUE(MatchesFormat(Format::kUuid, "2EB8AA08-AA98-11EA-B4AA-73B441D16380"));
  EXPECT_TRUE(MatchesFormat(Format::kUuid, "00000000-0000-0000-0000-000000000000"));
  EXPECT_FALSE(MatchesFormat(Format::kUuid, "2eb8aa08-aa98-11ea-b4aa-73b441d1638"));
  EXPECT_FALSE(MatchesFormat(Format::kUuid, "2eb8aa08aa9811eab4aa73b441d16380"));
  EXPECT_FALSE(MatchesFormat(Format::kUuid, "2eb8aa08-aa98-11ea-b4aa-73b441d1638g"));
  EXPECT_FALSE(MatchesFormat(Format::kUuid, "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}"));
  EXPECT_FALSE(MatchesFormat(Format::kUuid, "2eb8aa0-8aa98-11ea-b4aa-73b441d16380"));
}

TEST(SchemaFormatsTest, LeapSecondsComeAt2359Utc) {
  EXPECT_TRUE(MatchesFormat(Format::kDateTime, "1998-12-31T23:59:60Z"));
  EXPECT_TRUE(MatchesFormat(Format::kDateTime, "1998-12-31T15:59:60.123-08:00"));
  EXPECT_FALSE(MatchesFormat(Format::kDateTime, "1998-12-31T23:58:60Z"));
  EXPECT_FALSE(MatchesFormat(Format::kDateTime, "1998-12-31T22:59:60Z"));
  EXPECT_TRUE(MatchesFormat(Format::kTime, "00:29:60-23:30"));
  EXPECT_TRUE(MatchesFormat(Format::kTime, "23:29:60+23:30"));
}

TEST(SchemaFormatsTest, AHugeTextIsOnePass) {
  const std::string big(1 << 20, 'a');
  for (Format f : {Format::kEmail, Format::kHostname, Format::kIpv4, Format::kIpv6, Format::kUri,
                   Format::kUriReference, Format::kUuid, Format::kDateTime}) {
    EXPECT_FALSE(MatchesFormat(f, big + " ")) << FormatName(f);
  }
  EXPECT_TRUE(MatchesFormat(Format::kUriReference, big));
}

}  // namespace
}  // namespace webhookd::schema::schema_formats_test
