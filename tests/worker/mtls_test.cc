// CurlSender with a destination's TLS settings against a real HTTPS receiver that requires
// a client certificate (tests/testing/tls_receiver.h), with certificates the test makes:
// the right certificate is presented, none or a stranger's is refused in the handshake
// (a retryable error, not a refusal of the address), and the destination's CA alone is
// trusted for the receiver's certificate.
#include <gtest/gtest.h>

#include "tests/testing/test_pki.h"
#include "tests/testing/tls_receiver.h"
#include "worker/curl_sender.h"

namespace webhookd::mtls_test {
namespace {

using namespace std::chrono_literals;
using testing::TestPki;
using testing::TlsReceiver;

CurlSender::Options Options() {
  CurlSender::Options o;
  o.allow_private = true;
  o.connect_timeout = 2s;
  o.attempt_timeout = 5s;
  return o;
}

Outgoing Post(const std::string& url, std::optional<DestinationTls> tls) {
  Outgoing out{url, {{"Content-Type", "application/json"}}, R"({"a":1})"};
  out.tls = std::move(tls);
  return out;
}

TEST(MtlsTest, TheClientCertificateIsPresentedAndItsAbsenceRefusedInTheHandshake) {
  TestPki pki;
  TlsReceiver receiver(pki.Path("server.pem"), pki.Path("server.key"), pki.Path("ca.pem"));
  CurlSender sender(Options());
  const DestinationTls right{pki.Pem("client.pem"), pki.Pem("client.key"), pki.Pem("ca.pem")};
  SendResult r = sender.Send(Post(receiver.url(), right));
  EXPECT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  EXPECT_EQ(receiver.answered(), 1);

  // No client certificate, or one of another CA: the receiver refuses the handshake.
  for (const DestinationTls& wrong :
       {DestinationTls{std::nullopt, std::nullopt, pki.Pem("ca.pem")},
        DestinationTls{pki.Pem("other_client.pem"), pki.Pem("other_client.key"),
                       pki.Pem("ca.pem")}}) {
    r = sender.Send(Post(receiver.url(), wrong));
    EXPECT_FALSE(r.status_code.has_value());
    EXPECT_FALSE(r.refused);  // retryable: the receiver's TLS said no, not the address rule
    // With TLS 1.3 the refusal arrives after the client's half of the handshake, so curl
    // may report it as a TLS error or as the connection failing under it.
    EXPECT_TRUE(r.error.has_value());
  }
  EXPECT_EQ(receiver.answered(), 1);
  EXPECT_EQ(receiver.AwaitRefusedHandshakes(2), 2);
}

TEST(MtlsTest, TheDestinationsCaAloneIsTrustedForTheReceiver) {
  TestPki pki;
  TlsReceiver receiver(pki.Path("server.pem"), pki.Path("server.key"), std::nullopt);
  CurlSender sender(Options());
  // Without a CA of its own the system's are used, which do not know the test CA.
  SendResult r = sender.Send(Post(receiver.url(), std::nullopt));
  EXPECT_FALSE(r.status_code.has_value());
  EXPECT_NE(r.error.value_or("").find("SSL"), std::string::npos) << r.error.value_or("");
  // Another CA than the one that signed the receiver's certificate: refused too.
  r = sender.Send(
      Post(receiver.url(), DestinationTls{std::nullopt, std::nullopt, pki.Pem("other_ca.pem")}));
  EXPECT_FALSE(r.status_code.has_value());
  // The right one: trusted, and the host name still checked against the certificate.
  r = sender.Send(
      Post(receiver.url(), DestinationTls{std::nullopt, std::nullopt, pki.Pem("ca.pem")}));
  EXPECT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
}

}  // namespace
}  // namespace webhookd::mtls_test
