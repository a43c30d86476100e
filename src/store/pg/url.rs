//! A PostgreSQL connection URL (`postgres://user:password@host:port/db?sslmode=require`): what
//! is shown of it (never the password), where it points (host and port, for errors), and the
//! TLS it asks for.
//!
//! `sslmode` is read as libpq reads it: `disable` connects in the clear; `allow` and `prefer`
//! (the default) use TLS when the server offers it; `require` insists on TLS; none of these
//! checks the server's certificate unless `sslrootcert` names a file of trusted certificates
//! (then the chain is checked, as libpq does). `verify-ca` and `verify-full` check the chain
//! against `sslrootcert` (default `~/.postgresql/root.crt`) and the host name.

use crate::error::StoreError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// A parsed connection URL.
#[derive(Clone)]
pub struct PgUrl {
    config: postgres::Config,
    /// The URL as given, the password replaced by `***`.
    shown: String,
    /// The password, to scrub from any message that might echo it.
    password: Option<String>,
    tls: Tls,
}

impl std::fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// What TLS the URL asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tls {
    Off,
    /// Offered or required; the certificate checked against these roots when given.
    On {
        roots: Option<PathBuf>,
        host_name: bool,
    },
}

/// Whether `text` names a PostgreSQL server rather than a file.
pub fn is_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

impl PgUrl {
    pub fn parse(text: &str) -> Result<PgUrl, StoreError> {
        let shown = redact(text);
        let bad = |why: String| StoreError::BadUrl { url: shown.clone(), why };
        let (base, query) = text.split_once('?').unwrap_or((text, ""));
        let mut kept = Vec::new();
        let (mut mode, mut root) = ("prefer".to_string(), None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => mode = decode(value),
                "sslrootcert" => root = Some(PathBuf::from(decode(value))),
                _ => kept.push(pair),
            }
        }
        let tls = match mode.as_str() {
            "disable" => Tls::Off,
            "allow" | "prefer" | "require" => Tls::On { roots: root, host_name: false },
            "verify-ca" | "verify-full" => {
                Tls::On { roots: Some(root.unwrap_or_else(default_root_cert)), host_name: mode == "verify-full" }
            }
            other => {
                return Err(bad(format!(
                    "sslmode {other:?} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )));
            }
        };
        let mut url = base.to_string();
        if !kept.is_empty() {
            url = format!("{url}?{}", kept.join("&"));
        }
        let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| bad(e.to_string()))?;
        config.ssl_mode(match (&tls, mode.as_str()) {
            (Tls::Off, _) => postgres::config::SslMode::Disable,
            (_, "allow" | "prefer") => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        });
        if config.get_hosts().is_empty() {
            return Err(bad("no host".into()));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        config.application_name("trajan");
        let password = config.get_password().map(|p| String::from_utf8_lossy(p).into_owned()).filter(|p| !p.is_empty());
        Ok(PgUrl { config, shown, password, tls })
    }

    /// The URL without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// `host:port` of the (first) server.
    pub fn host_port(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => h.clone(),
            #[cfg(unix)]
            Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
            None => String::new(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!("{host}:{port}")
    }

    /// `message` with the password taken out, wherever it appears.
    pub fn scrub(&self, message: &str) -> String {
        match &self.password {
            Some(p) => message.replace(p.as_str(), "***"),
            None => message.to_string(),
        }
    }

    /// A connection, with TLS as asked. Its error names host and port (never the password).
    pub fn connect(&self) -> Result<postgres::Client, StoreError> {
        let connected = match &self.tls {
            Tls::Off => self.config.connect(postgres::NoTls),
            Tls::On { roots, host_name } => {
                let tls = tokio_postgres_rustls::MakeRustlsConnect::new(client_config(roots.as_ref(), *host_name)?);
                self.config.connect(tls)
            }
        };
        connected.map_err(|e| StoreError::Connect {
            at: self.host_port(),
            url: self.shown.clone(),
            why: self.scrub(&describe(&e)),
        })
    }
}

/// A client error in words: the server's message, or the cause of a failed connection.
pub fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}

/// The URL with the password of its user part and of a `password=` parameter replaced by `***`.
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    if let Some(scheme_end) = out.find("://") {
        let rest = &out[scheme_end + 3..];
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@')
            && let Some(colon) = rest[..at].find(':')
        {
            let start = scheme_end + 3 + colon + 1;
            out.replace_range(start..scheme_end + 3 + at, "***");
        }
    }
    if let Some(q) = out.find('?') {
        let (base, query) = out.split_at(q + 1);
        let pairs: Vec<String> = query
            .split('&')
            .map(|p| if p.starts_with("password=") { "password=***".to_string() } else { p.to_string() })
            .collect();
        out = format!("{base}{}", pairs.join("&"));
    }
    out
}

/// A percent-encoded query value decoded (invalid escapes kept as they are).
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// libpq's default file of trusted certificates.
fn default_root_cert() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default().join(".postgresql/root.crt")
}

fn client_config(roots: Option<&PathBuf>, host_name: bool) -> Result<rustls::ClientConfig, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls_error = |why: String| StoreError::Tls(why);
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(e.to_string()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match roots {
        None => Arc::new(Unverified(provider)),
        Some(path) => {
            let mut store = rustls::RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| tls_error(format!("{}: {e}", path.display())))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| tls_error(format!("{}: {e}", path.display())))?;
            store.add_parsable_certificates(certs);
            if store.is_empty() {
                return Err(tls_error(format!("{}: no certificate in it", path.display())));
            }
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider)
                .build()
                .map_err(|e| tls_error(e.to_string()))?;
            if host_name { webpki } else { Arc::new(ChainOnly(webpki)) }
        }
    };
    Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
}

/// `sslmode=prefer` / `require` without trusted certificates, as libpq: the channel is encrypted,
/// the certificate not checked (its handshake signatures are).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`, and `sslrootcert` with a weaker mode: the chain is checked, not the host name.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_never_shown() {
        let url = "postgres://ann:s3cr%40t@db.example:6543/trajan?sslmode=require&password=other";
        let shown = redact(url);
        assert_eq!(shown, "postgres://ann:***@db.example:6543/trajan?sslmode=require&password=***");
        assert_eq!(redact("postgres://ann@host/db"), "postgres://ann@host/db");
        let parsed = PgUrl::parse("postgres://ann:hunter2@db.example:6543/trajan").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.host_port(), "db.example:6543");
        assert_eq!(format!("{parsed:?}"), "postgres://ann:***@db.example:6543/trajan");
        assert_eq!(parsed.scrub("bad password hunter2 for ann"), "bad password *** for ann");
    }

    #[test]
    fn sslmode_is_read_as_libpq_reads_it() {
        let tls = |u: &str| PgUrl::parse(u).map(|p| p.tls);
        assert_eq!(tls("postgres://h/d?sslmode=disable").ok(), Some(Tls::Off));
        assert_eq!(tls("postgres://h/d").ok(), Some(Tls::On { roots: None, host_name: false }));
        assert_eq!(
            tls("postgres://h/d?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem").ok(),
            Some(Tls::On { roots: Some("/tmp/ca.pem".into()), host_name: true })
        );
        let err = PgUrl::parse("postgres://u:pw@h/d?sslmode=maybe").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("sslmode") && !err.contains("pw"), "{err}");
    }
}
