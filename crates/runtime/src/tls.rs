//! OpenFlow over TLS: the server configuration a TLS listener uses, made
//! from PEM files ([`server_config`]). No sockets here: the handshake and
//! the records run in the same non-blocking I/O as plain TCP (`io.rs`).
//!
//! What it implements: OpenFlow 1.3.5 §6.3.3 and 1.0.0 §4.4
//! ("Encryption"): the switch opens a TLS connection to the controller,
//! and the two authenticate each other with certificates signed by a
//! site-specific CA. The switch checks the controller's certificate
//! (Open vSwitch: `ovs-vsctl set-ssl KEY CERT CA-CERT`); baton checks the
//! switch's when given a client CA.
//!
//! The crypto is [`rustls`] with the *ring* provider, TLS 1.3 and 1.2
//! (Open vSwitch 3.1 offers 1.2 only by default). Without a client CA any
//! switch may connect, as over TCP; with one, a switch must present a
//! certificate chain to that CA ([`WebPkiClientVerifier`]), and one that
//! does not is closed, counted as `tls`, with a log line saying why
//! (rustls' error). Note that WebPKI accepts only X.509 v3 certificates: a switch
//! certificate made with a bare `openssl x509 -req` (version 1) is
//! refused as `UnsupportedCertVersion`.

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use rustls;

/// Why a TLS configuration could not be made: which file, and what was
/// wrong with it.
#[derive(Debug)]
pub struct TlsError {
    /// The file at fault (for a key that does not match its
    /// certificate, the key).
    pub file: PathBuf,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl std::error::Error for TlsError {}

fn error(file: &Path, message: impl Into<String>) -> TlsError {
    TlsError {
        file: file.to_path_buf(),
        message: message.into(),
    }
}

/// What a PEM error means for a file expected to hold `what`.
fn pem_error(file: &Path, what: &str, e: pem::Error) -> TlsError {
    match e {
        pem::Error::Io(e) => error(file, format!("cannot read it: {e}")),
        pem::Error::NoItemsFound => error(file, format!("no {what} in it (PEM expected)")),
        e => error(file, format!("not a PEM {what}: {e}")),
    }
}

/// The certificates of a PEM file; at least one.
fn certificates(file: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(file)
        .map_err(|e| pem_error(file, what, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(file, what, e))?;
    if certs.is_empty() {
        return Err(error(file, format!("no {what} in it (PEM expected)")));
    }
    Ok(certs)
}

/// The crypto baton's TLS uses.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A TLS server configuration from the controller's certificate chain
/// (`cert`, PEM, its own certificate first) and private key (`key`, PEM:
/// PKCS#8, PKCS#1 or SEC1), and, with `client_ca`, the CA certificates
/// (PEM) a switch's certificate must chain to. Every error names the file
/// at fault.
pub fn server_config(
    cert: &Path,
    key: &Path,
    client_ca: Option<&Path>,
) -> Result<Arc<ServerConfig>, TlsError> {
    let chain = certificates(cert, "certificate")?;
    let private =
        PrivateKeyDer::from_pem_file(key).map_err(|e| pem_error(key, "private key", e))?;
    let provider = provider();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| error(cert, format!("no TLS version to offer: {e}")))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for c in certificates(ca, "CA certificate")? {
                roots
                    .add(c)
                    .map_err(|e| error(ca, format!("not a usable CA certificate: {e}")))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| error(ca, format!("cannot verify switches with it: {e}")))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder.with_single_cert(chain, private).map_err(|e| {
        error(
            key,
            format!("cannot serve TLS with it and {}: {e}", cert.display()),
        )
    })?;
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

    /// A directory of its own under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("baton-tls-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A CA and a certificate it signed for `localhost`: (ca, cert, key)
    /// as PEM.
    fn pki() -> (String, String, String) {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .signed_by(&key, &ca_cert, &ca_key)
            .unwrap();
        (ca_cert.pem(), cert.pem(), key.serialize_pem())
    }

    #[test]
    fn good_files_make_a_configuration_with_and_without_a_client_ca() {
        let dir = scratch("good");
        let (ca, cert, key) = pki();
        for (name, text) in [("ca.pem", &ca), ("cert.pem", &cert), ("key.pem", &key)] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let (c, k, a) = (
            dir.join("cert.pem"),
            dir.join("key.pem"),
            dir.join("ca.pem"),
        );
        server_config(&c, &k, None).unwrap();
        server_config(&c, &k, Some(&a)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_files_are_named_with_what_is_wrong() {
        let dir = scratch("bad");
        let (ca, cert, key) = pki();
        let (_, _, other_key) = pki();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let (c, k, a) = (
            file("cert.pem", &cert),
            file("key.pem", &key),
            file("ca.pem", &ca),
        );
        let garbage = file("garbage.pem", "hello\n");
        let other = file("other-key.pem", &other_key);
        let missing = dir.join("missing.pem");
        let cases: [(&Path, &Path, Option<&Path>, &Path, &str); 6] = [
            (&missing, &k, None, &missing, "cannot read it"),
            (&garbage, &k, None, &garbage, "no certificate in it"),
            (&c, &garbage, None, &garbage, "no private key in it"),
            (&c, &c, None, &c, "no private key in it"),
            (&c, &other, None, &other, "cannot serve TLS with it"),
            (&c, &k, Some(&garbage), &garbage, "no CA certificate in it"),
        ];
        for (cert, key, ca, at, says) in cases {
            let e = server_config(cert, key, ca).unwrap_err();
            assert_eq!(e.file, at, "{e}");
            assert!(e.to_string().contains(says), "{e}");
        }
        server_config(&c, &k, Some(&a)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
