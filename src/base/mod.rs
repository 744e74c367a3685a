//! Shared low-level pieces, used by the formats, the rules and the
//! consumers alike: reading a file into one buffer, the name hash and the
//! name index built on it, byte-class masks of 64-byte blocks, advice
//! to the kernel about memory, little-endian integers (`le`), and the
//! private files snapshots live in.
//! Imports nothing of libksym but the error type.

pub(crate) mod bytes;
pub mod hash;
pub mod le;
pub mod mapped;
pub mod private;
pub mod read;
pub(crate) mod sys;
