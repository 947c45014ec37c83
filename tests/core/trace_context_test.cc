// W3C Trace Context: the test vectors of the specification's own test suite (versions,
// zero ids, case, lengths, separators, flags) and OpenTelemetry's samplers.
#include "core/trace_context.h"

#include <gtest/gtest.h>

namespace webhookd::trace_context_test {
namespace {

constexpr const char* kValid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

TEST(TraceContextTest, ParsesAValidTraceparent) {
  auto c = ParseTraceparent(kValid);
  ASSERT_TRUE(c);
  EXPECT_EQ(ToHex(c->trace_id), "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(ToHex(c->span_id), "b7ad6b7169203331");
  EXPECT_TRUE(c->sampled());
  EXPECT_EQ(FormatTraceparent(c->trace_id, c->span_id, c->flags), kValid);
  auto unsampled = ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");
  ASSERT_TRUE(unsampled);
  EXPECT_FALSE(unsampled->sampled());
  EXPECT_TRUE(ParseTraceparent(std::string(" ") + kValid + "\t")) << "blanks around are allowed";
}

TEST(TraceContextTest, RefusesWhatTheSpecificationRefuses) {
  for (const char* bad : {
           "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",    // version ff
           "0g-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",    // not hex
           "00-00000000000000000000000000000000-b7ad6b7169203331-01",    // zero trace id
           "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",    // zero parent id
           "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",    // upper case
           "00-0af7651916cd43dd8448eb211c80319c-B7AD6B7169203331-01",    // upper case
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0G",    // bad flags
           "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",      // short trace id
           "00-0af7651916cd43dd8448eb211c80319c00-b7ad6b71692033-01",    // misplaced dash
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",   // 00 with more
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",  // 00 with more
           "00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01",    // separators
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",     // short flags
           "",
           "00",
       }) {
    EXPECT_FALSE(ParseTraceparent(bad)) << bad;
  }
}

TEST(TraceContextTest, ReadsALaterVersionForItsFirstFields) {
  auto c = ParseTraceparent(
      "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-the-future-holds");
  ASSERT_TRUE(c);
  EXPECT_EQ(ToHex(c->span_id), "b7ad6b7169203331");
  EXPECT_TRUE(ParseTraceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
  EXPECT_FALSE(ParseTraceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01.x"));
}

TEST(TraceContextTest, FormatsOnlyTheSampledFlag) {
  auto c = ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-ff");
  ASSERT_TRUE(c);
  EXPECT_EQ(FormatTraceparent(c->trace_id, c->span_id, c->flags),
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
}

TEST(TraceContextTest, KeepsAValidTracestateAndDropsAnInvalidOne) {
  EXPECT_EQ(ValidTracestate(" rojo=00f067aa0ba902b7,congo=t61rcWkgMzE "),
            "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  EXPECT_EQ(ValidTracestate("a=1,,b=2"), "a=1,,b=2");
  EXPECT_EQ(ValidTracestate("novalue"), "");
  EXPECT_EQ(ValidTracestate("=x"), "");
  EXPECT_EQ(ValidTracestate("a="), "");
  EXPECT_EQ(ValidTracestate("a=\x01"), "");
  EXPECT_EQ(ValidTracestate(std::string(513, 'a')), "");
  std::string many;
  for (int i = 0; i < 33; ++i) many += "k" + std::to_string(i) + "=v,";
  EXPECT_EQ(ValidTracestate(many), "");
}

TEST(TraceContextTest, IdsFromRandomBytesAreNeverZero) {
  EXPECT_EQ(ToHex(TraceIdFrom(std::string(16, '\0'))), "00000000000000000000000000000001");
  EXPECT_EQ(ToHex(SpanIdFrom(std::string(8, '\0'))), "0000000000000001");
  EXPECT_EQ(ToHex(SpanIdFrom("\x01\x02\x03\x04\x05\x06\x07\x08")), "0102030405060708");
}

TraceId TraceWithLow(uint64_t low) {
  TraceId id{};
  id[0] = 0xab;
  for (int i = 15; i >= 8; --i, low >>= 8) id[i] = static_cast<uint8_t>(low & 0xff);
  return id;
}

TEST(SamplerTest, DecidesAsEachKindSays) {
  const TraceId id = TraceWithLow(0);
  EXPECT_TRUE(Sampler(SamplerKind::kAlwaysOn).Sample(id, false));
  EXPECT_FALSE(Sampler(SamplerKind::kAlwaysOff).Sample(id, true));
  EXPECT_TRUE(Sampler().Sample(id, std::nullopt)) << "the default samples a root";
  EXPECT_FALSE(Sampler().Sample(id, false)) << "and follows a parent";
  EXPECT_FALSE(Sampler(SamplerKind::kParentBasedAlwaysOff).Sample(id, std::nullopt));
  EXPECT_TRUE(Sampler(SamplerKind::kParentBasedAlwaysOff).Sample(id, true));
}

TEST(SamplerTest, TheRatioDecidesByTheTraceIdsLowBytes) {
  const Sampler quarter(SamplerKind::kTraceIdRatio, 0.25);
  EXPECT_TRUE(quarter.Sample(TraceWithLow(0), std::nullopt));
  EXPECT_TRUE(quarter.Sample(TraceWithLow(0x3fffffffffffff00ULL), std::nullopt));
  EXPECT_FALSE(quarter.Sample(TraceWithLow(0x4000000000000000ULL), std::nullopt));
  EXPECT_FALSE(quarter.Sample(TraceWithLow(~0ULL), std::nullopt));
  EXPECT_FALSE(quarter.Sample(TraceWithLow(~0ULL), true)) << "traceidratio ignores the parent";
  const Sampler parent_based(SamplerKind::kParentBasedTraceIdRatio, 0.25);
  EXPECT_TRUE(parent_based.Sample(TraceWithLow(~0ULL), true));
  EXPECT_FALSE(parent_based.Sample(TraceWithLow(0), false));
  EXPECT_FALSE(parent_based.Sample(TraceWithLow(~0ULL), std::nullopt));
  EXPECT_FALSE(Sampler(SamplerKind::kTraceIdRatio, 0).Sample(TraceWithLow(0), std::nullopt));
  EXPECT_TRUE(Sampler(SamplerKind::kTraceIdRatio, 1).Sample(TraceWithLow(~0ULL), std::nullopt));
}

TEST(SamplerTest, ReadsTheEnvironmentAndFallsBackWithAWarning) {
  std::string warning;
  auto s = Sampler::FromEnv("parentbased_traceidratio", "0.5", &warning);
  EXPECT_EQ(s.kind(), SamplerKind::kParentBasedTraceIdRatio);
  EXPECT_DOUBLE_EQ(s.ratio(), 0.5);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(Sampler::FromEnv("", "", &warning).kind(), SamplerKind::kParentBasedAlwaysOn);
  EXPECT_EQ(Sampler::FromEnv("always_off", "", &warning).kind(), SamplerKind::kAlwaysOff);
  EXPECT_EQ(Sampler::FromEnv("sometimes", "", &warning).kind(), SamplerKind::kParentBasedAlwaysOn);
  EXPECT_NE(warning.find("OTEL_TRACES_SAMPLER"), std::string::npos);
  s = Sampler::FromEnv("traceidratio", "1.5", &warning);
  EXPECT_DOUBLE_EQ(s.ratio(), 1.0);
  EXPECT_NE(warning.find("OTEL_TRACES_SAMPLER_ARG"), std::string::npos);
}

}  // namespace
}  // namespace webhookd::trace_context_test
