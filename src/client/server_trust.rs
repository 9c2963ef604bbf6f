//! How an https endpoint that verifies (not `insecure`) trusts its server. A server certificate
//! that is itself one of `tls: #{ ca_file }`'s certificates, byte for byte (a self-signed
//! server, as `openssl req -x509` makes one, CA flag and all), is trusted as it is once its
//! name and validity period hold, as curl's `--cacert` does; any other is verified by webpki
//! up to the webpki, system and `ca_file` roots. The handshake's signatures are checked
//! against the presented certificate's key either way.

use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_name};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use x509_parser::certificate::X509Certificate;
use x509_parser::time::ASN1Time;

#[derive(Debug)]
pub(crate) struct ServerTrust {
    /// `ca_file`'s certificates, any of which the server may present as its own.
    own_certificates: Vec<CertificateDer<'static>>,
    webpki: Arc<WebPkiServerVerifier>,
}

impl ServerTrust {
    /// Trust `roots` as CAs, and each of `own_certificates` as a server's own certificate.
    pub fn new(
        roots: RootCertStore,
        own_certificates: Vec<CertificateDer<'static>>,
        provider: Arc<CryptoProvider>,
    ) -> anyhow::Result<Self> {
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|error| anyhow::anyhow!("setting up TLS certificate verification: {error}"))?;
        Ok(Self { own_certificates, webpki })
    }
}

impl ServerCertVerifier for ServerTrust {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self.own_certificates.iter().any(|own| own.as_ref() == end_entity.as_ref()) {
            verify_own_certificate(end_entity, server_name, now)
        } else {
            self.webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// A certificate trusted as it is: it must still be within its validity period at `now` and
/// name `server_name`, in its subject alternative names or, when it has none, its common name
/// (a certificate made with only `-subj /CN=host`).
fn verify_own_certificate(
    certificate: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<ServerCertVerified, rustls::Error> {
    let bad_encoding = || rustls::Error::InvalidCertificate(CertificateError::BadEncoding);
    let (_, parsed) = x509_parser::parse_x509_certificate(certificate.as_ref()).map_err(|_| bad_encoding())?;
    // A time before 1970 counts as 1970: only the order against `now` matters.
    let seconds = |time: ASN1Time| UnixTime::since_unix_epoch(Duration::from_secs(time.timestamp().max(0) as u64));
    let validity = parsed.validity();
    let (not_before, not_after) = (seconds(validity.not_before), seconds(validity.not_after));
    if now < not_before {
        return Err(CertificateError::NotValidYetContext { time: now, not_before }.into());
    }
    if now > not_after {
        return Err(CertificateError::ExpiredContext { time: now, not_after }.into());
    }
    let has_alternative_names = parsed.subject_alternative_name().map_err(|_| bad_encoding())?.is_some();
    if has_alternative_names {
        verify_server_name(&ParsedCertificate::try_from(certificate)?, server_name)?;
    } else {
        verify_common_name(&parsed, server_name)?;
    }
    Ok(ServerCertVerified::assertion())
}

/// The certificate's subject common name must be `server_name` (a DNS name; IP addresses are
/// only ever matched against alternative names).
fn verify_common_name(certificate: &X509Certificate<'_>, server_name: &ServerName<'_>) -> Result<(), rustls::Error> {
    let common_names: Vec<String> = certificate
        .subject()
        .iter_common_name()
        .filter_map(|common_name| common_name.as_str().ok())
        .map(str::to_owned)
        .collect();
    let matches = match server_name {
        ServerName::DnsName(name) => {
            let wanted = name.as_ref().trim_end_matches('.');
            common_names.iter().any(|common_name| common_name.trim_end_matches('.').eq_ignore_ascii_case(wanted))
        }
        _ => false,
    };
    if matches {
        return Ok(());
    }
    Err(CertificateError::NotValidForNameContext { expected: server_name.to_owned(), presented: common_names }.into())
}
