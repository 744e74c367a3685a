//! Batch resolution and the pull-through cache: one pass, the table's
//! semantics, only requested names kept, module changes followed, no torn
//! answers under concurrency.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::TempDir;
use ksym::internals::error::{AMBIGUOUS, NOT_FOUND, RESTRICTED};
use ksym::internals::resolve::cache::Cache;
use ksym::internals::resolve::{resolve, Answer, Source};
use ksym::{Lookup, Table, TableOptions as Options};

fn source(path: &Path) -> Source {
    Source {
        kallsyms_path: Some(path.to_path_buf()),
        builtin_ranges: None,
    }
}

/// What the table says: (address, error) with resolve's conventions.
fn table_answer(t: &Table, q: &[u8]) -> (u64, i32) {
    match t.lookup(q) {
        Ok(Lookup::Found(s)) => (s.addr, 0),
        Ok(Lookup::Ambiguous(s, _)) => (s.addr, AMBIGUOUS),
        Err(e) if e.code() == NOT_FOUND => (0, NOT_FOUND),
        Err(e) => panic!("{}: {e}", String::from_utf8_lossy(q)),
    }
}

/// Every answer is the table's.
fn assert_table_answers(t: &Table, qs: &[Vec<u8>], answers: &[Answer]) {
    assert_eq!(qs.len(), answers.len());
    for (q, a) in qs.iter().zip(answers) {
        assert_eq!(
            (a.addr, a.err),
            table_answer(t, q),
            "{}",
            String::from_utf8_lossy(q)
        );
    }
}

fn sample_queries(text: &[u8], n: usize) -> Vec<Vec<u8>> {
    let refs = common::reference(text);
    let mut out = Vec::new();
    let step = (refs.len() / n).max(1);
    for (k, r) in refs.iter().step_by(step).enumerate() {
        match k % 4 {
            0 => out.push(r.name.clone()),
            1 => out.push([&r.module[..], b"`", &r.name].concat()),
            2 => out.push([b"vmlinux`", &r.name[..]].concat()),
            _ => out.push([&r.name[..], b".missing"].concat()),
        }
    }
    out
}

#[test]
fn one_pass_gives_the_tables_answers() {
    for data in ["linux-6.12-cloud/kallsyms", "linux-6.1-cloud/kallsyms"] {
        let (_dir, path) = common::data_file(data);
        let text = std::fs::read(&path).unwrap();
        let t = Table::from_bytes(&text, &Options::default()).unwrap();
        let qs = sample_queries(&text, 4000);
        let refs: Vec<&[u8]> = qs.iter().map(|q| q.as_slice()).collect();
        let (answers, stats) = resolve(&source(&path), &refs).unwrap();
        assert_eq!(stats.bytes, text.len());
        assert!(!stats.stopped_early);
        // Almost every line goes the fast way (the first ones, where the
        // addresses may still all be zero, do not).
        assert!(stats.fast_lines + 1000 > stats.lines, "{stats:?}");
        assert_table_answers(&t, &qs, &answers);
        let mut kinds = HashMap::new();
        for a in &answers {
            *kinds.entry(a.err).or_insert(0) += 1;
        }
        assert!(
            kinds[&0] > 1000 && kinds[&NOT_FOUND] > 500 && kinds[&AMBIGUOUS] > 5,
            "{kinds:?}"
        );
    }
}

