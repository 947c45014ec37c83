// An anonymous client requests many distinct paths: /metrics must name only the routes
// webhookd serves. The operations routes kept a pointer to the request's own path as the
// route's label, so /metrics read freed memory (and could leak another request's bytes).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::metrics_labels_security_test {
namespace {

TEST(MetricsLabelsSecurityTest, ManyDistinctPathsLeaveOnlyRouteNamesInTheLabels) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  auto client = webhookd.Client("");
  for (int i = 0; i < 200; ++i) {
    const std::string n = std::to_string(i);
    // Paths the operations table matches, and paths nothing matches, each seen once.
    for (const std::string& path :
         {std::string("/healthz"), std::string("/readyz"), "/nothing-here-" + n, "/v1/unknown/" + n,
          "/metrics" + n, "/healthz/" + n + "?q=" + n}) {
      auto r = client->Get(path.c_str());
      ASSERT_TRUE(r) << path;
    }
  }
  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->status, 200);
  const std::set<std::string> known = {"/healthz", "/readyz",   "/metrics", "/openapi.json",
                                       "/ui",      "unmatched", "refused"};
  const std::regex label(
      R"re(webhookd_http_requests_total\{route="([^"]*)",code="(\d+)"\} (\d+))re");
  std::map<std::string, int> count;  // per "route code"
  const std::string& text = metrics->body;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), label);
       it != std::sregex_iterator(); ++it) {
    const std::string route = (*it)[1];
    count[route + " " + (*it)[2].str()] += std::stoi((*it)[3]);
    EXPECT_TRUE(known.contains(route) || route.starts_with("/v1/")) << route;
    EXPECT_EQ(route.find("nothing-here"), std::string::npos) << route;
    EXPECT_EQ(route.find("unknown"), std::string::npos) << route;
  }
  // The start-up's own wait asked /healthz too.
  EXPECT_GE(count["/healthz 200"], 200) << text;
  EXPECT_EQ(count["/readyz 200"], 200) << text;
  EXPECT_EQ(count["unmatched 404"], 800) << text;
}

}  // namespace
}  // namespace webhookd::testing::metrics_labels_security_test
