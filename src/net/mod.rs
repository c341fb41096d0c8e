//! The network layer: the HTTP client ([`http`]), the explore endpoints ([`api`]) and the
//! decode worker's client ([`decode_worker`]). It imports nothing else of the viewer: bytes in,
//! model types out.

pub mod api;
pub mod decode_worker;
pub mod http;
