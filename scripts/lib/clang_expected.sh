# shellcheck shell=bash
# Lets clang 14 (Debian 12's clang++ and clang-tidy) compile code that uses std::expected.
# Source it; do not execute it.
#
#   clang_expected_include CXX DIR   returns 0 and leaves DIR/expected when CXX needs it
#                                    (then pass -isystem DIR), 1 when CXX needs nothing
#
# libstdc++ 12's <expected> is hidden behind __cpp_concepts >= 202002L, and once revealed
# its `= default` special members, which rely on conditionally trivial special members
# (P0848, clang 16), are implicitly deleted. DIR/expected is a copy with that gate relaxed
# and those three defaulted members removed, so the constrained user-written ones are
# always used.
clang_expected_include() {
  local cxx=$1 dir=$2 header probe
  probe='#include <expected>
#include <string>
std::expected<int, std::string> F(int x) { if (x) return x; return std::unexpected(std::string("no")); }
int main() { std::expected<int, std::string> a = F(1), b = a; return *b - 1; }'
  mkdir -p "${dir}"
  if printf '%s\n' "${probe}" | "${cxx}" -std=c++2b -fsyntax-only -x c++ - 2>/dev/null; then
    rm -f "${dir}/expected"
    return 1
  fi
  header=$(printf '#include <expected>\n' | "${cxx}" -std=c++2b -M -x c++ - 2>/dev/null |
    grep -oE '/[^[:space:]]+/expected([[:space:]]|$)' | head -n1 | tr -d '[:space:]' || true)
  if [[ -z ${header} || ! -f ${header} ]]; then
    echo "error: ${cxx} has no <expected> header to patch" >&2
    exit 1
  fi
  sed -e 's/^#if __cplusplus > 202002L && __cpp_concepts >= 202002L$/#if __cplusplus > 202002L/' \
    -e '/^[[:space:]]*expected(const expected&) = default;$/d' \
    -e '/^[[:space:]]*expected(expected&&) = default;$/d' \
    -e '/^[[:space:]]*constexpr ~expected() = default;$/d' \
    "${header}" >"${dir}/expected.$$.tmp"
  if ! cmp -s "${dir}/expected.$$.tmp" "${dir}/expected" 2>/dev/null; then
    mv "${dir}/expected.$$.tmp" "${dir}/expected"
  else
    rm -f "${dir}/expected.$$.tmp"
  fi
  if ! printf '%s\n' "${probe}" | "${cxx}" -std=c++2b -isystem "${dir}" -fsyntax-only -x c++ - 2>/dev/null; then
    echo "error: ${cxx}: the <expected> workaround does not compile" >&2
    exit 1
  fi
  return 0
}
