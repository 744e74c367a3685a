//! libbpf's section definitions (`section_defs` in libbpf.c): the
//! program types, attach types and flags a section name gives, and the
//! table in libbpf's order (the first definition a section matches wins:
//! [`crate::bpf::section::lookup`]).

use crate::btf::targets::TargetKind;

/// `enum bpf_prog_type` values.
pub mod prog {
    pub const SOCKET_FILTER: u32 = 1;
    pub const KPROBE: u32 = 2;
    pub const SCHED_CLS: u32 = 3;
    pub const SCHED_ACT: u32 = 4;
    pub const TRACEPOINT: u32 = 5;
    pub const XDP: u32 = 6;
    pub const PERF_EVENT: u32 = 7;
    pub const CGROUP_SKB: u32 = 8;
    pub const CGROUP_SOCK: u32 = 9;
    pub const LWT_IN: u32 = 10;
    pub const LWT_OUT: u32 = 11;
    pub const LWT_XMIT: u32 = 12;
    pub const SOCK_OPS: u32 = 13;
    pub const SK_SKB: u32 = 14;
    pub const CGROUP_DEVICE: u32 = 15;
    pub const SK_MSG: u32 = 16;
    pub const RAW_TRACEPOINT: u32 = 17;
    pub const CGROUP_SOCK_ADDR: u32 = 18;
    pub const LWT_SEG6LOCAL: u32 = 19;
    pub const LIRC_MODE2: u32 = 20;
    pub const SK_REUSEPORT: u32 = 21;
    pub const FLOW_DISSECTOR: u32 = 22;
    pub const CGROUP_SYSCTL: u32 = 23;
    pub const RAW_TRACEPOINT_WRITABLE: u32 = 24;
    pub const CGROUP_SOCKOPT: u32 = 25;
    pub const TRACING: u32 = 26;
    pub const STRUCT_OPS: u32 = 27;
    pub const EXT: u32 = 28;
    pub const LSM: u32 = 29;
    pub const SK_LOOKUP: u32 = 30;
    pub const SYSCALL: u32 = 31;
    pub const NETFILTER: u32 = 32;
}

/// `enum bpf_attach_type` values.
pub mod attach {
    pub const CGROUP_INET_INGRESS: u32 = 0;
    pub const CGROUP_INET_EGRESS: u32 = 1;
    pub const CGROUP_INET_SOCK_CREATE: u32 = 2;
    pub const CGROUP_SOCK_OPS: u32 = 3;
    pub const SK_SKB_STREAM_PARSER: u32 = 4;
    pub const SK_SKB_STREAM_VERDICT: u32 = 5;
    pub const CGROUP_DEVICE: u32 = 6;
    pub const SK_MSG_VERDICT: u32 = 7;
    pub const CGROUP_INET4_BIND: u32 = 8;
    pub const CGROUP_INET6_BIND: u32 = 9;
    pub const CGROUP_INET4_CONNECT: u32 = 10;
    pub const CGROUP_INET6_CONNECT: u32 = 11;
    pub const CGROUP_INET4_POST_BIND: u32 = 12;
    pub const CGROUP_INET6_POST_BIND: u32 = 13;
    pub const CGROUP_UDP4_SENDMSG: u32 = 14;
    pub const CGROUP_UDP6_SENDMSG: u32 = 15;
    pub const LIRC_MODE2: u32 = 16;
    pub const FLOW_DISSECTOR: u32 = 17;
    pub const CGROUP_SYSCTL: u32 = 18;
    pub const CGROUP_UDP4_RECVMSG: u32 = 19;
    pub const CGROUP_UDP6_RECVMSG: u32 = 20;
    pub const CGROUP_GETSOCKOPT: u32 = 21;
    pub const CGROUP_SETSOCKOPT: u32 = 22;
    pub const TRACE_RAW_TP: u32 = 23;
    pub const TRACE_FENTRY: u32 = 24;
    pub const TRACE_FEXIT: u32 = 25;
    pub const MODIFY_RETURN: u32 = 26;
    pub const LSM_MAC: u32 = 27;
    pub const TRACE_ITER: u32 = 28;
    pub const CGROUP_INET4_GETPEERNAME: u32 = 29;
    pub const CGROUP_INET6_GETPEERNAME: u32 = 30;
    pub const CGROUP_INET4_GETSOCKNAME: u32 = 31;
    pub const CGROUP_INET6_GETSOCKNAME: u32 = 32;
    pub const XDP_DEVMAP: u32 = 33;
    pub const CGROUP_INET_SOCK_RELEASE: u32 = 34;
    pub const XDP_CPUMAP: u32 = 35;
    pub const SK_LOOKUP: u32 = 36;
    pub const XDP: u32 = 37;
    pub const SK_SKB_VERDICT: u32 = 38;
    pub const SK_REUSEPORT_SELECT: u32 = 39;
    pub const SK_REUSEPORT_SELECT_OR_MIGRATE: u32 = 40;
    pub const PERF_EVENT: u32 = 41;
    pub const TRACE_KPROBE_MULTI: u32 = 42;
    pub const LSM_CGROUP: u32 = 43;
    pub const STRUCT_OPS: u32 = 44;
    pub const NETFILTER: u32 = 45;
    pub const TCX_INGRESS: u32 = 46;
    pub const TCX_EGRESS: u32 = 47;
    pub const TRACE_UPROBE_MULTI: u32 = 48;
    pub const CGROUP_UNIX_CONNECT: u32 = 49;
    pub const CGROUP_UNIX_SENDMSG: u32 = 50;
    pub const CGROUP_UNIX_RECVMSG: u32 = 51;
    pub const CGROUP_UNIX_GETPEERNAME: u32 = 52;
    pub const CGROUP_UNIX_GETSOCKNAME: u32 = 53;
    pub const NETKIT_PRIMARY: u32 = 54;
    pub const NETKIT_PEER: u32 = 55;
    pub const TRACE_KPROBE_SESSION: u32 = 56;
    pub const TRACE_UPROBE_SESSION: u32 = 57;
    pub const TRACE_FSESSION: u32 = 58;
    /// One program on many kernel functions through one `tracing_multi`
    /// link (Linux 7.3): `fentry.multi`, `fexit.multi`, `fsession.multi`.
    pub const TRACE_FENTRY_MULTI: u32 = 59;
    pub const TRACE_FEXIT_MULTI: u32 = 60;
    pub const TRACE_FSESSION_MULTI: u32 = 61;
}

