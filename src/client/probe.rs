//! The pre-flight probe: one GET over a new connection of the client's own pool, so the
//! endpoint's TLS settings and headers (API key) apply; any HTTP answer means a server is there.

use bytes::Bytes;
use http::{Method, Uri};

use super::HttpClient;
use super::connect::Sender;
use super::failure;
use super::outgoing_body::RequestBody;
use super::target;
use crate::http_trace::HttpTrace;

impl HttpClient {
    /// GET `path` under the endpoint's first url (joined as request paths are): the status of
    /// any HTTP answer, or one sentence saying why none came (refused, unresolvable, TLS, reset).
    pub async fn probe(&self, path: &str) -> Result<u16, String> {
        let destination = &self.destinations[0];
        let uri = target::request_uri(&destination.base_url, path).map_err(|error| error.to_string())?;
        let mut trace = HttpTrace::default();
        let mut lease = destination.pool.check_out(0, true, &mut trace).await?;
        let uri = match lease.connection.sender {
            Sender::Http2(_) => uri,
            Sender::Http1(_) => uri.path_and_query().map_or(Uri::from_static("/"), |path| Uri::from(path.clone())),
        };
        let request = self.with_endpoint_headers(destination, Method::GET, uri, RequestBody::new(Bytes::new()));
        match lease.send(request).await {
            Ok(response) => Ok(response.status().as_u16()),
            Err(error) => Err(failure::root_cause(&error)),
        }
    }
}
