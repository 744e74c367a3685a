//! What a query means and how it is answered: the one home of the rules
//! that the table, the streaming resolver, the cache and the BPF extern
//! resolver all follow.
//!
//! - [`query`]: the grammar (`name`, `module`name`, `vmlinux`name`, globs).
//! - [`modules`]: modules and owner sets: which module(s) a symbol belongs
//!   to, what kind each module is (loadable, built-in, pseudo).
//! - [`attribution`]: built-in modules from `modules.builtin.ranges` and
//!   from kallmodsyms.
//! - [`answer`]: which symbols a query's module part selects, the match
//!   and ambiguity decision, the errors (not found, ambiguous, restricted,
//!   empty) and their messages.
//! - [`suggest`]: near matches for "not found", from any stream of names.
//!
//! Imports [`crate::base`] and [`crate::formats`].

pub mod answer;
pub mod attribution;
pub mod modules;
pub mod query;
pub mod suggest;
