//! Shared low-level pieces, used by the formats, the rules and the
//! consumers alike: reading a file into one buffer, the name hash and the
//! name index built on it, byte-class masks of 64-byte blocks, advice
//! to the kernel about memory, little-endian integers (`le`), and the
//! snapshot container (`snapshot`: format, trust rules, write and map).
//! Imports nothing of libksym but the error type.

pub(crate) mod bytes;
pub mod hash;
pub mod le;
pub mod mapped;
pub mod read;
pub mod snapshot;
pub(crate) mod sys;