#[test]
fn odd_lines_anywhere_give_the_same_answers() {
    // Lines the fast walk does not take (a control byte in a name, a short
    // address, a name over two blocks) inside
    // a real file: their reads are walked line by line, with the same
    // answers as the table's.
    let (_dir, path) = common::data_file("linux-6.12-cloud/kallsyms");
    let text = std::fs::read(&path).unwrap();
    let long = format!("ffffffff81000100 t {}\n", "n".repeat(150));
    let odd: [&[u8]; 3] = [
        b"ffffffff81000040 t ctl\x01name\n",
        b"81000080 t short_addr\n",
        long.as_bytes(),
    ];
    let mut edited = Vec::new();
    let mut lines = text.split_inclusive(|&b| b == b'\n');
    for (k, o) in odd.iter().enumerate() {
        for l in lines.by_ref().take(20_000 + 7 * k) {
            edited.extend_from_slice(l);
        }
        edited.extend_from_slice(o);
    }
    lines.for_each(|l| edited.extend_from_slice(l));
    let dir = TempDir::new();
    let p = dir.path().join("kallsyms");
    std::fs::write(&p, &edited).unwrap();
    let t = Table::from_bytes(&edited, &Options::default()).unwrap();
    let mut qs = sample_queries(&edited, 2000);
    for q in ["ctl\x01name", "short_addr", &"n".repeat(150)] {
        qs.push(q.as_bytes().to_vec());
    }
    let refs: Vec<&[u8]> = qs.iter().map(|q| q.as_slice()).collect();
    let (answers, stats) = resolve(&source(&p), &refs).unwrap();
    assert_table_answers(&t, &qs, &answers);
    for a in &answers[answers.len() - 3..] {
        assert_eq!(a.err, 0);
    }
    assert!(stats.fast_lines < stats.lines - 3, "{stats:?}");
    assert!(stats.fast_lines > stats.lines / 2, "{stats:?}");
}

#[test]
fn vmlinux_only_queries_stop_at_the_first_module_line() {
    let (_dir, path) = common::data_file("linux-6.12-cloud/kallsyms");
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    let (a, stats) = resolve(
        &source(&path),
        &[b"vmlinux`schedule", b"vmlinux`xfs_file_open"],
    )
    .unwrap();
    assert!(stats.stopped_early);
    assert!(stats.bytes < len, "{} of {len}", stats.bytes);
    assert_eq!(a[0].err, 0);
    assert_eq!(a[1].err, NOT_FOUND, "a module symbol is never vmlinux`");
    // One unqualified query reads everything.
    let (_, stats) = resolve(&source(&path), &[b"vmlinux`schedule", b"xfs_file_open"]).unwrap();
    assert!(!stats.stopped_early);
}

/// A FIFO can be read once: a second pass would find no writer and block.
#[test]
fn exactly_one_pass_through_a_fifo() {
    let dir = TempDir::new();
    let fifo = dir.path().join("kallsyms.fifo");
    common::mkfifo(&fifo);
    let text = common::data("vm-6.18/kallsyms");
    let expected = Table::from_bytes(&text, &Options::default()).unwrap();
    let writer_path = fifo.clone();
    let writer = std::thread::spawn(move || std::fs::write(writer_path, &text).unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let reader_path = fifo.clone();
    std::thread::spawn(move || {
        let qs: Vec<&[u8]> = vec![
            b"schedule",
            b"vfs_read",
            b"vmlinux`_text",
            b"no_such_symbol",
        ];
        tx.send(resolve(&source(&reader_path), &qs)).unwrap();
    });
    let (answers, stats) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the pass did not finish")
        .unwrap();
    writer.join().unwrap();
    assert_eq!(stats.lines, expected.len());
    for (q, a) in [
        &b"schedule"[..],
        b"vfs_read",
        b"vmlinux`_text",
        b"no_such_symbol",
    ]
    .iter()
    .zip(&answers)
    {
        assert_eq!((a.addr, a.err), table_answer(&expected, q));
    }
}

#[test]
fn restricted_and_malformed_files_fail_the_call() {
    let dir = TempDir::new();
    let p = dir.path().join("k");
    std::fs::write(
        &p,
        "0000000000000000 T _text\n0000000000000000 t foo\t[m]\n",
    )
    .unwrap();
    let e = resolve(&source(&p), &[b"foo"]).unwrap_err();
    assert_eq!(e.code(), RESTRICTED);
    std::fs::write(&p, "ffffffff81000000 T _text\nbroken line here\n").unwrap();
    let e = resolve(&source(&p), &[b"foo"]).unwrap_err();
    assert!(e.message().contains(":2:"), "{e}");
    let cache = Cache::new(source(&p), Some(dir.path().join("modules")));
    let e = cache.resolve(&[b"foo"]).unwrap_err();
    assert_eq!(e.code(), ksym::internals::error::FORMAT, "{e}");
    assert!(e.message().contains(":2:"), "{e}");
    assert_eq!(cache.stats().entries, 0);
}

/// A simulated machine: kallsyms and /proc/modules files that change.
struct Machine {
    dir: TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            dir: TempDir::new(),
        }
    }
    fn kallsyms(&self) -> PathBuf {
        self.dir.path().join("kallsyms")
    }
    fn modules(&self) -> PathBuf {
        self.dir.path().join("modules")
    }
    /// Replaces both files atomically (rename), kallsyms first as the kernel
    /// would: symbols exist before the module is listed... or after.
    fn set(&self, kallsyms: &str, modules: &str) {
        let tk = self.dir.path().join("kallsyms.tmp");
        let tm = self.dir.path().join("modules.tmp");
        std::fs::write(&tk, kallsyms).unwrap();
        std::fs::write(&tm, modules).unwrap();
        std::fs::rename(&tk, self.kallsyms()).unwrap();
        std::fs::rename(&tm, self.modules()).unwrap();
    }
    fn cache(&self) -> Cache {
        Cache::new(source(&self.kallsyms()), Some(self.modules()))
    }
}

