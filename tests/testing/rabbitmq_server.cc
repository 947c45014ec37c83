#include "tests/testing/rabbitmq_server.h"

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace webhookd::testing {

namespace {

using namespace std::chrono_literals;

constexpr auto kStartupTimeout = 60s;

amqp_bytes_t Bytes(const std::string& s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}

std::string Text(amqp_bytes_t b) { return std::string(static_cast<const char*>(b.bytes), b.len); }

std::string Describe(const amqp_rpc_reply_t& reply) {
  switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return "ok";
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      return amqp_error_string2(reply.library_error);
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
        return Text(static_cast<amqp_connection_close_t*>(reply.reply.decoded)->reply_text);
      }
      if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        return Text(static_cast<amqp_channel_close_t*>(reply.reply.decoded)->reply_text);
      }
      return "a server exception";
    case AMQP_RESPONSE_NONE:
      break;
  }
  return "no reply";
}

// A guest connection with channel 1 open, for administration; `ok` says whether it got
// that far.
class Admin {
 public:
  explicit Admin(int port) : conn_(amqp_new_connection()) {
    amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
    timeval tv{5, 0};
    if (socket == nullptr || amqp_socket_open_noblock(socket, "127.0.0.1", port, &tv) != 0) {
      error_ = "cannot connect";
      return;
    }
    amqp_set_handshake_timeout(conn_, &tv);
    amqp_set_rpc_timeout(conn_, &tv);
    if (!Check(amqp_login(conn_, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest"))) {
      return;
    }
    amqp_channel_open(conn_, 1);
    channel_ = Check(amqp_get_rpc_reply(conn_));
  }
  ~Admin() {
    if (channel_) {
      amqp_channel_close(conn_, 1, AMQP_REPLY_SUCCESS);
      amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    }
    amqp_destroy_connection(conn_);
  }
  Admin(const Admin&) = delete;
  Admin& operator=(const Admin&) = delete;

  bool ok() const { return channel_; }
  const std::string& error() const { return error_; }
  amqp_connection_state_t conn() { return conn_; }

  // Whether the last RPC succeeded; a test failure naming `what` when it did not.
  bool Check(const amqp_rpc_reply_t& reply, const std::string& what = "") {
    if (reply.reply_type == AMQP_RESPONSE_NORMAL) return true;
    error_ = Describe(reply);
    if (!what.empty()) ADD_FAILURE() << "rabbitmq: " << what << ": " << error_;
    return false;
  }
  bool Check(const std::string& what) { return Check(amqp_get_rpc_reply(conn_), what); }

 private:
  amqp_connection_state_t conn_;
  bool channel_ = false;
  std::string error_;
};

}  // namespace

RabbitMqServer::RabbitMqServer(Tls tls)
    : port_(FreePort()), dist_port_(FreePort()), epmd_port_(FreePort()) {
  char tmpl[] = "/tmp/webhookd-rabbitmq-XXXXXX";
  dir_ = ::mkdtemp(tmpl);
  // The ports are the node's alone, and on loopback; no plugins (management would take a
  // port of its own); publishing must not stop for a nearly full disk of a test machine.
  std::ofstream(dir_ + "/rabbitmq.conf") << "listeners.tcp.default = 127.0.0.1:" << port_ << "\n"
                                         << "disk_free_limit.absolute = 1MB\n"
                                         << "log.console = true\n"
                                         << "log.file = false\n";
  if (!tls.certificate.empty()) {
    tls_port_ = FreePort();
    std::ofstream(dir_ + "/rabbitmq.conf", std::ios::app)
        << "listeners.ssl.default = 127.0.0.1:" << tls_port_ << "\n"
        << "ssl_options.certfile = " << tls.certificate << "\n"
        << "ssl_options.keyfile = " << tls.key << "\n"
        << "ssl_options.cacertfile = " << tls.ca << "\n"
        << "ssl_options.verify = verify_none\n"
        << "ssl_options.fail_if_no_peer_cert = false\n";
  }
  std::ofstream(dir_ + "/enabled_plugins") << "[].\n";
  std::ofstream(dir_ + "/rabbitmq-env.conf") << "";
  // Our own epmd, in the foreground, so that none is left behind: the node would start a
  // daemon of its own that outlives it.
  epmd_ = std::make_unique<Process>(
      std::vector<std::string>{"/usr/bin/epmd", "-port", std::to_string(epmd_port_), "-address",
                               "127.0.0.1"},
      std::map<std::string, std::string>{}, dir_ + "/epmd.log");
  if (!Start()) {
    ADD_FAILURE() << "rabbitmq-server did not start on port " << port_ << "; see "
                  << node_->log_path();
  }
}

RabbitMqServer::~RabbitMqServer() {
  Stop();
  epmd_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::map<std::string, std::string> RabbitMqServer::Environment() const {
  return {
      {"HOME", dir_},  // the Erlang cookie's home
      {"ERL_EPMD_PORT", std::to_string(epmd_port_)},
      {"RABBITMQ_NODENAME", "rabbit-" + std::to_string(port_) + "@localhost"},
      {"RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1"},
      {"RABBITMQ_NODE_PORT", std::to_string(port_)},
      {"RABBITMQ_DIST_PORT", std::to_string(dist_port_)},
      {"RABBITMQ_CONFIG_FILE", dir_ + "/rabbitmq.conf"},
      {"RABBITMQ_CONF_ENV_FILE", dir_ + "/rabbitmq-env.conf"},
      {"RABBITMQ_ADVANCED_CONFIG_FILE", dir_ + "/advanced.config"},
      {"RABBITMQ_ENABLED_PLUGINS_FILE", dir_ + "/enabled_plugins"},
      {"RABBITMQ_MNESIA_BASE", dir_ + "/mnesia"},
      {"RABBITMQ_LOG_BASE", dir_ + "/log"},
      {"RABBITMQ_PID_FILE", dir_ + "/rabbitmq.pid"},
      {"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS",
       "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}"},
  };
}

bool RabbitMqServer::Start() {
  const char* log_dir = std::getenv("WEBHOOKD_TEST_LOG_DIR");
  const std::string log = (log_dir != nullptr ? std::string(log_dir) : dir_) + "/rabbitmq-" +
                          std::to_string(port_) + ".log";
  // setsid: the node's shell, beam and their helpers share a process group, so that Stop
  // and Pause reach them all.
  node_ = std::make_unique<Process>(
      std::vector<std::string>{"/usr/bin/setsid", "/usr/lib/rabbitmq/bin/rabbitmq-server"},
      Environment(), log);
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  while (std::chrono::steady_clock::now() < deadline && node_->Running()) {
    if (LoginWorks()) return true;
    std::this_thread::sleep_for(250ms);
  }
  return false;
}

void RabbitMqServer::Stop() {
  if (!node_) return;
  ::kill(-node_->pid(), SIGKILL);
  node_->Wait(10s);
  // What the node made in a session of its own (erl_child_setup, inet_gethost) ends with
  // it, as their pipes to it close; wait until the port is free again.
  for (int i = 0; i < 100 && LoginWorks(); ++i) std::this_thread::sleep_for(50ms);
  node_.reset();
}

void RabbitMqServer::Pause() { StopAndWait(node_->pid(), /*group=*/true); }

void RabbitMqServer::Resume() { ::kill(-node_->pid(), SIGCONT); }

bool RabbitMqServer::LoginWorks() const { return Admin(port_).ok(); }

void RabbitMqServer::DeclareExchange(const std::string& exchange, const std::string& type) {
  Admin admin(port_);
  ASSERT_TRUE(admin.ok()) << admin.error();
  amqp_exchange_declare(admin.conn(), 1, Bytes(exchange), Bytes(type), /*passive=*/0,
                        /*durable=*/0, /*auto_delete=*/0, /*internal=*/0, amqp_empty_table);
  admin.Check("exchange.declare " + exchange);
}

void RabbitMqServer::DeleteExchange(const std::string& exchange) {
  Admin admin(port_);
  ASSERT_TRUE(admin.ok()) << admin.error();
  amqp_exchange_delete(admin.conn(), 1, Bytes(exchange), /*if_unused=*/0);
  admin.Check("exchange.delete " + exchange);
}

void RabbitMqServer::DeclareQueue(const std::string& queue, const std::string& exchange,
                                  const std::string& binding_key) {
  Admin admin(port_);
  ASSERT_TRUE(admin.ok()) << admin.error();
  amqp_queue_declare(admin.conn(), 1, Bytes(queue), /*passive=*/0, /*durable=*/0,
                     /*exclusive=*/0, /*auto_delete=*/0, amqp_empty_table);
  if (!admin.Check("queue.declare " + queue)) return;
  amqp_queue_purge(admin.conn(), 1, Bytes(queue));
  if (!admin.Check("queue.purge " + queue)) return;
  if (exchange.empty()) return;
  amqp_queue_bind(admin.conn(), 1, Bytes(queue), Bytes(exchange), Bytes(binding_key),
                  amqp_empty_table);
  admin.Check("queue.bind " + queue);
}

std::optional<AmqpMessage> RabbitMqServer::Get(const std::string& queue) {
  Admin admin(port_);
  if (!admin.ok()) {
    ADD_FAILURE() << "rabbitmq: " << admin.error();
    return std::nullopt;
  }
  const amqp_rpc_reply_t reply = amqp_basic_get(admin.conn(), 1, Bytes(queue), /*no_ack=*/1);
  if (!admin.Check(reply, "basic.get " + queue)) return std::nullopt;
  if (reply.reply.id != AMQP_BASIC_GET_OK_METHOD) return std::nullopt;  // get-empty
  const auto* ok = static_cast<amqp_basic_get_ok_t*>(reply.reply.decoded);
  AmqpMessage out;
  out.exchange = Text(ok->exchange);
  out.routing_key = Text(ok->routing_key);
  amqp_message_t message{};
  if (!admin.Check(amqp_read_message(admin.conn(), 1, &message, 0), "reading a message")) {
    return std::nullopt;
  }
  out.body = Text(message.body);
  const amqp_basic_properties_t& p = message.properties;
  if (p._flags & AMQP_BASIC_CONTENT_TYPE_FLAG) out.content_type = Text(p.content_type);
  if (p._flags & AMQP_BASIC_MESSAGE_ID_FLAG) out.message_id = Text(p.message_id);
  if (p._flags & AMQP_BASIC_DELIVERY_MODE_FLAG) out.delivery_mode = p.delivery_mode;
  if (p._flags & AMQP_BASIC_HEADERS_FLAG) {
    for (int i = 0; i < p.headers.num_entries; ++i) {
      const amqp_table_entry_t& e = p.headers.entries[i];
      if (e.value.kind == AMQP_FIELD_KIND_UTF8 || e.value.kind == AMQP_FIELD_KIND_BYTES) {
        out.headers[Text(e.key)] = Text(e.value.value.bytes);
      }
    }
  }
  amqp_destroy_message(&message);
  return out;
}

}  // namespace webhookd::testing
