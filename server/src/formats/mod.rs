//! Profile formats other agents send, decoded into the store's [`crate::store::Batch`]es:
//! OTLP profiles (`otlp/`), with the bounded gunzip (`gzip`) every compressed body goes through.
//! A decoder reads the whole request before anything is written, so a bad request writes
//! nothing.

pub mod gzip;
pub mod otlp;