const CORE: &str = "ffffffff81000000 T _text\n\
                    ffffffff81000100 T common\n\
                    ffffffff81000200 T schedule\n\
                    ffffffff81000300 T vfs_read\n";

fn state_a() -> (String, String) {
    (
        format!(
            "{CORE}ffffffffc0001000 t alpha_fn\t[alpha]\nffffffffc0001100 t alpha_init\t[alpha]\n"
        ),
        "alpha 16384 0 - Live 0xffffffffc0001000\n".to_string(),
    )
}

fn state_b() -> (String, String) {
    (
        format!("{CORE}ffffffffc0002000 t beta_fn\t[beta]\nffffffffc0002100 t common\t[beta]\n"),
        "beta 16384 0 - Live 0xffffffffc0002000\n".to_string(),
    )
}

/// alpha reloaded elsewhere.
fn state_c() -> (String, String) {
    (
        format!(
            "{CORE}ffffffffc0005000 t alpha_fn\t[alpha]\nffffffffc0005100 t alpha_init\t[alpha]\n"
        ),
        "alpha 16384 0 - Live 0xffffffffc0005000\n".to_string(),
    )
}

const QUERIES: [&[u8]; 8] = [
    b"alpha`alpha_fn",
    b"alpha_fn",
    b"beta`beta_fn",
    b"beta_fn",
    b"common",
    b"vmlinux`common",
    b"schedule",
    b"vmlinux`vfs_read",
];

fn expected(state: &(String, String)) -> Vec<(u64, i32)> {
    let t = Table::from_bytes(state.0.as_bytes(), &Options::default()).unwrap();
    QUERIES.iter().map(|q| table_answer(&t, q)).collect()
}

