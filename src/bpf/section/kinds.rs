//! The names of `enum bpf_prog_type`, `enum bpf_attach_type` and
//! `enum bpf_map_type` values, as libbpf spells them
//! (`libbpf_bpf_prog_type_str` and its siblings) and bpftool prints them:
//! the kernel's enumerator in lower case without its prefix
//! (`BPF_PROG_TYPE_TRACING` is "tracing", `BPF_TRACE_FENTRY`
//! "trace_fentry", `BPF_MAP_TYPE_HASH` "hash"). Every value of Linux 6.18's
//! <linux/bpf.h>, and the attach types of Linux 7.3 (`fsession` and the
//! multi links); a value past the table has no name.
//!
//! Checked against libbpf 1.1 and the installed <linux/bpf.h>
//! (c-tests/bpf_kinds_check.c) and against the enumerators of the kernel's
//! own BTF (tests/kind_names.rs).

use std::ffi::CStr;

/// `enum bpf_prog_type`, indexed by value.
const PROG_TYPES: [&CStr; 33] = [
    c"unspec",                  // 0
    c"socket_filter",           // 1
    c"kprobe",                  // 2
    c"sched_cls",               // 3
    c"sched_act",               // 4
    c"tracepoint",              // 5
    c"xdp",                     // 6
    c"perf_event",              // 7
    c"cgroup_skb",              // 8
    c"cgroup_sock",             // 9
    c"lwt_in",                  // 10
    c"lwt_out",                 // 11
    c"lwt_xmit",                // 12
    c"sock_ops",                // 13
    c"sk_skb",                  // 14
    c"cgroup_device",           // 15
    c"sk_msg",                  // 16
    c"raw_tracepoint",          // 17
    c"cgroup_sock_addr",        // 18
    c"lwt_seg6local",           // 19
    c"lirc_mode2",              // 20
    c"sk_reuseport",            // 21
    c"flow_dissector",          // 22
    c"cgroup_sysctl",           // 23
    c"raw_tracepoint_writable", // 24
    c"cgroup_sockopt",          // 25
    c"tracing",                 // 26
    c"struct_ops",              // 27
    c"ext",                     // 28
    c"lsm",                     // 29
    c"sk_lookup",               // 30
    c"syscall",                 // 31
    c"netfilter",               // 32
];

/// `enum bpf_attach_type`, indexed by value.
const ATTACH_TYPES: [&CStr; 62] = [
    c"cgroup_inet_ingress",            // 0
    c"cgroup_inet_egress",             // 1
    c"cgroup_inet_sock_create",        // 2
    c"cgroup_sock_ops",                // 3
    c"sk_skb_stream_parser",           // 4
    c"sk_skb_stream_verdict",          // 5
    c"cgroup_device",                  // 6
    c"sk_msg_verdict",                 // 7
    c"cgroup_inet4_bind",              // 8
    c"cgroup_inet6_bind",              // 9
    c"cgroup_inet4_connect",           // 10
    c"cgroup_inet6_connect",           // 11
    c"cgroup_inet4_post_bind",         // 12
    c"cgroup_inet6_post_bind",         // 13
    c"cgroup_udp4_sendmsg",            // 14
    c"cgroup_udp6_sendmsg",            // 15
    c"lirc_mode2",                     // 16
    c"flow_dissector",                 // 17
    c"cgroup_sysctl",                  // 18
    c"cgroup_udp4_recvmsg",            // 19
    c"cgroup_udp6_recvmsg",            // 20
    c"cgroup_getsockopt",              // 21
    c"cgroup_setsockopt",              // 22
    c"trace_raw_tp",                   // 23
    c"trace_fentry",                   // 24
    c"trace_fexit",                    // 25
    c"modify_return",                  // 26
    c"lsm_mac",                        // 27
    c"trace_iter",                     // 28
    c"cgroup_inet4_getpeername",       // 29
    c"cgroup_inet6_getpeername",       // 30
    c"cgroup_inet4_getsockname",       // 31
    c"cgroup_inet6_getsockname",       // 32
    c"xdp_devmap",                     // 33
    c"cgroup_inet_sock_release",       // 34
    c"xdp_cpumap",                     // 35
    c"sk_lookup",                      // 36
    c"xdp",                            // 37
    c"sk_skb_verdict",                 // 38
    c"sk_reuseport_select",            // 39
    c"sk_reuseport_select_or_migrate", // 40
    c"perf_event",                     // 41
    c"trace_kprobe_multi",             // 42
    c"lsm_cgroup",                     // 43
    c"struct_ops",                     // 44
    c"netfilter",                      // 45
    c"tcx_ingress",                    // 46
    c"tcx_egress",                     // 47
    c"trace_uprobe_multi",             // 48
    c"cgroup_unix_connect",            // 49
    c"cgroup_unix_sendmsg",            // 50
    c"cgroup_unix_recvmsg",            // 51
    c"cgroup_unix_getpeername",        // 52
    c"cgroup_unix_getsockname",        // 53
    c"netkit_primary",                 // 54
    c"netkit_peer",                    // 55
    c"trace_kprobe_session",           // 56
    c"trace_uprobe_session",           // 57
    c"trace_fsession",                 // 58
    c"trace_fentry_multi",             // 59
    c"trace_fexit_multi",              // 60
    c"trace_fsession_multi",           // 61
];

