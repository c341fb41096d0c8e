//! Shared code of Embers' fuzz targets (`fuzz_targets/`): the properties every target checks
//! ([`check`]), the memory bound ([`alloc`]), and structure-aware generators ([`gen`]) that
//! get the fuzzer past the envelope into the decoders' deep code. See `README.md`.

pub mod alloc;
pub mod check;
pub mod gen;

/// Every target counts its allocations (see [`alloc`]).
#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;
