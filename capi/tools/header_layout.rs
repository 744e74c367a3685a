//! The layout of `include/ksym.h`: cbindgen's items regrouped by topic.
//!
//! cbindgen writes every constant, then every enum, then every struct, then
//! every function. This puts each item in the section of the `src/ffi` file
//! that declares it, sections in the order `src/ffi/mod.rs` declares its
//! modules, items in the order their file declares them (so a function
//! stands next to the structs and flags it takes), each section opened by
//! the first paragraph of its file's `//!` documentation.
//!
//! Nothing is listed by hand: a new item lands in its file's section, a new
//! file (declared in mod.rs, or it is not compiled) gets a section of its
//! own. What cannot be placed is an error, never a silent drop: an item no
//! file declares, a name two files declare, a type used before its section
//! (a struct of a later file), a file without a `//!` paragraph, an
//! exported item of a file that cbindgen left out.
//!
//! Used by build.rs (`make header`, `make check-header`) and by
//! tests/header_order.rs; plain std, no cbindgen types.

use std::collections::{HashMap, HashSet};

/// A source file of src/ffi: its module name, path and text.
pub struct Source {
    pub path: String,
    pub text: String,
}

/// The fixed parts of the header around the sections.
pub struct Frame<'a> {
    /// The comment at the top (without `/*` `*/` it is taken as is).
    pub top: &'a str,
    pub guard: &'a str,
    pub includes: &'a [String],
    /// Text put after the first section's banner (error codes, KSYM_OPTS).
    pub prelude: &'a str,
}

