#include "tests/testing/nats_server.h"

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace webhookd::testing {

namespace {

using namespace std::chrono_literals;

// A client connection with its JetStream context, closed with its scope.
class Client {
 public:
  Client(int port, const NatsServer::Options& server) {
    natsOptions* opts = nullptr;
    const std::string url = "nats://127.0.0.1:" + std::to_string(port);
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = natsOptions_SetURL(opts, url.c_str());
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 500);
    // The fixture trusts its own server; what the transport checks is its business.
    if (s == NATS_OK && !server.tls_cert.empty()) s = natsOptions_SetSecure(opts, true);
    if (s == NATS_OK && !server.tls_cert.empty())
      s = natsOptions_SkipServerVerification(opts, true);
    if (s == NATS_OK && !server.token.empty()) s = natsOptions_SetToken(opts, server.token.c_str());
    if (s == NATS_OK && !server.password.empty()) {
      s = natsOptions_SetUserInfo(opts, server.user.c_str(), server.password.c_str());
    }
    if (s == NATS_OK) s = natsConnection_Connect(&nc_, opts);
    natsOptions_Destroy(opts);
    if (s == NATS_OK) s = natsConnection_JetStream(&js_, nc_, nullptr);
    status_ = s;
  }
  ~Client() {
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool ok() const { return status_ == NATS_OK; }
  std::string error() const {
    natsStatus last = NATS_OK;
    const char* text = nats_GetLastError(&last);
    return text != nullptr && *text != '\0' ? text : natsStatus_GetText(status_);
  }
  jsCtx* js() const { return js_; }

 private:
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  natsStatus status_ = NATS_ERR;
};

StoredMessage ToStored(natsMsg* msg) {
  StoredMessage stored;
  stored.subject = natsMsg_GetSubject(msg);
  stored.data.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  const char** keys = nullptr;
  int key_count = 0;
  if (natsMsgHeader_Keys(msg, &keys, &key_count) != NATS_OK) return stored;
  for (int i = 0; i < key_count; ++i) {
    const char** values = nullptr;
    int value_count = 0;
    if (natsMsgHeader_Values(msg, keys[i], &values, &value_count) != NATS_OK) continue;
    for (int j = 0; j < value_count; ++j) stored.headers.emplace(keys[i], values[j]);
    free(static_cast<void*>(values));
  }
  free(static_cast<void*>(keys));
  return stored;
}

}  // namespace

NatsServer::NatsServer(Options options) : options_(std::move(options)) {
  char dir[] = "/tmp/webhookd-nats-XXXXXX";
  if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = dir;
  port_ = FreePort();
  if (!Start()) ADD_FAILURE() << "nats-server did not start on port " << port_;
}

NatsServer::~NatsServer() {
  process_.reset();
  std::system(("rm -rf '" + dir_ + "'").c_str());
}

bool NatsServer::Start() {
  std::vector<std::string> argv = {
      "/usr/sbin/nats-server", "-js", "-a",           "127.0.0.1", "-p",
      std::to_string(port_),   "-sd", dir_ + "/store"};
  if (!options_.password.empty()) {
    argv.insert(argv.end(), {"--user", options_.user, "--pass", options_.password});
  }
  if (!options_.token.empty()) argv.insert(argv.end(), {"--auth", options_.token});
  if (!options_.tls_cert.empty()) {
    argv.insert(argv.end(),
                {"--tls", "--tlscert", options_.tls_cert, "--tlskey", options_.tls_key});
  }
  const char* log_dir = std::getenv("WEBHOOKD_TEST_LOG_DIR");
  process_ = std::make_unique<Process>(argv, std::map<std::string, std::string>{},
                                       std::string(log_dir != nullptr ? log_dir : dir_.c_str()) +
                                           "/nats-" + std::to_string(port_) + ".log");
  // Up when a client gets JetStream's account info, not merely a TCP accept.
  for (int i = 0; i < 200; ++i) {
    Client client(port_, options_);
    jsAccountInfo* info = nullptr;
    if (client.ok() && js_GetAccountInfo(&info, client.js(), nullptr, nullptr) == NATS_OK) {
      jsAccountInfo_Destroy(info);
      return true;
    }
    std::this_thread::sleep_for(25ms);
  }
  return false;
}

void NatsServer::Stop() {
  process_->Signal(SIGKILL);
  process_->Wait(5s);
}

void NatsServer::Pause() { StopAndWait(process_->pid()); }

void NatsServer::Resume() { process_->Signal(SIGCONT); }

bool NatsServer::AddStream(const std::string& name, const std::vector<std::string>& subjects) {
  Client client(port_, options_);
  if (!client.ok()) {
    ADD_FAILURE() << "cannot connect to nats-server: " << client.error();
    return false;
  }
  std::vector<const char*> subject_ptrs;
  for (const std::string& s : subjects) subject_ptrs.push_back(s.c_str());
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = name.c_str();
  config.Subjects = subject_ptrs.data();
  config.SubjectsLen = static_cast<int>(subject_ptrs.size());
  config.Storage = js_FileStorage;
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  if (js_AddStream(&info, client.js(), &config, nullptr, &code) != NATS_OK) {
    ADD_FAILURE() << "js_AddStream " << name << ": " << client.error();
    return false;
  }
  jsStreamInfo_Destroy(info);
  return true;
}

std::vector<StoredMessage> NatsServer::Messages(const std::string& stream) {
  std::vector<StoredMessage> out;
  Client client(port_, options_);
  jsStreamInfo* info = nullptr;
  if (!client.ok() ||
      js_GetStreamInfo(&info, client.js(), stream.c_str(), nullptr, nullptr) != NATS_OK) {
    ADD_FAILURE() << "cannot read stream " << stream << ": " << client.error();
    return out;
  }
  const uint64_t first = info->State.FirstSeq;
  const uint64_t last = info->State.Msgs == 0 ? 0 : info->State.LastSeq;
  jsStreamInfo_Destroy(info);
  for (uint64_t seq = first; seq != 0 && seq <= last; ++seq) {
    natsMsg* msg = nullptr;
    if (js_GetMsg(&msg, client.js(), stream.c_str(), seq, nullptr, nullptr) != NATS_OK) continue;
    out.push_back(ToStored(msg));
    natsMsg_Destroy(msg);
  }
  return out;
}

}  // namespace webhookd::testing
