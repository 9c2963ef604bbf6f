//! What a run does beside its load: the control requests it sends the server
//! (`server_requests.rs`) and the stop on too many failed requests (`failed_requests.rs`).

pub mod failed_requests;
pub mod server_requests;
