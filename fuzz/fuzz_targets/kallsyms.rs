//! kallsyms / kallmodsyms text: the table and the streaming resolver must
//! agree on every name the table holds (and on a few it does not): the
//! same address and error, INVALID from both or neither; and when the
//! table accepts the text, the resolver must not fail.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Write;

use ksym::internals::resolve::{resolve, Source};
use ksym::internals::table::{Lookup, Options, Table};

fuzz_target!(|data: &[u8]| {
    let table = Table::from_bytes(data, &Options::default());
    // The same text as a file, for the streaming pass.
    let path = std::env::temp_dir().join(format!("ksym-fuzz-kallsyms-{}", std::process::id()));
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(data))
        .unwrap();
    let source = Source {
        kallsyms_path: Some(path),
        builtin_ranges: None,
    };
    let Ok(t) = table else {
        // A table refused: the pass may still answer (it checks less), but
        // must not crash.
        let _ = resolve(&source, &[b"x".as_slice()]);
        return;
    };
    let mut names: Vec<Vec<u8>> = Vec::new();
    let _ = t.for_each_match(b"*", |s| {
        if names.len() < 24 {
            names.push(s.name.to_bytes().to_vec());
            names.push([s.module.to_bytes(), b"`", s.name.to_bytes()].concat());
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    names.push(b"libksym_fuzz_absent".to_vec());
    // Names the query grammar refuses (a fuzzed name may hold a backtick):
    // INVALID from both, the resolver refusing the whole call.
    let (queries, refused): (Vec<&[u8]>, Vec<&[u8]>) = names
        .iter()
        .map(|n| n.as_slice())
        .partition(|q| ksym::internals::rules::query::Query::parse(q).is_ok());
    for q in refused.iter().take(4) {
        let shown = String::from_utf8_lossy(q);
        let t_err = t.lookup(q).err().map(|e| e.code());
        let r_err = resolve(&source, &[q]).err().map(|e| e.code());
        assert_eq!(
            (t_err, r_err),
            (
                Some(ksym::internals::error::INVALID),
                Some(ksym::internals::error::INVALID)
            ),
            "query {shown:?}: (table, resolver)"
        );
    }
    // The table accepted the text: the streaming pass must answer too.
    let (answers, _) = match resolve(&source, &queries) {
        Ok(r) => r,
        Err(e) => panic!("the table accepts this text, the resolver fails: {e:?}"),
    };
    for (q, a) in queries.iter().zip(&answers) {
        let (addr, err) = match t.lookup(q) {
            Ok(Lookup::Found(s)) => (s.addr, 0),
            Ok(Lookup::Ambiguous(s, e)) => (s.addr, e.code()),
            Err(e) => (0, e.code()),
        };
        assert_eq!(
            (a.addr, a.err),
            (addr, err),
            "query {:?}",
            String::from_utf8_lossy(q)
        );
    }
});
