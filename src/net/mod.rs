//! The network layer: the HTTP client ([`http`]) with the service's access token ([`auth`]),
//! the explore endpoints ([`api`]), the decode worker's client ([`decode_worker`]) and the
//! load's timing marks ([`marks`]). It imports nothing else of the viewer: bytes in, model
//! types out.

pub mod api;
pub mod auth;
pub mod decode_worker;
pub mod http;
pub mod marks;