/// The program is sleepable (`BPF_F_SLEEPABLE` at load).
pub const SLEEPABLE: u32 = 1;
/// The XDP program handles fragments (`BPF_F_XDP_HAS_FRAGS` at load).
pub const XDP_FRAGS: u32 = 2;
/// The section starts with `?`: libbpf does not load the program unless
/// asked (its autoload is off).
pub const OPTIONAL: u32 = 4;
/// The kernel needs the target to load the program (`attach_btf_id`:
/// fentry, fexit, fmod_ret, lsm, iter, tp_btf, freplace, struct_ops);
/// without it, the target matters only when attaching (kprobe, raw_tp).
pub const TARGET_AT_LOAD: u32 = 8;
/// A return probe (`kretprobe`, `uretprobe` and their multi forms): the
/// loader attaches it as one (the kprobe PMU's `retprobe` bit, or
/// `BPF_F_KPROBE_MULTI_RETURN`).
pub const RETPROBE: u32 = 16;
/// A multi program (`fentry.multi`, `fexit.multi`, `fsession.multi`):
/// it loads with no attach target (the kernel gives it `bpf_multi_func`),
/// with the module's BTF object when the section names a module, and
/// attaches through `tracing_multi` links, one per BTF object, that list
/// the functions ([`crate::bpf::Object::multi_attach`]).
pub const MULTI: u32 = 32;
/// The target is a BTF id (`attach_btf_id` at load); internal.
const ATTACH_BTF: u32 = 1 << 8;

/// One of libbpf's section definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionDef {
    pub sec: &'static str,
    pub prog_type: u32,
    pub expected_attach_type: u32,
    /// [`SLEEPABLE`], [`XDP_FRAGS`] (and the internal BTF bit).
    flags: u32,
    /// What the text after `/` names in the kernel, if anything.
    pub target: Option<TargetKind>,
}

impl SectionDef {
    /// The flags a loader passes on ([`SLEEPABLE`], [`XDP_FRAGS`]).
    pub fn load_flags(&self) -> u32 {
        self.flags & (SLEEPABLE | XDP_FRAGS)
    }

    /// The flags a loader attaches by ([`RETPROBE`]).
    pub fn attach_flags(&self) -> u32 {
        self.flags & (RETPROBE | MULTI)
    }

    /// A multi program ([`MULTI`]).
    pub fn is_multi(&self) -> bool {
        self.flags & MULTI != 0
    }

    /// The target is a BTF type (fentry, tp_btf, lsm, iter...).
    pub fn attaches_by_btf(&self) -> bool {
        self.flags & ATTACH_BTF != 0
    }
}

