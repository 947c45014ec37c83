// The Prometheus text exposition format, checked against its rules.
#include "base/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <sstream>
#include <thread>

namespace webhookd::metrics_test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ExpositionTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(ExpositionWriter::EscapeLabelValue(R"(a\b"c)"
                                               "\n"
                                               "d"),
            R"(a\\b\"c\nd)");
  ExpositionWriter w;
  w.Header("x_total", "counter", "Help with a \\ backslash\nand a newline.");
  w.Sample("x_total", {{"route", R"(/v1/"q"\)"}}, uint64_t{3});
  EXPECT_EQ(w.text(),
            "# HELP x_total Help with a \\\\ backslash\\nand a newline.\n"
            "# TYPE x_total counter\n"
            "x_total{route=\"/v1/\\\"q\\\"\\\\\"} 3\n");
}

TEST(ExpositionTest, HistogramBucketsAreCumulativeAndEndWithInf) {
  Histogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) h.Observe(v);
  ExpositionWriter w;
  w.WriteHistogram("lat_seconds", "Latency.", h);
  EXPECT_THAT(
      Lines(w.text()),
      ::testing::ElementsAre("# HELP lat_seconds Latency.", "# TYPE lat_seconds histogram",
                             "lat_seconds_bucket{le=\"0.1\"} 2", "lat_seconds_bucket{le=\"1\"} 3",
                             "lat_seconds_bucket{le=\"10\"} 4", "lat_seconds_bucket{le=\"+Inf\"} 5",
                             "lat_seconds_sum 55.65", "lat_seconds_count 5"));
}

TEST(MetricsTest, EveryContractSeriesIsExportedAndEverySampleLineIsWellFormed) {
  Metrics m;
  m.events_ingested.Inc(3);
  m.attempts[1].Inc();
  m.dead_letters[0].Inc(2);
  m.purged_events.Inc(1000);
  m.CountRequest("/v1/events", 202);
  m.CountRequest("/v1/events", 202);
  m.CountRequest("/v1/events", 422);
  m.feed_acks.Inc(4);
  Metrics::Gauges gauges{7, 1, 2};
  gauges.feed_messages = {{"dst_3", 5, 2}};
  const std::string text = m.Render(gauges);
  for (const char* series :
       {"webhookd_events_ingested_total 3", "webhookd_deliveries_created_total 0",
        "webhookd_delivery_attempts_total{outcome=\"retryable\"} 1",
        "webhookd_deliveries_succeeded_total 0",
        "webhookd_dead_letters_total{reason=\"exhausted\"} 2", "webhookd_replays_total 0",
        "webhookd_purged_events_total 1000",
        "webhookd_delivery_attempt_duration_seconds_bucket{le=\"+Inf\"} 0",
        "webhookd_delivery_latency_seconds_count 0", "webhookd_deliveries_pending 7",
        "webhookd_deliveries_retrying_over_24h 1",
        "webhookd_feed_messages{destination_id=\"dst_3\",state=\"waiting\"} 5",
        "webhookd_feed_messages{destination_id=\"dst_3\",state=\"leased\"} 2",
        "webhookd_feed_acks_total 4",
        "webhookd_http_requests_total{route=\"/v1/events\",code=\"202\"} 2",
        "webhookd_http_requests_total{route=\"/v1/events\",code=\"422\"} 1"}) {
    EXPECT_NE(text.find(std::string(series) + "\n"), std::string::npos) << series;
  }
  // name{labels} value, or a # HELP / # TYPE line: nothing else.
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+0-9.eEInfNa]+$)");
  const std::regex meta(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  for (const auto& line : Lines(text)) {
    EXPECT_TRUE(std::regex_match(line, sample) || std::regex_match(line, meta)) << line;
  }
}

// A route name may come from a request's own memory: it is copied, so the label survives
// the request (it was kept as a pointer into freed memory: ASan's heap-use-after-free).
TEST(MetricsTest, RouteNamesOutliveTheMemoryTheyCameFrom) {
  Metrics m;
  for (int i = 0; i < 40; ++i) {
    auto path = std::make_unique<std::string>("/route/" + std::to_string(i % 3));
    m.CountRequest(*path, 200);
    path->assign(path->size(), 'x');  // the request's memory is reused, then freed
  }
  const std::string text = m.Render({});
  for (int r = 0; r < 3; ++r) {
    const std::string series = "webhookd_http_requests_total{route=\"/route/" + std::to_string(r) +
                               "\",code=\"200\"} " + (r == 0 ? "14" : "13");
    EXPECT_NE(text.find(series + "\n"), std::string::npos) << series << "\n" << text;
  }
  EXPECT_EQ(text.find("xxx"), std::string::npos);
}

TEST(MetricsTest, CountersAreSafeUnderConcurrentIncrements) {
  Metrics m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        m.replays.Inc();
        m.CountRequest("/healthz", 200);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(m.replays.value(), 40000u);
  EXPECT_NE(
      m.Render({}).find("webhookd_http_requests_total{route=\"/healthz\",code=\"200\"} 40000\n"),
      std::string::npos);
}

}  // namespace
}  // namespace webhookd::metrics_test
