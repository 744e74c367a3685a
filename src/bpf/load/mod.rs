//! The loadable view of an object: what a loader hands `bpf(2)`.
