#include "tests/testing/redis_server.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

namespace webhookd::testing {

using namespace std::chrono_literals;

RedisServer::RedisServer(std::vector<std::string> extra)
    : port_(FreePort()), extra_(std::move(extra)) {
  Start();
}

void RedisServer::Start() {
  std::vector<std::string> argv = {
      "/usr/bin/redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
      "--appendonly",          "no"};
  argv.insert(argv.end(), extra_.begin(), extra_.end());
  const char* dir = std::getenv("WEBHOOKD_TEST_LOG_DIR");
  process_ = std::make_unique<Process>(
      argv, std::map<std::string, std::string>{},
      std::string(dir != nullptr ? dir : "/tmp") + "/redis-" + std::to_string(port_) + ".log");
  for (int i = 0; i < 200; ++i) {
    if (redisContext* c = redisConnect("127.0.0.1", port_); c != nullptr) {
      const bool up = c->err == 0;
      redisFree(c);
      if (up) return;
    }
    std::this_thread::sleep_for(25ms);
  }
  ADD_FAILURE() << "redis-server did not start on port " << port_;
}

void RedisServer::Stop() {
  process_->Signal(SIGKILL);
  process_->Wait(5s);
}

void RedisServer::Pause() { process_->Signal(SIGSTOP); }

void RedisServer::Resume() { process_->Signal(SIGCONT); }

std::vector<std::vector<std::pair<std::string, std::string>>> RedisServer::Entries(
    const std::string& stream, const std::string& password) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  redisContext* c = redisConnect("127.0.0.1", port_);
  if (c == nullptr) return out;
  if (!password.empty()) freeReplyObject(redisCommand(c, "AUTH %s", password.c_str()));
  auto* r = static_cast<redisReply*>(redisCommand(c, "XRANGE %s - +", stream.c_str()));
  for (size_t i = 0; r != nullptr && r->type == REDIS_REPLY_ARRAY && i < r->elements; ++i) {
    const redisReply* fields = r->element[i]->element[1];
    std::vector<std::pair<std::string, std::string>> entry;
    for (size_t j = 0; j + 1 < fields->elements; j += 2) {
      entry.emplace_back(std::string(fields->element[j]->str, fields->element[j]->len),
                         std::string(fields->element[j + 1]->str, fields->element[j + 1]->len));
    }
    out.push_back(std::move(entry));
  }
  if (r != nullptr) freeReplyObject(r);
  redisFree(c);
  return out;
}

}  // namespace webhookd::testing
