#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <thread>

namespace webhookd::testing {

// An HTTPS receiver on 127.0.0.1 written on OpenSSL directly: it answers every request
// 200 and closes the connection. With `client_ca` (a PEM file), the TLS handshake requires
// a client certificate signed by that CA, and one without is refused in the handshake.
class TlsReceiver {
 public:
  TlsReceiver(const std::string& cert_file, const std::string& key_file,
              const std::optional<std::string>& client_ca_file);
  ~TlsReceiver();
  TlsReceiver(const TlsReceiver&) = delete;
  TlsReceiver& operator=(const TlsReceiver&) = delete;

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  int answered() const { return answered_.load(); }
  int refused_handshakes() const { return refused_.load(); }
  // The client may see the refusal before the receiver's thread has counted it (with TLS
  // 1.3 the alert is sent before SSL_accept returns): wait up to 5 s for `n` refusals.
  int AwaitRefusedHandshakes(int n) const;

 private:
  void Serve();

  void* ctx_ = nullptr;  // SSL_CTX*
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> answered_{0};
  std::atomic<int> refused_{0};
  std::thread thread_;
};

}  // namespace webhookd::testing
