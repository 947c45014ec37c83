#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/process.h"

namespace webhookd::testing {

// A message as a JetStream stream stored it.
struct StoredMessage {
  std::string subject;
  std::string data;
  std::multimap<std::string, std::string> headers;  // each value of each header
};

// A real NATS server with JetStream, Debian's nats-server (scripts/test installs it), on a
// free loopback port, its store in a directory of its own. Stop and Start keep the port
// and the store, so the streams and their messages come back.
class NatsServer {
 public:
  struct Options {
    std::string user;      // with password: clients must present both
    std::string password;  // empty: no authentication
    std::string token;     // clients must present it (instead of user and password)
    std::string tls_cert;  // with tls_key (PEM files): clients must use TLS
    std::string tls_key;
  };

  explicit NatsServer(Options options);  // started; a test failure if it does not answer
  NatsServer() : NatsServer(Options{}) {}
  ~NatsServer();
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  // Waits (boundedly) until it accepts clients with JetStream up; false if it never did.
  bool Start();
  void Stop();    // SIGKILL: no goodbye to its clients
  void Pause();   // SIGSTOP: it holds connections and answers nothing
  void Resume();  // SIGCONT

  // A stream over `subjects`, file-backed with the default duplicate window (2 minutes);
  // false, with the server's words as a test failure, if JetStream refused it.
  bool AddStream(const std::string& name, const std::vector<std::string>& subjects);
  // Every message `stream` holds, by sequence.
  std::vector<StoredMessage> Messages(const std::string& stream);

 private:
  Options options_;
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Process> process_;
};

}  // namespace webhookd::testing
