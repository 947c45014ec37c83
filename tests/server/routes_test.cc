// The router and docs/openapi.json describe the same routes, so neither can drift: a route
// added to one and not the other fails here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "server/http_server.h"
#include "server/openapi.h"

namespace webhookd::routes_test {
namespace {

std::set<std::string> SpecRoutes() {
  const auto spec = nlohmann::json::parse(OpenApiJson());
  const std::regex parameter(R"(\{[^}/]+\})");
  std::set<std::string> routes;
  for (const auto& [path, item] : spec.at("paths").items()) {
    for (const auto& [method, operation] : item.items()) {
      if (method == "parameters" || method == "summary" || method == "description") continue;
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      routes.insert(upper + " " + std::regex_replace(path, parameter, "{}"));
    }
  }
  return routes;
}

TEST(RoutesTest, TheRouterAndTheOpenApiDescriptionHaveTheSameRoutes) {
  const std::vector<std::string> served = HttpServer::Routes();
  const std::set<std::string> router(served.begin(), served.end());
  EXPECT_EQ(router.size(), served.size()) << "a route is in the table twice";
  const std::set<std::string> spec = SpecRoutes();
  std::vector<std::string> only_router, only_spec;
  std::set_difference(router.begin(), router.end(), spec.begin(), spec.end(),
                      std::back_inserter(only_router));
  std::set_difference(spec.begin(), spec.end(), router.begin(), router.end(),
                      std::back_inserter(only_spec));
  EXPECT_THAT(only_router, ::testing::IsEmpty()) << "served but not in docs/openapi.json";
  EXPECT_THAT(only_spec, ::testing::IsEmpty()) << "in docs/openapi.json but not served";
}

TEST(RoutesTest, TheServedDescriptionIsOpenApi31) {
  const auto spec = nlohmann::json::parse(OpenApiJson());
  EXPECT_EQ(spec.at("openapi"), "3.1.0");
  EXPECT_TRUE(spec.contains("webhooks"));
}

}  // namespace
}  // namespace webhookd::routes_test