/// The modules `mod.rs` declares, in its order (`mod x;`, `pub mod x;`).
pub fn modules(mod_rs: &str) -> Vec<String> {
    mod_rs
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

/// An item a Rust file declares for C: its name, where, and whether the
/// header must carry it.
struct Decl {
    name: String,
    /// A struct, enum or type (C's tag and typedef names), else a value.
    is_type: bool,
    offset: usize,
    /// An exported function or a `pub const`, not `cbindgen:ignore`d.
    required: bool,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn ident(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// The C-visible declarations of a Rust file: `pub const|static|struct|
/// enum|type NAME` and `pub [unsafe] extern "C" fn NAME`, at the start of
/// a line (cbindgen reads no nested module of these files).
fn declarations(text: &str) -> Vec<Decl> {
    let mut out = Vec::new();
    let mut offset = 0;
    let mut ignored = false;
    let mut no_mangle = false;
    for line in text.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let l = line.trim_end();
        if l.starts_with("///") {
            ignored |= l.contains("cbindgen:ignore");
            continue;
        }
        if l.starts_with("#[") {
            no_mangle |= l.starts_with("#[no_mangle]") || l.starts_with("#[unsafe(no_mangle)]");
            continue;
        }
        let (was_ignored, was_exported) = (ignored, no_mangle);
        ignored = false;
        no_mangle = false;
        let Some(rest) = l.strip_prefix("pub ") else {
            continue;
        };
        let (rest, function) = match rest
            .strip_prefix("unsafe extern \"C\" fn ")
            .or_else(|| rest.strip_prefix("extern \"C\" fn "))
        {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let (rest, required, is_type) = if function {
            (rest, was_exported, false)
        } else if let Some(r) = rest.strip_prefix("const ") {
            (r, true, false)
        } else if let Some(r) = rest.strip_prefix("static ") {
            (r, false, false)
        } else if let Some(r) = ["struct ", "enum ", "type "]
            .iter()
            .find_map(|k| rest.strip_prefix(k))
        {
            (r, false, true)
        } else {
            continue;
        };
        if let Some(name) = ident(rest) {
            let required = required && !was_ignored;
            out.push(Decl {
                name: name.to_string(),
                is_type,
                offset: at,
                required,
            });
        }
    }
    out
}

/// The first paragraph of a file's `//!` documentation.
fn section_doc(src: &Source) -> Result<String, String> {
    let mut para = Vec::new();
    for l in src.text.lines() {
        let Some(d) = l.strip_prefix("//!") else {
            break;
        };
        let d = d.strip_prefix(' ').unwrap_or(d);
        if d.trim().is_empty() {
            if para.is_empty() {
                continue;
            }
            break;
        }
        para.push(d.to_string());
    }
    if para.is_empty() {
        return Err(format!(
            "{}: no //! documentation: its first paragraph opens the file's section of include/ksym.h",
            src.path
        ));
    }
    Ok(para.join("\n"))
}

/// One item of cbindgen's output.
struct Block {
    text: String,
    name: String,
    is_type: bool,
    /// The identifiers of its code, in order (its own name included: a
    /// function may take the struct of its name, `ksym_btf_stats`).
    code: Vec<String>,
    /// The identifiers of its code and comments, in order.
    mentions: Vec<String>,
    /// The type its comment starts with (`ksym_symbol.flags: ...`).
    doc_owner: Option<String>,
}

/// The code of a block without its comments.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        code.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    code.push_str(rest);
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn idents(text: &str) -> Vec<String> {
    text.split(|c: char| !is_ident(c))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// The name an item of C code declares, and whether it is a type.
fn declared(code: &str) -> Option<(String, bool)> {
    let code = code.trim();
    if let Some(r) = code.strip_prefix("#define ") {
        return ident(r).map(|n| (n.to_string(), false));
    }
    for kw in ["struct ", "enum ", "union "] {
        // `struct NAME {` or `struct NAME;`, not a function returning one.
        if let Some(name) = code.strip_prefix(kw).and_then(ident) {
            let after = code[kw.len() + name.len()..].trim_start();
            if after.starts_with('{') || after.starts_with(';') {
                return Some((name.to_string(), true));
            }
        }
    }
    if code.starts_with("typedef ") {
        let decl = code.trim_end_matches(';');
        let name = match decl.find("(*") {
            Some(i) => ident(&decl[i + 2..]),
            None => decl.rsplit(|c: char| !is_ident(c)).find(|t| !t.is_empty()),
        };
        return name.map(|n| (n.to_string(), true));
    }
    // A function (the identifier before the first parenthesis) or a static.
    let head = code.split('(').next()?;
    head.trim_end_matches(';')
        .rsplit(|c: char| !is_ident(c))
        .find(|t| !t.is_empty())
        .map(|n| (n.to_string(), false))
}

/// The first word of a block's comment when it is `name.field` or `name`
/// followed by a colon or a period (backticks aside).
fn doc_owner(text: &str) -> Option<String> {
    let first = text
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches("/**")
                .trim_start_matches("/*")
                .trim_start_matches('*')
                .trim()
        })
        .find(|l| !l.is_empty())?;
    let word = first.split_whitespace().next()?.trim_matches('`');
    let name = ident(word)?;
    let rest = word[name.len()..].trim_start_matches('`');
    (rest.starts_with('.') || rest.starts_with(':')).then(|| name.to_string())
}

/// cbindgen's items: blocks separated by blank lines.
fn blocks(items: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    for text in items
        .split("\n\n")
        .map(|b| b.trim_matches('\n'))
        .filter(|b| !b.trim().is_empty())
    {
        let code = code_of(text);
        let Some((name, is_type)) = declared(&code) else {
            return Err(format!(
                "cannot tell what this part of cbindgen's output declares:\n{text}"
            ));
        };
        let comments = text.len() != code.len();
        out.push(Block {
            text: text.to_string(),
            is_type,
            code: idents(&code),
            mentions: idents(text),
            doc_owner: if comments { doc_owner(text) } else { None },
            name,
        });
    }
    Ok(out)
}

fn banner(doc: &str) -> String {
    let mut s = format!("/* {}\n", "=".repeat(75));
    for l in doc.lines() {
        s.push_str(if l.is_empty() { " *" } else { " * " });
        s.push_str(l);
        s.push('\n');
    }
    s.push_str(&format!(" * {} */", "=".repeat(72)));
    s
}

/// Lays out cbindgen's `items` (generated without header, guard, includes
/// or C++ wrapping) by the files of `sources` (in mod.rs order); `excluded`
/// are names the configuration leaves out on purpose.
pub fn layout(
    items: &str,
    sources: &[Source],
    excluded: &[String],
    frame: &Frame,
) -> Result<String, String> {
    let blocks = blocks(items)?;
    // Which file declares each name (C keeps tags and values apart:
    // `struct ksym_btf_stats` and `ksym_btf_stats()`), and where.
    let mut home: HashMap<(String, bool), (usize, usize)> = HashMap::new();
    let mut required = Vec::new();
    for (f, src) in sources.iter().enumerate() {
        for d in declarations(&src.text) {
            let key = (d.name, d.is_type);
            if let Some(&(g, _)) = home.get(&key) {
                if g != f {
                    return Err(format!(
                        "`{}` is declared by both {} and {}",
                        key.0, sources[g].path, src.path
                    ));
                }
                continue;
            }
            if d.required && !excluded.contains(&key.0) {
                required.push((key.0.clone(), f));
            }
            home.insert(key, (f, d.offset));
        }
    }
    let emitted: HashSet<&str> = blocks
        .iter()
        .filter(|b| !b.is_type)
        .map(|b| b.name.as_str())
        .collect();
    for (name, f) in &required {
        if !emitted.contains(name.as_str()) {
            return Err(format!(
                "cbindgen left out `{name}` ({}): a C type it cannot express, or a module it does not reach",
                sources[*f].path
            ));
        }
    }
    let mut placed = Vec::with_capacity(blocks.len());
    for (i, b) in blocks.iter().enumerate() {
        let Some(&(f, off)) = home.get(&(b.name.clone(), b.is_type)) else {
            return Err(format!(
                "cbindgen emitted `{}`, which no file of src/ffi declares at the start of a line \
                 (pub const/static/struct/enum/type, pub extern \"C\" fn): it cannot be placed",
                b.name
            ));
        };
        placed.push((f, off, i));
    }
    placed.sort();

    let mut out = String::new();
    out.push_str(frame.top.trim_end());
    out.push_str(&format!("\n\n#ifndef {0}\n#define {0}\n\n", frame.guard));
    for inc in frame.includes {
        out.push_str(&format!("#include <{inc}>\n"));
    }
    out.push_str("\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
    let mut types: HashMap<&str, (usize, usize)> = HashMap::new();
    for &(f, _, i) in &placed {
        if blocks[i].is_type {
            types.insert(blocks[i].name.as_str(), (f, i));
        }
    }
    let mut sequence = Vec::with_capacity(blocks.len());
    let mut first = true;
    for (f, src) in sources.iter().enumerate() {
        let mine: Vec<usize> = placed.iter().filter(|p| p.0 == f).map(|p| p.2).collect();
        if mine.is_empty() {
            continue;
        }
        out.push('\n');
        out.push_str(&banner(&section_doc(src)?));
        out.push('\n');
        if first {
            out.push('\n');
            out.push_str(frame.prelude.trim_matches('\n'));
            out.push('\n');
            first = false;
        }
        for i in section_order(&blocks, &mine, f, &types, sources)? {
            sequence.push(i);
            out.push('\n');
            out.push_str(&blocks[i].text);
            out.push('\n');
        }
    }
    // Every item once, and every type before the code that uses it.
    let mut pos = vec![usize::MAX; blocks.len()];
    for (p, &i) in sequence.iter().enumerate() {
        if pos[i] != usize::MAX {
            return Err(format!("`{}` was laid out twice", blocks[i].name));
        }
        pos[i] = p;
    }
    if let Some(i) = pos.iter().position(|&p| p == usize::MAX) {
        return Err(format!("`{}` was left out of the layout", blocks[i].name));
    }
    for (i, b) in blocks.iter().enumerate() {
        for t in &b.code {
            if let Some(&(_, j)) = types.get(t.as_str()) {
                if j != i && pos[j] > pos[i] {
                    return Err(format!("`{}` comes before `{t}`, which it uses", b.name));
                }
            }
        }
    }
    out.push_str("\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n");
    out.push_str(&format!("\n#endif  /* {} */\n", frame.guard));
    Ok(out)
}

/// The order of one section's blocks (`mine`, in source order): functions
/// and the rest where their file declares them; a type just before the
/// first item of the section that mentions it (code or comment); a
/// constant whose comment starts with a type (`ksym_symbol.flags: ...`),
/// or whose value uses such a constant, right after that type.
fn section_order(
    blocks: &[Block],
    mine: &[usize],
    f: usize,
    types: &HashMap<&str, (usize, usize)>,
    sources: &[Source],
) -> Result<Vec<usize>, String> {
    let local = |name: &str| types.get(name).filter(|t| t.0 == f).map(|t| t.1);
    // A type of a later section in this section's code cannot be declared in time.
    for &i in mine {
        for c in &blocks[i].code {
            if let Some(&(g, _)) = types.get(c.as_str()) {
                if g > f {
                    return Err(format!(
                        "`{}` ({}) uses `{c}`, which {} declares in a later section of the header: \
                         declare that module earlier in src/ffi/mod.rs, or move the type",
                        blocks[i].name, sources[f].path, sources[g].path
                    ));
                }
            }
        }
    }
    let mut owner: HashMap<usize, usize> = HashMap::new();
    for &i in mine {
        let b = &blocks[i];
        if b.is_type {
            continue;
        }
        let by_doc = b.doc_owner.as_deref().and_then(local);
        let by_value = || {
            b.code.iter().find_map(|c| {
                let j = mine
                    .iter()
                    .copied()
                    .find(|&x| !blocks[x].is_type && blocks[x].name == *c)?;
                owner.get(&j).copied()
            })
        };
        if let Some(t) = by_doc.or_else(by_value) {
            owner.insert(i, t);
        }
    }
    // Types the section's code uses go just before their first user; a type
    // only comments name (an enum of an `int` field) before the first item
    // whose comment names it; a type's own constants do not count.
    let mut used = HashSet::new();
    let mut named = HashSet::new();
    for &i in mine {
        for (list, set) in [
            (&blocks[i].code, &mut used),
            (&blocks[i].mentions, &mut named),
        ] {
            for m in list {
                if let Some(j) = local(m) {
                    if j != i && owner.get(&i) != Some(&j) {
                        set.insert(j);
                    }
                }
            }
        }
    }
    let named: HashSet<usize> = named.difference(&used).copied().collect();
    let mut ctx = Order {
        blocks,
        mine,
        used: &used,
        named: &named,
        owner: &owner,
        local: &local,
        done: HashSet::new(),
        out: Vec::new(),
    };
    for &i in mine {
        if used.contains(&i) || named.contains(&i) || owner.contains_key(&i) {
            continue;
        }
        ctx.emit(i);
    }
    // Types and constants nothing in the section placed (a constant of a type
    // that is never emitted first, say): at their source position's end.
    for &i in mine {
        ctx.emit(i);
    }
    Ok(ctx.out)
}

struct Order<'a, L: Fn(&str) -> Option<usize>> {
    blocks: &'a [Block],
    mine: &'a [usize],
    used: &'a HashSet<usize>,
    named: &'a HashSet<usize>,
    owner: &'a HashMap<usize, usize>,
    local: &'a L,
    done: HashSet<usize>,
    out: Vec<usize>,
}

impl<L: Fn(&str) -> Option<usize>> Order<'_, L> {
    fn emit(&mut self, i: usize) {
        if !self.done.insert(i) {
            return;
        }
        let b = &self.blocks[i];
        for (list, set) in [(&b.code, self.used), (&b.mentions, self.named)] {
            for m in list {
                if let Some(j) = (self.local)(m) {
                    if j != i && set.contains(&j) {
                        self.emit(j);
                    }
                }
            }
        }
        self.out.push(i);
        if b.is_type {
            for &c in self.mine {
                if self.owner.get(&c) == Some(&i) {
                    self.emit(c);
                }
            }
        }
    }
}
