//! TLS to the server as `sslmode` asks (`url.rs` reads it): the client configuration, and the
//! certificate checks libpq makes for each mode.

use crate::error::StoreError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// The client configuration: the server's chain checked against `roots` when given (and its
/// name with `host_name`), else only the handshake's signatures.
pub(super) fn client_config(roots: Option<&PathBuf>, host_name: bool) -> Result<rustls::ClientConfig, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls_error = |why: String| StoreError::Tls(why);
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(e.to_string()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match roots {
        None => Arc::new(Lenient { provider, chain: None }),
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
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
                .build()
                .map_err(|e| tls_error(e.to_string()))?;
            if host_name { webpki } else { Arc::new(Lenient { provider, chain: Some(webpki) }) }
        }
    };
    Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
}

/// The checks short of `verify-full`, as libpq makes them: without trusted certificates
/// (`sslmode=prefer` or `require`; `chain` none) the certificate is not checked; with them
/// (`verify-ca`, or `sslrootcert` with a weaker mode) its chain is, not its host name. The
/// handshake's signatures are checked either way.
#[derive(Debug)]
struct Lenient {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<rustls::client::WebPkiServerVerifier>>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
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
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
