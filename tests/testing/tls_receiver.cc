#include "tests/testing/tls_receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace webhookd::testing {
namespace {

SSL_CTX* Ctx(void* p) { return static_cast<SSL_CTX*>(p); }

}  // namespace

TlsReceiver::TlsReceiver(const std::string& cert_file, const std::string& key_file,
                         const std::optional<std::string>& client_ca_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  ctx_ = ctx;
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    throw std::runtime_error("TlsReceiver: cannot load " + cert_file);
  }
  if (client_ca_file) {
    if (SSL_CTX_load_verify_locations(ctx, client_ca_file->c_str(), nullptr) != 1) {
      throw std::runtime_error("TlsReceiver: cannot load " + *client_ca_file);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    // Without it OpenSSL refuses to resume a session of a verified client, which clients
    // (curl among them) try on their next connection.
    static const unsigned char kContext[] = "webhookd-test";
    SSL_CTX_set_session_id_context(ctx, kContext, sizeof(kContext) - 1);
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("TlsReceiver: cannot listen");
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

int TlsReceiver::AwaitRefusedHandshakes(int n) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (refused_.load() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return refused_.load();
}

TlsReceiver::~TlsReceiver() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
  SSL_CTX_free(Ctx(ctx_));
}

void TlsReceiver::Serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    SSL* ssl = SSL_new(Ctx(ctx_));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {
      ++refused_;
    } else {
      // The request: headers, then Content-Length bytes of body.
      std::string in;
      char buf[4096];
      size_t need = std::string::npos;
      while (true) {
        const int n = SSL_read(ssl, buf, sizeof(buf));
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
        const size_t end = in.find("\r\n\r\n");
        if (end != std::string::npos && need == std::string::npos) {
          size_t length = 0;
          const size_t at = in.find("Content-Length: ");
          if (at != std::string::npos && at < end) length = std::stoul(in.substr(at + 16));
          need = end + 4 + length;
        }
        if (need != std::string::npos && in.size() >= need) break;
      }
      if (need != std::string::npos && in.size() >= need) {
        const std::string answer =
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        // Counted before it is sent: a sender that has the answer finds it counted.
        ++answered_;
        SSL_write(ssl, answer.data(), static_cast<int>(answer.size()));
      }
      SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    ERR_clear_error();
    ::close(fd);
  }
}

}  // namespace webhookd::testing
