//! Many `module`symbol` queries in one streaming pass over kallsyms
//! (no table kept), then the same through a cache that answers again
//! without reading. `cargo run --example resolve [KALLSYMS] [QUERY...]`.

use ksym::{resolve, Cache, ErrorKind, Source};

fn main() -> Result<(), ksym::Error> {
    let mut args = std::env::args().skip(1);
    let source = Source {
        kallsyms_path: args.next().map(Into::into),
        ..Default::default()
    };
    let mut queries: Vec<String> = args.collect();
    if queries.is_empty() {
        queries = ["schedule", "vmlinux`_text", "no_such_symbol_anywhere"]
            .map(String::from)
            .into();
    }
    let qs: Vec<&[u8]> = queries.iter().map(|q| q.as_bytes()).collect();
    let (answers, stats) = resolve(&source, &qs)?;
    for (q, a) in queries.iter().zip(&answers) {
        match ErrorKind::from_code(a.err) {
            _ if a.err == 0 => println!("{q}: {:#x}", a.addr),
            kind => println!("{q}: {kind:?}"),
        }
    }
    println!("one pass: {} lines", stats.lines);

    // The cache: one pass for all misses, then hits until modules change.
    let cache = Cache::new(source, Some("".into()));
    cache.resolve(&qs)?;
    cache.resolve(&qs)?;
    let st = cache.stats();
    println!(
        "cache: {} passes, {} hits, {} misses",
        st.passes, st.hits, st.misses
    );
    Ok(())
}