#[test]
fn cache_keeps_only_what_was_asked_and_follows_modules() {
    let m = Machine::new();
    let (a, b, c) = (state_a(), state_b(), state_c());
    m.set(&a.0, &a.1);
    let cache = m.cache();
    assert_eq!(cache.resolve(&QUERIES).unwrap(), expected(&a));
    let s = cache.stats();
    assert_eq!(
        (s.hits, s.misses, s.passes, s.entries),
        (0, 8, 1, 8),
        "only the 8 names asked for"
    );

    // Warm: no pass at all.
    assert_eq!(cache.resolve(&QUERIES).unwrap(), expected(&a));
    let s = cache.stats();
    assert_eq!((s.hits, s.passes), (8, 1));

    // alpha unloaded, beta loaded (with a second `common`).
    m.set(&b.0, &b.1);
    let got = cache.resolve(&QUERIES).unwrap();
    assert_eq!(got, expected(&b));
    assert_eq!(got[4].1, AMBIGUOUS, "common is now in vmlinux and beta");
    let s = cache.stats();
    assert_eq!(s.passes, 2, "one pass for all the misses");
    // Kept: vmlinux`common and vmlinux`vfs_read (the core never changes).
    assert_eq!(s.hits, 8 + 2);
    assert_eq!(s.dropped, 6);

    // alpha back, at another address.
    m.set(&c.0, &c.1);
    assert_eq!(cache.resolve(&QUERIES).unwrap(), expected(&c));
    assert_eq!(
        cache.resolve(&[b"alpha`alpha_fn"]).unwrap()[0].0,
        0xffffffffc0005000
    );

    // A module-qualified answer survives changes to other modules.
    let before = cache.stats();
    m.set(
        &format!("{}ffffffffc0009000 t g\t[gamma]\n", c.0),
        &format!("{}gamma 4096 0 - Live 0xffffffffc0009000\n", c.1),
    );
    assert_eq!(
        cache.resolve(&[b"alpha`alpha_fn"]).unwrap()[0].0,
        0xffffffffc0005000
    );
    assert_eq!(
        cache.stats().passes,
        before.passes,
        "alpha`alpha_fn was still valid"
    );
    // ...but an unqualified one does not (gamma could define it).
    cache.resolve(&[b"alpha_fn"]).unwrap();
    assert_eq!(cache.stats().passes, before.passes + 1);

    cache.invalidate();
    assert_eq!(cache.stats().entries, 0);
    assert_eq!(
        cache.resolve(&[b"vmlinux`vfs_read"]).unwrap()[0].0,
        0xffffffff81000300
    );
}

#[test]
fn a_query_repeated_in_one_call_is_looked_up_once_and_answered_everywhere() {
    let m = Machine::new();
    let a = state_a();
    m.set(&a.0, &a.1);
    let cache = m.cache();
    let qs: [&[u8]; 6] = [
        b"alpha_fn",
        b"schedule",
        b"alpha_fn",
        b"nope",
        b"schedule",
        b"nope",
    ];
    let got = cache.resolve(&qs).unwrap();
    assert_eq!(
        got,
        vec![
            (0xffffffffc0001000, 0),
            (0xffffffff81000200, 0),
            (0xffffffffc0001000, 0),
            (0, NOT_FOUND),
            (0xffffffff81000200, 0),
            (0, NOT_FOUND),
        ]
    );
    let s = cache.stats();
    assert_eq!((s.passes, s.misses, s.entries), (1, 6, 3));
}

#[test]
fn pseudo_module_answers_are_never_kept() {
    let m = Machine::new();
    m.set(
        &format!("{CORE}ffffffffc0003000 t bpf_prog_0123456789abcdef_probe\t[bpf]\nffffffffc0004000 t ftrace_trampoline\t[__builtin__ftrace]\n"),
        "",
    );
    let cache = m.cache();
    let qs: [&[u8]; 4] = [
        b"bpf_prog_0123456789abcdef_probe",
        b"bpf`x",
        b"ftrace_trampoline",
        b"bpf_prog_ffffffffffffffff_gone",
    ];
    cache.resolve(&qs).unwrap();
    assert_eq!(cache.stats().entries, 0);
    cache.resolve(&qs).unwrap();
    assert_eq!(cache.stats().passes, 2);
}