macro_rules! def {
    ($sec:literal, $p:ident, $a:expr, $f:expr, $t:expr) => {
        SectionDef {
            sec: $sec,
            prog_type: prog::$p,
            expected_attach_type: $a,
            flags: $f,
            target: $t,
        }
    };
}

use attach as at;
use TargetKind as K;

/// libbpf's table (its source at f7081a6baf3f, with the multi sections
/// of Linux 7.3), in its order.
pub static SECTION_DEFS: &[SectionDef] = &[
    def!("socket", SOCKET_FILTER, 0, 0, None),
    def!(
        "sk_reuseport/migrate",
        SK_REUSEPORT,
        at::SK_REUSEPORT_SELECT_OR_MIGRATE,
        0,
        None
    ),
    def!(
        "sk_reuseport",
        SK_REUSEPORT,
        at::SK_REUSEPORT_SELECT,
        0,
        None
    ),
    def!("kprobe+", KPROBE, 0, 0, Some(K::Kprobe)),
    def!("uprobe+", KPROBE, 0, 0, None),
    def!("uprobe.s+", KPROBE, 0, SLEEPABLE, None),
    def!("kretprobe+", KPROBE, 0, RETPROBE, Some(K::Kprobe)),
    def!("uretprobe+", KPROBE, 0, RETPROBE, None),
    def!("uretprobe.s+", KPROBE, 0, SLEEPABLE | RETPROBE, None),
    def!("kprobe.multi+", KPROBE, at::TRACE_KPROBE_MULTI, 0, None),
    def!(
        "kretprobe.multi+",
        KPROBE,
        at::TRACE_KPROBE_MULTI,
        RETPROBE,
        None
    ),
    def!("kprobe.session+", KPROBE, at::TRACE_KPROBE_SESSION, 0, None),
    def!("uprobe.multi+", KPROBE, at::TRACE_UPROBE_MULTI, 0, None),
    def!(
        "uretprobe.multi+",
        KPROBE,
        at::TRACE_UPROBE_MULTI,
        RETPROBE,
        None
    ),
    def!("uprobe.session+", KPROBE, at::TRACE_UPROBE_SESSION, 0, None),
    def!(
        "uprobe.multi.s+",
        KPROBE,
        at::TRACE_UPROBE_MULTI,
        SLEEPABLE,
        None
    ),
    def!(
        "uretprobe.multi.s+",
        KPROBE,
        at::TRACE_UPROBE_MULTI,
        SLEEPABLE | RETPROBE,
        None
    ),
    def!(
        "uprobe.session.s+",
        KPROBE,
        at::TRACE_UPROBE_SESSION,
        SLEEPABLE,
        None
    ),
    def!("ksyscall+", KPROBE, 0, 0, None),
    def!("kretsyscall+", KPROBE, 0, RETPROBE, None),
    def!("usdt+", KPROBE, 0, 0, None),
    def!("usdt.s+", KPROBE, 0, SLEEPABLE, None),
    def!("tc/ingress", SCHED_CLS, at::TCX_INGRESS, 0, None),
    def!("tc/egress", SCHED_CLS, at::TCX_EGRESS, 0, None),
    def!("tcx/ingress", SCHED_CLS, at::TCX_INGRESS, 0, None),
    def!("tcx/egress", SCHED_CLS, at::TCX_EGRESS, 0, None),
    def!("tc", SCHED_CLS, 0, 0, None),
    def!("classifier", SCHED_CLS, 0, 0, None),
    def!("action", SCHED_ACT, 0, 0, None),
    def!("netkit/primary", SCHED_CLS, at::NETKIT_PRIMARY, 0, None),
    def!("netkit/peer", SCHED_CLS, at::NETKIT_PEER, 0, None),
    def!("tracepoint+", TRACEPOINT, 0, 0, None),
    def!("tp+", TRACEPOINT, 0, 0, None),
    def!(
        "raw_tracepoint+",
        RAW_TRACEPOINT,
        0,
        0,
        Some(K::RawTracepoint)
    ),
    def!("raw_tp+", RAW_TRACEPOINT, 0, 0, Some(K::RawTracepoint)),
    def!(
        "raw_tracepoint.w+",
        RAW_TRACEPOINT_WRITABLE,
        0,
        0,
        Some(K::RawTracepoint)
    ),
    def!(
        "raw_tp.w+",
        RAW_TRACEPOINT_WRITABLE,
        0,
        0,
        Some(K::RawTracepoint)
    ),
    def!(
        "tp_btf+",
        TRACING,
        at::TRACE_RAW_TP,
        ATTACH_BTF,
        Some(K::Tracepoint)
    ),
    def!(
        "fentry+",
        TRACING,
        at::TRACE_FENTRY,
        ATTACH_BTF,
        Some(K::Function)
    ),
    def!(
        "fmod_ret+",
        TRACING,
        at::MODIFY_RETURN,
        ATTACH_BTF,
        Some(K::Function)
    ),
    def!(
        "fexit+",
        TRACING,
        at::TRACE_FEXIT,
        ATTACH_BTF,
        Some(K::Function)
    ),
    def!(
        "fentry.s+",
        TRACING,
        at::TRACE_FENTRY,
        ATTACH_BTF | SLEEPABLE,
        Some(K::Function)
    ),
    def!(
        "fmod_ret.s+",
        TRACING,
        at::MODIFY_RETURN,
        ATTACH_BTF | SLEEPABLE,
        Some(K::Function)
    ),
    def!(
        "fexit.s+",
        TRACING,
        at::TRACE_FEXIT,
        ATTACH_BTF | SLEEPABLE,
        Some(K::Function)
    ),
    def!(
        "fsession+",
        TRACING,
        at::TRACE_FSESSION,
        ATTACH_BTF,
        Some(K::Function)
    ),
    def!(
        "fsession.s+",
        TRACING,
        at::TRACE_FSESSION,
        ATTACH_BTF | SLEEPABLE,
        Some(K::Function)
    ),
    def!(
        "fsession.multi+",
        TRACING,
        at::TRACE_FSESSION_MULTI,
        MULTI,
        None
    ),
    def!(
        "fsession.multi.s+",
        TRACING,
        at::TRACE_FSESSION_MULTI,
        MULTI | SLEEPABLE,
        None
    ),
    def!(
        "fentry.multi+",
        TRACING,
        at::TRACE_FENTRY_MULTI,
        MULTI,
        None
    ),
    def!("fexit.multi+", TRACING, at::TRACE_FEXIT_MULTI, MULTI, None),
    def!(
        "fentry.multi.s+",
        TRACING,
        at::TRACE_FENTRY_MULTI,
        MULTI | SLEEPABLE,
        None
    ),
    def!(
        "fexit.multi.s+",
        TRACING,
        at::TRACE_FEXIT_MULTI,
        MULTI | SLEEPABLE,
        None
    ),
    def!("freplace+", EXT, 0, ATTACH_BTF, None),
    def!("lsm+", LSM, at::LSM_MAC, ATTACH_BTF, Some(K::Lsm)),
    def!(
        "lsm.s+",
        LSM,
        at::LSM_MAC,
        ATTACH_BTF | SLEEPABLE,
        Some(K::Lsm)
    ),
    def!("lsm_cgroup+", LSM, at::LSM_CGROUP, ATTACH_BTF, Some(K::Lsm)),
    def!("iter+", TRACING, at::TRACE_ITER, ATTACH_BTF, Some(K::Iter)),
    def!(
        "iter.s+",
        TRACING,
        at::TRACE_ITER,
        ATTACH_BTF | SLEEPABLE,
        Some(K::Iter)
    ),
    def!("syscall", SYSCALL, 0, SLEEPABLE, None),
    def!("xdp.frags/devmap", XDP, at::XDP_DEVMAP, XDP_FRAGS, None),
    def!("xdp/devmap", XDP, at::XDP_DEVMAP, 0, None),
    def!("xdp.frags/cpumap", XDP, at::XDP_CPUMAP, XDP_FRAGS, None),
    def!("xdp/cpumap", XDP, at::XDP_CPUMAP, 0, None),
    def!("xdp.frags", XDP, at::XDP, XDP_FRAGS, None),
    def!("xdp", XDP, at::XDP, 0, None),
    def!("perf_event", PERF_EVENT, 0, 0, None),
    def!("lwt_in", LWT_IN, 0, 0, None),
    def!("lwt_out", LWT_OUT, 0, 0, None),
    def!("lwt_xmit", LWT_XMIT, 0, 0, None),
    def!("lwt_seg6local", LWT_SEG6LOCAL, 0, 0, None),
    def!("sockops", SOCK_OPS, at::CGROUP_SOCK_OPS, 0, None),
    def!(
        "sk_skb/stream_parser",
        SK_SKB,
        at::SK_SKB_STREAM_PARSER,
        0,
        None
    ),
    def!(
        "sk_skb/stream_verdict",
        SK_SKB,
        at::SK_SKB_STREAM_VERDICT,
        0,
        None
    ),
    def!("sk_skb/verdict", SK_SKB, at::SK_SKB_VERDICT, 0, None),
    def!("sk_skb", SK_SKB, 0, 0, None),
    def!("sk_msg", SK_MSG, at::SK_MSG_VERDICT, 0, None),
    def!("lirc_mode2", LIRC_MODE2, at::LIRC_MODE2, 0, None),
    def!(
        "flow_dissector",
        FLOW_DISSECTOR,
        at::FLOW_DISSECTOR,
        0,
        None
    ),
    def!(
        "cgroup_skb/ingress",
        CGROUP_SKB,
        at::CGROUP_INET_INGRESS,
        0,
        None
    ),
    def!(
        "cgroup_skb/egress",
        CGROUP_SKB,
        at::CGROUP_INET_EGRESS,
        0,
        None
    ),
    def!("cgroup/skb", CGROUP_SKB, 0, 0, None),
    def!(
        "cgroup/sock_create",
        CGROUP_SOCK,
        at::CGROUP_INET_SOCK_CREATE,
        0,
        None
    ),
    def!(
        "cgroup/sock_release",
        CGROUP_SOCK,
        at::CGROUP_INET_SOCK_RELEASE,
        0,
        None
    ),
    def!(
        "cgroup/sock",
        CGROUP_SOCK,
        at::CGROUP_INET_SOCK_CREATE,
        0,
        None
    ),
    def!(
        "cgroup/post_bind4",
        CGROUP_SOCK,
        at::CGROUP_INET4_POST_BIND,
        0,
        None
    ),
    def!(
        "cgroup/post_bind6",
        CGROUP_SOCK,
        at::CGROUP_INET6_POST_BIND,
        0,
        None
    ),
    def!(
        "cgroup/bind4",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET4_BIND,
        0,
        None
    ),
    def!(
        "cgroup/bind6",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET6_BIND,
        0,
        None
    ),
    def!(
        "cgroup/connect4",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET4_CONNECT,
        0,
        None
    ),
    def!(
        "cgroup/connect6",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET6_CONNECT,
        0,
        None
    ),
    def!(
        "cgroup/connect_unix",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UNIX_CONNECT,
        0,
        None
    ),
    def!(
        "cgroup/sendmsg4",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UDP4_SENDMSG,
        0,
        None
    ),
    def!(
        "cgroup/sendmsg6",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UDP6_SENDMSG,
        0,
        None
    ),
    def!(
        "cgroup/sendmsg_unix",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UNIX_SENDMSG,
        0,
        None
    ),
    def!(
        "cgroup/recvmsg4",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UDP4_RECVMSG,
        0,
        None
    ),
    def!(
        "cgroup/recvmsg6",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UDP6_RECVMSG,
        0,
        None
    ),
    def!(
        "cgroup/recvmsg_unix",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UNIX_RECVMSG,
        0,
        None
    ),
    def!(
        "cgroup/getpeername4",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET4_GETPEERNAME,
        0,
        None
    ),
    def!(
        "cgroup/getpeername6",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET6_GETPEERNAME,
        0,
        None
    ),
    def!(
        "cgroup/getpeername_unix",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UNIX_GETPEERNAME,
        0,
        None
    ),
    def!(
        "cgroup/getsockname4",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET4_GETSOCKNAME,
        0,
        None
    ),
    def!(
        "cgroup/getsockname6",
        CGROUP_SOCK_ADDR,
        at::CGROUP_INET6_GETSOCKNAME,
        0,
        None
    ),
    def!(
        "cgroup/getsockname_unix",
        CGROUP_SOCK_ADDR,
        at::CGROUP_UNIX_GETSOCKNAME,
        0,
        None
    ),
    def!("cgroup/sysctl", CGROUP_SYSCTL, at::CGROUP_SYSCTL, 0, None),
    def!(
        "cgroup/getsockopt",
        CGROUP_SOCKOPT,
        at::CGROUP_GETSOCKOPT,
        0,
        None
    ),
    def!(
        "cgroup/setsockopt",
        CGROUP_SOCKOPT,
        at::CGROUP_SETSOCKOPT,
        0,
        None
    ),
    def!("cgroup/dev", CGROUP_DEVICE, at::CGROUP_DEVICE, 0, None),
    def!("struct_ops+", STRUCT_OPS, 0, 0, None),
    def!("struct_ops.s+", STRUCT_OPS, 0, SLEEPABLE, None),
    def!("sk_lookup", SK_LOOKUP, at::SK_LOOKUP, 0, None),
    def!("netfilter", NETFILTER, at::NETFILTER, 0, None),
];