/// `enum bpf_map_type`, indexed by value.
const MAP_TYPES: [&CStr; 34] = [
    c"unspec",                // 0
    c"hash",                  // 1
    c"array",                 // 2
    c"prog_array",            // 3
    c"perf_event_array",      // 4
    c"percpu_hash",           // 5
    c"percpu_array",          // 6
    c"stack_trace",           // 7
    c"cgroup_array",          // 8
    c"lru_hash",              // 9
    c"lru_percpu_hash",       // 10
    c"lpm_trie",              // 11
    c"array_of_maps",         // 12
    c"hash_of_maps",          // 13
    c"devmap",                // 14
    c"sockmap",               // 15
    c"cpumap",                // 16
    c"xskmap",                // 17
    c"sockhash",              // 18
    c"cgroup_storage",        // 19
    c"reuseport_sockarray",   // 20
    c"percpu_cgroup_storage", // 21
    c"queue",                 // 22
    c"stack",                 // 23
    c"sk_storage",            // 24
    c"devmap_hash",           // 25
    c"struct_ops",            // 26
    c"ringbuf",               // 27
    c"inode_storage",         // 28
    c"task_storage",          // 29
    c"bloom_filter",          // 30
    c"user_ringbuf",          // 31
    c"cgrp_storage",          // 32
    c"arena",                 // 33
];

/// The name of a program type ("tracing"); None past the table.
pub fn prog_type_name(v: u32) -> Option<&'static CStr> {
    PROG_TYPES.get(v as usize).copied()
}

/// The name of an attach type ("trace_fentry"); None past the table.
pub fn attach_type_name(v: u32) -> Option<&'static CStr> {
    ATTACH_TYPES.get(v as usize).copied()
}

/// The name of a map type ("hash"); None past the table.
pub fn map_type_name(v: u32) -> Option<&'static CStr> {
    MAP_TYPES.get(v as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::section::{attach, prog};

    /// The names agree with the numbers the section table uses.
    #[test]
    fn names_match_the_section_table_numbers() {
        let p = |v| prog_type_name(v).unwrap().to_str().unwrap();
        let a = |v| attach_type_name(v).unwrap().to_str().unwrap();
        assert_eq!(p(prog::SOCKET_FILTER), "socket_filter");
        assert_eq!(p(prog::TRACING), "tracing");
        assert_eq!(p(prog::LSM), "lsm");
        assert_eq!(p(prog::NETFILTER), "netfilter");
        assert_eq!(a(attach::CGROUP_INET_INGRESS), "cgroup_inet_ingress");
        assert_eq!(a(attach::TRACE_FENTRY), "trace_fentry");
        assert_eq!(a(attach::XDP), "xdp");
        assert_eq!(a(attach::TRACE_UPROBE_SESSION), "trace_uprobe_session");
        // libbpf's source at f7081a6baf3f (attach_type_name[]).
        assert_eq!(a(attach::TRACE_FSESSION), "trace_fsession");
        assert_eq!(a(attach::TRACE_FENTRY_MULTI), "trace_fentry_multi");
        assert_eq!(a(attach::TRACE_FEXIT_MULTI), "trace_fexit_multi");
        assert_eq!(a(attach::TRACE_FSESSION_MULTI), "trace_fsession_multi");
        assert_eq!(map_type_name(26).unwrap().to_str().unwrap(), "struct_ops");
        assert_eq!(prog_type_name(prog::NETFILTER + 1), None);
        assert_eq!(attach_type_name(attach::TRACE_FSESSION_MULTI + 1), None);
        assert_eq!(map_type_name(u32::MAX), None);
    }
}
