#include "tests/testing/webhookd_process.h"

#include <sys/stat.h>

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <thread>

#include "tests/testing/exchange_log.h"

namespace webhookd::testing {
namespace {

std::string RandomKey() {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::string key = "whk_test_";
  for (int i = 0; i < 40; ++i) key += kChars[rd() % (sizeof(kChars) - 1)];
  return key;
}

std::string Unique() {
  std::random_device rd;
  return std::to_string(rd()) + std::to_string(rd());
}

}  // namespace

std::string WebhookdBinary() {
  const char* bin = std::getenv("WEBHOOKD_BIN");
  if (bin == nullptr || *bin == '\0')
    throw std::runtime_error("WEBHOOKD_BIN is not set: run scripts/test");
  return bin;
}

std::string TestLogDir() {
  const char* dir = std::getenv("WEBHOOKD_TEST_LOG_DIR");
  std::string path = (dir != nullptr && *dir != '\0') ? dir : "/tmp/webhookd-test-logs";
  ::mkdir(path.c_str(), 0755);
  return path;
}

WebhookdProcess::WebhookdProcess(const std::string& database_url, std::string mode,
                                 std::map<std::string, std::string> env,
                                 std::vector<std::string> wrapper)
    : admin_key_(RandomKey()) {
  const bool port_given = env.contains("WEBHOOKD_ADDR");
  // A free port can be taken by another process before webhookd binds it: then, unless
  // the test chose the address, webhookd is started again on another.
  for (int attempt = 1;; ++attempt) {
    port_ = FreePort();
    std::map<std::string, std::string> full = {
        {"DATABASE_URL", database_url},
        {"WEBHOOKD_ADDR", "127.0.0.1:" + std::to_string(port_)},
        {"WEBHOOKD_WORKER_ADDR", "127.0.0.1:0"},
        {"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "true"},
        {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", admin_key_},
        {"WEBHOOKD_LOG_LEVEL", "debug"},
    };
    for (auto& [k, v] : env) full[k] = v;
    if (auto it = full.find("WEBHOOKD_BOOTSTRAP_ADMIN_KEY"); it != full.end())
      admin_key_ = it->second;
    if (auto it = full.find("WEBHOOKD_ADDR"); it != full.end()) {
      port_ = std::stoi(it->second.substr(it->second.rfind(':') + 1));
    }
    log_path_ = TestLogDir() + "/webhookd-" + mode + "-" + Unique() + ".log";
    std::vector<std::string> argv = wrapper;
    argv.push_back(WebhookdBinary());
    argv.push_back(mode);
    process_ = std::make_unique<Process>(std::move(argv), full, log_path_);
    if (mode == "worker" || WaitHealthy()) return;
    const bool clash =
        !process_->Running() &&
        ReadFile(log_path_).find("WEBHOOKD_ADDR: cannot listen on") != std::string::npos;
    if (!clash || port_given || attempt == 5) break;
  }
  throw std::runtime_error("webhookd did not become healthy; log: " + log_path_ + "\n" +
                           ReadFile(log_path_));
}

bool WebhookdProcess::WaitHealthy() {
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(0, 200000);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto res = client.Get("/healthz"); res && res->status == 200) {
      // The bootstrap key is stored in the background: wait until it works.
      httplib::Headers auth = {{"Authorization", "Bearer " + admin_key_}};
      if (auto r = client.Get("/v1/destinations?limit=1", auth); r && r->status == 200) {
        return true;
      }
    }
    if (!process_->Running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::unique_ptr<httplib::Client> WebhookdProcess::Client(const std::string& key) const {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port_);
  client->set_read_timeout(30, 0);
  client->set_bearer_token_auth((key.empty() ? admin_key_ : key).c_str());
  RecordExchanges(*client);
  return client;
}

httplib::Response WebhookdProcess::Call(const std::string& method, const std::string& path,
                                        const nlohmann::json& body, const std::string& key) const {
  auto client = Client(key);
  const std::string text = body.is_null() ? "" : body.dump();
  auto r = [&]() -> httplib::Result {
    if (method == "GET") return client->Get(path.c_str());
    if (method == "POST") return client->Post(path.c_str(), text, "application/json");
    if (method == "PATCH") return client->Patch(path.c_str(), text, "application/json");
    if (method == "DELETE") return client->Delete(path.c_str());
    throw std::invalid_argument("method " + method);
  }();
  if (!r) return httplib::Response{};
  return r.value();
}

std::pair<int, std::string> WebhookdProcess::RunCommand(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  const std::string log = TestLogDir() + "/command-" + Unique() + ".log";
  std::vector<std::string> argv = {WebhookdBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, env, log);
  auto code = p.Wait(std::chrono::seconds(60));
  return {code.value_or(-1), ReadFile(log)};
}

std::string WebhookdProcess::CreateKey(const std::string& database_url,
                                       const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"keys", "create"};
  args.insert(args.end(), flags.begin(), flags.end());
  const auto [code, out] = RunCommand(args, {{"DATABASE_URL", database_url}});
  if (code != 0) return "";
  const size_t end = out.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t start = out.rfind('\n', end);
  return out.substr(start == std::string::npos ? 0 : start + 1,
                    start == std::string::npos ? end + 1 : end - start);
}

}  // namespace webhookd::testing