#[test]
fn concurrent_resolves_and_invalidations_never_see_a_wrong_answer() {
    let m = Arc::new(Machine::new());
    let (a, b) = (state_a(), state_b());
    let (ea, eb) = (expected(&a), expected(&b));
    m.set(&a.0, &a.1);
    let cache = Arc::new(m.cache());
    let stop = Arc::new(AtomicBool::new(false));
    let checked = Arc::new(AtomicUsize::new(0));
    let mut threads = Vec::new();
    for t in 0..6 {
        let (cache, stop, checked, ea, eb) = (
            cache.clone(),
            stop.clone(),
            checked.clone(),
            ea.clone(),
            eb.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let mut k: usize = t;
            while !stop.load(Ordering::Relaxed) {
                k = k.wrapping_mul(1103515245).wrapping_add(12345);
                let pick: Vec<usize> = (0..QUERIES.len()).filter(|i| (k >> i) & 1 == 1).collect();
                let qs: Vec<&[u8]> = pick.iter().map(|&i| QUERIES[i]).collect();
                let got = cache.resolve(&qs).unwrap();
                for (&i, g) in pick.iter().zip(&got) {
                    assert!(
                        *g == ea[i] || *g == eb[i],
                        "{}: {g:?} is neither {:?} nor {:?}",
                        String::from_utf8_lossy(QUERIES[i]),
                        ea[i],
                        eb[i]
                    );
                }
                checked.fetch_add(got.len(), Ordering::Relaxed);
            }
        }));
    }
    // Each change waits until the readers have checked 200 more answers:
    // the count does not depend on how loaded the machine is.
    const PER_ROUND: usize = 200;
    for round in 0..60 {
        let s = if round % 2 == 0 { &b } else { &a };
        m.set(&s.0, &s.1);
        if round % 7 == 0 {
            cache.invalidate();
        }
        let target = checked.load(Ordering::Relaxed) + PER_ROUND;
        while checked.load(Ordering::Relaxed) < target {
            std::thread::yield_now();
        }
    }
    m.set(&b.0, &b.1);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    // At rest, every answer is the current state's.
    assert_eq!(cache.resolve(&QUERIES).unwrap(), eb);
    assert!(checked.load(Ordering::Relaxed) >= 60 * PER_ROUND);
    let s = cache.stats();
    eprintln!("{s:?}, {} answers checked", checked.load(Ordering::Relaxed));
}

/// A strong extern not found gets its near matches from one more pass
/// (`not_found_error`), without a table: the message must be the table's,
/// word for word, built-in ranges included.
#[test]
fn near_matches_from_a_pass_are_the_tables() {
    let (_dir, path) = common::data_file("linux-6.12-cloud/kallsyms");
    let ranges = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/linux-6.12-cloud/modules.builtin.ranges");
    for ranges in [None, Some(ranges)] {
        let t = Table::open(&Options {
            kallsyms_path: Some(path.clone()),
            builtin_ranges_path: Some(ranges.clone().unwrap_or_default()),
            ..Default::default()
        })
        .unwrap();
        let src = Source {
            kallsyms_path: Some(path.clone()),
            builtin_ranges: ranges.clone(),
        };
        // Stems of suffixed names, suffixed names that do not exist, names
        // asked in the wrong module or in one that does not exist.
        let mut qs: Vec<String> = Vec::new();
        let mut stems = 0;
        t.for_each_match(b"*.isra.0", |s| {
            let n = s.name.to_string();
            qs.push(n.trim_end_matches(".isra.0").to_string() + ".constprop.9");
            qs.push(format!("xfs`{}", n.trim_end_matches(".isra.0")));
            stems += 1;
            if stems < 40 {
                std::ops::ControlFlow::Continue(())
            } else {
                std::ops::ControlFlow::Break(())
            }
        })
        .unwrap();
        qs.extend(
            [
                "xfs`ext4_file_open",
                "ext4`xfs_file_open",
                "jbd2`ext4_file_open",
                "vmlinux`ext4_file_open",
                "nf-tables`nft_register_chain_type.cold",
                "no_such_module`schedule",
                "schedule.part.0",
                "nothing_like_it_anywhere",
            ]
            .map(String::from),
        );
        let (mut with_hints, mut compared) = (0, 0);
        for q in &qs {
            let want = match t.lookup(q.as_bytes()) {
                Err(e) if e.code() == NOT_FOUND => e,
                // `vmlinux`ext4_file_open` without the ranges.
                _ => continue,
            };
            compared += 1;
            let parsed = ksym::internals::rules::query::Query::parse(q.as_bytes()).unwrap();
            let got = ksym::internals::resolve::not_found_error(&src, &parsed).unwrap();
            assert_eq!(got, want, "{q}");
            with_hints += usize::from(want.message().contains("did you mean"));
        }
        assert!(
            compared + 1 >= qs.len() && compared >= 80,
            "{compared} of {}",
            qs.len()
        );
        assert!(with_hints * 10 > compared * 8, "{with_hints} of {compared}");
    }
}
