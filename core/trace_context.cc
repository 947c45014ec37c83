#include "core/trace_context.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace webhookd {
namespace {

int LowerHexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is not valid in traceparent
}

// Reads exactly out.size() bytes of lower-case hex from `text`; false if any is not.
template <size_t N>
bool ReadHex(std::string_view text, std::array<uint8_t, N>& out) {
  if (text.size() != 2 * N) return false;
  for (size_t i = 0; i < N; ++i) {
    const int hi = LowerHexDigit(text[2 * i]);
    const int lo = LowerHexDigit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& id) {
  for (uint8_t b : id) {
    if (b != 0) return false;
  }
  return true;
}

template <size_t N>
std::string Hex(const std::array<uint8_t, N>& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    out[2 * i] = kDigits[id[i] >> 4];
    out[2 * i + 1] = kDigits[id[i] & 0xf];
  }
  return out;
}

template <size_t N>
std::array<uint8_t, N> IdFrom(std::string_view bytes) {
  std::array<uint8_t, N> id{};
  std::memcpy(id.data(), bytes.data(), std::min(N, bytes.size()));
  if (AllZero(id)) id[N - 1] = 1;
  return id;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<TraceContext> ParseTraceparent(std::string_view header) {
  header = Trim(header);
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55.
  if (header.size() < 55) return std::nullopt;
  std::array<uint8_t, 1> version{};
  if (!ReadHex(header.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') return std::nullopt;
  // Version 00 is exactly 55 characters; a later version may add fields after a '-'.
  if (version[0] == 0 ? header.size() != 55 : header.size() > 55 && header[55] != '-') {
    return std::nullopt;
  }
  TraceContext context;
  std::array<uint8_t, 1> flags{};
  if (!ReadHex(header.substr(3, 32), context.trace_id) ||
      !ReadHex(header.substr(36, 16), context.span_id) || !ReadHex(header.substr(53, 2), flags)) {
    return std::nullopt;
  }
  if (AllZero(context.trace_id) || AllZero(context.span_id)) return std::nullopt;
  // Version 00 defines the sampled bit alone; the others are kept for later versions'
  // sake but not acted on.
  context.flags = flags[0];
  return context;
}

std::string ValidTracestate(std::string_view header) {
  header = Trim(header);
  if (header.empty() || header.size() > 512) return "";
  int members = 0;
  size_t from = 0;
  while (from <= header.size()) {
    size_t comma = header.find(',', from);
    if (comma == std::string_view::npos) comma = header.size();
    const std::string_view member = Trim(header.substr(from, comma - from));
    if (!member.empty()) {  // empty members are allowed and ignored
      if (++members > 32) return "";
      const size_t eq = member.find('=');
      if (eq == 0 || eq == std::string_view::npos || eq + 1 == member.size()) return "";
      for (char c : member) {
        if (c < 0x20 || c > 0x7e) return "";
      }
    }
    from = comma + 1;
  }
  return std::string(header);
}

std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, uint8_t flags) {
  return "00-" + Hex(trace_id) + "-" + Hex(span_id) + "-" +
         Hex(std::array<uint8_t, 1>{static_cast<uint8_t>(flags & kSampledFlag)});
}

std::string ToHex(const TraceId& id) { return Hex(id); }
std::string ToHex(const SpanId& id) { return Hex(id); }

TraceId TraceIdFrom(std::string_view bytes) { return IdFrom<16>(bytes); }
SpanId SpanIdFrom(std::string_view bytes) { return IdFrom<8>(bytes); }

SpanStart StartSpan(std::string_view traceparent, std::string_view tracestate,
                    const Sampler& sampler, std::string_view random) {
  SpanStart s;
  s.span_id = SpanIdFrom(random.substr(0, 8));
  std::optional<bool> parent_sampled;
  if (auto parent = ParseTraceparent(traceparent)) {
    s.trace_id = parent->trace_id;
    s.parent = parent->span_id;
    parent_sampled = parent->sampled();
    s.tracestate = ValidTracestate(tracestate);
  } else {
    s.trace_id = TraceIdFrom(random.substr(8, 16));
  }
  s.sampled = sampler.Sample(s.trace_id, parent_sampled);
  s.flags = s.sampled ? kSampledFlag : 0;
  return s;
}

Sampler::Sampler(SamplerKind kind, double ratio) : kind_(kind), ratio_(ratio) {}

Sampler Sampler::FromEnv(std::string_view sampler, std::string_view arg, std::string* warning) {
  warning->clear();
  const bool ratio_based = sampler == "traceidratio" || sampler == "parentbased_traceidratio";
  double ratio = 1.0;
  if (ratio_based && !arg.empty()) {
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), ratio);
    if (ec != std::errc() || end != arg.data() + arg.size() || !(ratio >= 0.0 && ratio <= 1.0)) {
      *warning = "OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1; using 1";
      ratio = 1.0;
    }
  }
  if (sampler.empty() || sampler == "parentbased_always_on") return Sampler();
  if (sampler == "always_on") return Sampler(SamplerKind::kAlwaysOn);
  if (sampler == "always_off") return Sampler(SamplerKind::kAlwaysOff);
  if (sampler == "parentbased_always_off") return Sampler(SamplerKind::kParentBasedAlwaysOff);
  if (sampler == "traceidratio") return Sampler(SamplerKind::kTraceIdRatio, ratio);
  if (sampler == "parentbased_traceidratio") {
    return Sampler(SamplerKind::kParentBasedTraceIdRatio, ratio);
  }
  *warning =
      "OTEL_TRACES_SAMPLER: expected always_on, always_off, traceidratio, parentbased_always_on, "
      "parentbased_always_off or parentbased_traceidratio; using parentbased_always_on";
  return Sampler();
}

bool Sampler::Sample(const TraceId& trace_id, std::optional<bool> parent_sampled) const {
  const auto by_ratio = [&] {
    // The trace id's last 8 bytes, read as an unsigned number, below ratio * 2^64: the
    // same trace is sampled alike wherever it is decided (ids are random, so this is a
    // uniform draw).
    uint64_t low = 0;
    for (size_t i = 8; i < 16; ++i) low = (low << 8) | trace_id[i];
    if (ratio_ >= 1.0) return true;
    if (ratio_ <= 0.0) return false;
    // Compared as integers: a double cannot tell ids near the bound apart.
    const double bound = std::ldexp(ratio_, 64);
    if (bound >= std::ldexp(1.0, 64)) return true;
    return low < static_cast<uint64_t>(bound);
  };
  switch (kind_) {
    case SamplerKind::kAlwaysOn:
      return true;
    case SamplerKind::kAlwaysOff:
      return false;
    case SamplerKind::kTraceIdRatio:
      return by_ratio();
    case SamplerKind::kParentBasedAlwaysOn:
      return parent_sampled.value_or(true);
    case SamplerKind::kParentBasedAlwaysOff:
      return parent_sampled.value_or(false);
    case SamplerKind::kParentBasedTraceIdRatio:
      return parent_sampled ? *parent_sampled : by_ratio();
  }
  return false;
}

}  // namespace webhookd
