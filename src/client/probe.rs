//! Requests beside the load, each over a new connection of the client's own pool, so the
//! endpoint's TLS settings and headers (API key) apply: the pre-flight probes and the server
//! control requests. None of them becomes a record.

use bytes::{Bytes, BytesMut};
use http::{Method, Uri};
use http_body_util::BodyExt;

use super::HttpClient;
use super::connect::Sender;
use super::failure;
use super::pool::Lease;
use super::target;
use crate::http_trace::HttpTrace;

impl HttpClient {
    /// GET `path` under `base_url` (joined as request paths are): the status of any HTTP
    /// answer, or one sentence saying why none came (refused, unresolvable, TLS, reset).
    pub async fn probe(&self, base_url: &str, path: &str) -> Result<u16, String> {
        self.send_aside(Method::GET, base_url, path, Bytes::new()).await.map(|(status, _)| status)
    }

    /// `method` `path` under `base_url` with `body`: the status and body of any HTTP answer
    /// (the body cut at the endpoint's response limit), or why none came.
    pub async fn request_aside(
        &self,
        method: Method,
        base_url: &str,
        path: &str,
        body: Bytes,
    ) -> Result<(u16, Bytes), String> {
        let (status, mut lease) = self.send_aside(method, base_url, path, body).await?;
        let limit = self.limits.max_response_bytes;
        let mut collected = BytesMut::new();
        let mut response = lease.body();
        while let Some(frame) = response.frame().await {
            let frame = frame.map_err(|error| failure::root_cause(&error))?;
            if let Some(data) = frame.data_ref() {
                let room = limit.saturating_sub(collected.len());
                collected.extend_from_slice(&data[..data.len().min(room)]);
            }
        }
        Ok((status, collected.freeze()))
    }

    /// Send one request on a new connection to the client's first url (its callers make a
    /// client per url): the answer's status, and the lease to read its body from.
    async fn send_aside(
        &self,
        method: Method,
        base_url: &str,
        path: &str,
        body: Bytes,
    ) -> Result<(u16, Lease), String> {
        let destination = &self.destinations[0];
        let uri = target::request_uri(base_url, path).map_err(|error| error.to_string())?;
        let mut trace = HttpTrace::default();
        let mut lease = destination.pool.check_out(0, true, &mut trace).await?;
        let uri = match lease.connection.sender {
            Sender::Http2(_) => uri,
            Sender::Http1(_) => uri.path_and_query().map_or(Uri::from_static("/"), |path| Uri::from(path.clone())),
        };
        let request = self.with_endpoint_headers(destination, method, uri, body);
        match lease.send(request).await {
            Ok((response, _)) => Ok((response.status().as_u16(), lease)),
            Err(error) => Err(failure::root_cause(&error)),
        }
    }
}
