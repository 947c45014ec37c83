#include "tests/testing/exchange_log.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "tests/testing/webhookd_process.h"

namespace webhookd::testing {

void RecordExchange(const httplib::Request& req, const httplib::Response& res) {
  static std::mutex mu;
  const std::string dir = TestLogDir() + "/exchanges";
  const size_t query_at = req.path.find('?');
  nlohmann::json line = {
      {"method", req.method}, {"path", req.path.substr(0, query_at)},
      {"status", res.status}, {"content_type", res.get_header_value("Content-Type")},
      {"body", res.body},
  };
  if (query_at != std::string::npos) line["query"] = req.path.substr(query_at + 1);
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : res.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    headers[lower] = value;
  }
  line["headers"] = std::move(headers);
  // Bodies of a test may be anything; replace what is not UTF-8 rather than fail the test.
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard lock(mu);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + std::to_string(::getpid()) + ".jsonl", std::ios::app) << text << "\n";
}

void RecordExchanges(httplib::Client& client) { client.set_logger(RecordExchange); }

}  // namespace webhookd::testing
