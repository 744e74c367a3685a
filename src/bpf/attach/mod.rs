//! Where programs attach: their targets resolved, set and expanded into
//! aliases (`targets`, `tracepoints`), multi links (`multi`), and the
//! struct_ops maps whose members are programs (`struct_ops`).

pub(in crate::bpf) mod multi;
pub(in crate::bpf) mod struct_ops;
pub(in crate::bpf) mod targets;
pub(in crate::bpf) mod tracepoints;
