#include <gtest/gtest.h>

#include <string_view>

#include "console/assets.h"

namespace webhookd::console_assets_test {
namespace {

TEST(ConsoleAssetsTest, FindsThePageAndItsFilesWithTheirTypes) {
  const Asset* index = FindUiAsset("index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  EXPECT_TRUE(index->bytes.starts_with("<!doctype html>"));

  const Asset* app = FindUiAsset("app.js");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->content_type, "text/javascript; charset=utf-8");

  // What the console bundles from npm (console/vendor): uPlot, its module and stylesheet.
  const Asset* uplot = FindUiAsset("vendor/uPlot.esm.js");
  ASSERT_NE(uplot, nullptr);
  EXPECT_EQ(uplot->content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(uplot->bytes.find("export { uPlot as default }"), std::string_view::npos);
  const Asset* uplot_css = FindUiAsset("vendor/uPlot.min.css");
  ASSERT_NE(uplot_css, nullptr);
  EXPECT_EQ(uplot_css->content_type, "text/css; charset=utf-8");

  const Asset* view = FindUiAsset("views/events.js");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->content_type, "text/javascript; charset=utf-8");

  const Asset* css = FindUiAsset("app.css");
  ASSERT_NE(css, nullptr);
  EXPECT_EQ(css->content_type, "text/css; charset=utf-8");

  const Asset* icon = FindUiAsset("favicon.svg");
  ASSERT_NE(icon, nullptr);
  EXPECT_EQ(icon->content_type, "image/svg+xml");
}

TEST(ConsoleAssetsTest, AnythingElseIsNotFound) {
  for (const char* path : {"", "/index.html", "../index.html", "index.html/", "views", "views/",
                           "INDEX.HTML", "missing.js", "index.htm"}) {
    EXPECT_EQ(FindUiAsset(path), nullptr) << path;
  }
}

TEST(ConsoleAssetsTest, EveryAssetIsFoundAndTheTableIsSorted) {
  const std::span<const Asset> assets = UiAssets();
  ASSERT_GE(assets.size(), 4u);
  for (size_t i = 0; i < assets.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(assets[i - 1].path, assets[i].path);
    }
    EXPECT_EQ(FindUiAsset(assets[i].path), &assets[i]) << assets[i].path;
    EXPECT_FALSE(assets[i].bytes.empty()) << assets[i].path;
  }
}

// The bytes are the whole file, and no more (the generated array ends in an extra NUL).
TEST(ConsoleAssetsTest, BytesAreTheWholeFile) {
  const Asset* index = FindUiAsset("index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_TRUE(index->bytes.ends_with("</html>\n"));
  EXPECT_EQ(index->bytes.find('\0'), std::string_view::npos);
  const Asset* icon = FindUiAsset("favicon.svg");
  ASSERT_NE(icon, nullptr);
  EXPECT_TRUE(icon->bytes.starts_with("<svg"));
  EXPECT_TRUE(icon->bytes.ends_with("</svg>\n"));
}

}  // namespace
}  // namespace webhookd::console_assets_test
