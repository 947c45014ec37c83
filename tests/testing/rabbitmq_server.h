#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "tests/testing/process.h"

namespace webhookd::testing {

// A message as a queue gave it back (basic.get).
struct AmqpMessage {
  std::string body;
  std::string exchange;
  std::string routing_key;
  std::string content_type;
  std::string message_id;
  int delivery_mode = 0;
  std::map<std::string, std::string> headers;  // the headers table's string entries
};

// Debian's rabbitmq-server on free loopback ports, with its node, data and logs in a
// temporary directory of its own, so that several run side by side and none touches the
// system's. Its user is guest/guest. Startup takes seconds (an Erlang node and a fresh
// database): a suite starts one and shares it.
class RabbitMqServer {
 public:
  // PEM files for an amqps listener besides the plain one; none when `certificate` is
  // empty.
  struct Tls {
    std::string certificate;
    std::string key;
    std::string ca;
  };

  // Starts it; a test failure if it is not up within a minute.
  explicit RabbitMqServer(Tls tls = {});
  ~RabbitMqServer();
  RabbitMqServer(const RabbitMqServer&) = delete;
  RabbitMqServer& operator=(const RabbitMqServer&) = delete;

  // Starts it again (on the same ports, with the same data) after Stop; true once an AMQP
  // login works.
  bool Start();
  // Kills the node and every process it made; its port refuses connections afterwards.
  void Stop();
  // SIGSTOP / SIGCONT to the node's processes: a broker that accepts and never answers.
  void Pause();
  void Resume();

  int port() const { return port_; }
  std::string url() const { return "amqp://127.0.0.1:" + std::to_string(port_); }
  int tls_port() const { return tls_port_; }  // 0 without Tls

  // Administration as guest, through librabbitmq; each a test failure when refused.
  void DeclareExchange(const std::string& exchange, const std::string& type = "direct");
  void DeleteExchange(const std::string& exchange);
  // Declares `queue` (empty) and binds it to `exchange` with `binding_key`; the default
  // exchange "" binds every queue by its name already.
  void DeclareQueue(const std::string& queue, const std::string& exchange = "",
                    const std::string& binding_key = "");
  // The queue's next message, taken off it; nullopt when it is empty.
  std::optional<AmqpMessage> Get(const std::string& queue);

 private:
  std::map<std::string, std::string> Environment() const;
  bool LoginWorks() const;

  int port_;
  int tls_port_ = 0;
  int dist_port_;
  int epmd_port_;
  std::string dir_;
  std::unique_ptr<Process> epmd_;
  std::unique_ptr<Process> node_;
};

}  // namespace webhookd::testing
