#include "tests/testing/dns_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <vector>

namespace webhookd::testing {
namespace {

constexpr uint16_t kTypeA = 1;

uint16_t Read16(const unsigned char* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

void Put16(std::string& out, uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v & 0xff);
}

}  // namespace

DnsServer::DnsServer(std::string address, std::map<std::string, std::string> answers,
                     std::set<std::string> silent)
    : address_(std::move(address)), answers_(std::move(answers)), silent_(std::move(silent)) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(53);
  ::inet_pton(AF_INET, address_.c_str(), &sa.sin_addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    if (fd >= 0) ::close(fd);
    return;
  }
  fd_ = fd;
  thread_ = std::thread([this] { Serve(); });
}

DnsServer::~DnsServer() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

std::string DnsServer::WriteResolvConf(const std::string& dir) const {
  const std::string path = dir + "/resolv.conf";
  std::ofstream(path) << "nameserver " << address_ << "\noptions timeout:30 attempts:1\n";
  return path;
}

std::vector<std::string> DnsServer::WithResolvConf(const std::string& resolv_conf) {
  return {"/usr/bin/unshare",
          "--mount",
          "--propagation",
          "private",
          "--",
          "sh",
          "-c",
          "mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"",
          resolv_conf};
}

void DnsServer::Serve() {
  std::vector<unsigned char> buf(1500);
  while (!stopping_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    sockaddr_in from{};
    socklen_t from_len = sizeof(from);
    const ssize_t n =
        ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 12) continue;
    ++queries_;
    // The question: labels up to a zero, then type and class.
    std::string name;
    size_t at = 12;
    while (at < static_cast<size_t>(n) && buf[at] != 0) {
      const size_t len = buf[at];
      if (at + 1 + len > static_cast<size_t>(n)) break;
      if (!name.empty()) name += '.';
      for (size_t i = 0; i < len; ++i) {
        name += static_cast<char>(std::tolower(buf[at + 1 + i]));
      }
      at += 1 + len;
    }
    const size_t question_end = at + 5;  // the zero, type, class
    if (question_end > static_cast<size_t>(n)) continue;
    if (silent_.contains(name)) continue;
    const uint16_t type = Read16(&buf[at + 1]);
    const auto answer = answers_.find(name);
    std::string out(reinterpret_cast<const char*>(buf.data()), 2);  // the query's id
    Put16(out, answer == answers_.end() ? 0x8183 : 0x8180);         // a response; NXDOMAIN
    Put16(out, 1);
    const bool with_a = answer != answers_.end() && type == kTypeA;
    Put16(out, with_a ? 1 : 0);
    Put16(out, 0);
    Put16(out, 0);
    out.append(reinterpret_cast<const char*>(buf.data()) + 12, question_end - 12);
    if (with_a) {
      Put16(out, 0xC00C);  // the name, by reference to the question's
      Put16(out, kTypeA);
      Put16(out, 1);  // IN
      Put16(out, 0);
      Put16(out, 60);  // TTL
      Put16(out, 4);
      in_addr ip{};
      ::inet_pton(AF_INET, answer->second.c_str(), &ip);
      out.append(reinterpret_cast<const char*>(&ip), 4);
    }
    ::sendto(fd_, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), from_len);
  }
}

}  // namespace webhookd::testing
