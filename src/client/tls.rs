//! The rustls client configuration of an https endpoint: ring, webpki and system roots plus
//! an optional CA file whose certificates may also be the server's own (`server_trust.rs`),
//! verification on unless explicitly insecure, ALPN for HTTP/2.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

use super::insecure::AcceptAnyCertificate;
use super::server_trust::ServerTrust;
use crate::plan::TlsSettings;

/// The ALPN protocol names offered.
const ALPN_HTTP2: &[u8] = b"h2";
const ALPN_HTTP1: &[u8] = b"http/1.1";

/// The client config for `settings`; `http2` offers h2 before http/1.1.
pub(crate) fn client_config(settings: &TlsSettings, http2: bool) -> Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("setting up TLS")?;
    let mut config = if settings.insecure {
        warn_insecure();
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate::new(provider)))
            .with_no_client_auth()
    } else {
        let trust = server_trust(settings.ca_file.as_deref(), provider)?;
        builder.dangerous().with_custom_certificate_verifier(Arc::new(trust)).with_no_client_auth()
    };
    config.alpn_protocols =
        if http2 { vec![ALPN_HTTP2.to_vec(), ALPN_HTTP1.to_vec()] } else { vec![ALPN_HTTP1.to_vec()] };
    Ok(Arc::new(config))
}

/// Say it once per process, however many clients are built.
fn warn_insecure() {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(print_insecure_warning);
}

fn print_insecure_warning() {
    let warning = "TLS CERTIFICATE VERIFICATION IS OFF (endpoint tls: #{ insecure: true }, or \
                   AIPERF_HTTP_SSL_VERIFY=false): any server, \
                   including an impostor, is accepted. Use this only for testing.";
    tracing::warn!("{warning}");
    eprintln!("WARNING: {warning}");
}

/// Trust in the webpki roots, the system's roots, and every certificate of `ca_file`, as a CA
/// or as the server's own certificate.
fn server_trust(ca_file: Option<&str>, provider: Arc<CryptoProvider>) -> Result<ServerTrust> {
    let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let system = rustls_native_certs::load_native_certs();
    for error in &system.errors {
        tracing::debug!("system root certificates: {error}");
    }
    roots.add_parsable_certificates(system.certs);
    let mut own_certificates = Vec::new();
    if let Some(path) = ca_file {
        own_certificates = ca_certificates(path)?;
        for certificate in &own_certificates {
            roots
                .add(certificate.clone())
                .with_context(|| format!("tls ca_file {path}: a certificate cannot be read"))?;
        }
    }
    ServerTrust::new(roots, own_certificates, provider)
}

/// Every certificate of a PEM file, or an error that names the file and what is wrong with it.
fn ca_certificates(path: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certificates: Vec<_> = CertificateDer::pem_file_iter(path)
        .map_err(|error| anyhow::anyhow!("tls ca_file {path}: cannot read it: {error}"))?
        .collect::<Result<_, _>>()
        .map_err(|error| anyhow::anyhow!("tls ca_file {path}: not a valid PEM file: {error}"))?;
    if certificates.is_empty() {
        bail!("tls ca_file {path}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
    }
    Ok(certificates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_empty_ca_files_are_clear_errors() {
        let settings = |path: &str| TlsSettings { ca_file: Some(path.to_owned()), insecure: false };
        let error = client_config(&settings("/no/such/ca.pem"), false).unwrap_err().to_string();
        assert!(error.starts_with("tls ca_file /no/such/ca.pem: cannot read it"), "{error}");

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let error = client_config(&settings(empty.to_str().unwrap()), false).unwrap_err().to_string();
        assert!(error.contains("holds no PEM certificate"), "{error}");
    }

    #[test]
    fn alpn_offers_h2_only_when_asked() {
        let config = client_config(&TlsSettings::default(), true).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        let config = client_config(&TlsSettings { ca_file: None, insecure: true }, false).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
