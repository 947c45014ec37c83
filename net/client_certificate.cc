#include "net/client_certificate.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>
#include <vector>

namespace webhookd {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio Read(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// The first certificate of `pem`; a password callback that refuses keeps OpenSSL from
// ever prompting.
Cert FirstCertificate(const std::string& pem) {
  Bio bio = Read(pem);
  return Cert(PEM_read_bio_X509(
      bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
}

}  // namespace

std::optional<Timestamp> CertificateExpiry(const std::string& pem) {
  Cert cert = FirstCertificate(pem);
  ERR_clear_error();
  if (!cert) return std::nullopt;
  struct tm tm {};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) != 1) return std::nullopt;
  return Timestamp(std::chrono::seconds(timegm(&tm)));
}

Result<std::optional<Timestamp>> CheckTlsSettings(
    const std::optional<std::string>& client_certificate,
    const std::optional<std::string>& client_key,
    const std::optional<std::string>& ca_certificate) {
  std::vector<FieldError> errors;
  Cert cert;
  if (client_certificate) {
    cert = FirstCertificate(*client_certificate);
    if (!cert) errors.push_back({"tls.client_certificate", "is not a PEM certificate"});
    if (!client_key)
      errors.push_back({"tls.client_key", "is required with tls.client_certificate"});
  }
  if (client_key) {
    Bio key_bio = Read(*client_key);
    Key key(PEM_read_bio_PrivateKey(
        key_bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
    if (!client_certificate) {
      errors.push_back({"tls.client_certificate", "is required with tls.client_key"});
    } else if (!key) {
      errors.push_back({"tls.client_key", "is not an unencrypted PEM private key"});
    } else if (cert && X509_check_private_key(cert.get(), key.get()) != 1) {
      errors.push_back({"tls.client_key", "does not match tls.client_certificate"});
    }
  }
  if (ca_certificate && !FirstCertificate(*ca_certificate)) {
    errors.push_back({"tls.ca_certificate", "is not a PEM certificate"});
  }
  ERR_clear_error();  // what failed is said above; the thread's error queue stays empty
  if (!errors.empty()) return Invalid(std::move(errors));
  if (!client_certificate) return std::optional<Timestamp>();
  return CertificateExpiry(*client_certificate);
}

}  // namespace webhookd
