//! Untyped externs resolved against kallsyms ([`Object::resolve_ksyms`]).

use crate::bpf::object::externs::ExternKind;
use crate::bpf::object::Object;
use crate::error::{Error, Result, AMBIGUOUS, NOT_FOUND, RESTRICTED};
use crate::resolve::cache::Cache;
use crate::resolve::{not_found_error, resolve_parsed, Source};
use crate::rules::query::Query;

impl Object {
    /// Resolves every extern in one pass: through `cache` when given (misses
    /// cost one pass, hits none), else over /proc/kallsyms (and the default
    /// built-in ranges file, if any). A strong extern not found is
    /// `KSYM_ERR_NOT_FOUND` naming it and near matches; a weak one gets 0;
    /// an ambiguous one is an error; a restricted kallsyms is an error unless
    /// every extern is weak.
    pub fn resolve_ksyms(&mut self, cache: Option<&Cache>) -> Result<()> {
        let untyped: Vec<usize> = (0..self.externs.len())
            .filter(|&i| self.externs[i].kind == ExternKind::Ksym)
            .collect();
        if untyped.is_empty() {
            self.stage.ksyms_resolved();
            return Ok(());
        }
        let names: Vec<&[u8]> = untyped
            .iter()
            .map(|&i| self.externs[i].name.to_bytes())
            .collect();
        let parsed: Vec<Query<'_>> = names
            .iter()
            .map(|n| {
                Query::parse(n)
                    .map_err(|e| e.context(format!("extern `{}`", String::from_utf8_lossy(n))))
            })
            .collect::<Result<_>>()?;
        let default_source;
        let source = match cache {
            Some(c) => c.source(),
            None => {
                default_source = Source::proc_kallsyms();
                &default_source
            }
        };
        let answers: Result<Vec<(u64, i32)>> = match cache {
            Some(c) => c.resolve(&names),
            None => resolve_parsed(source, &parsed)
                .map(|(a, _)| a.iter().map(|a| (a.addr, a.err)).collect()),
        };
        let all_weak = untyped.iter().all(|&i| self.externs[i].weak);
        let answers = match answers {
            Ok(a) => a,
            Err(e) if e.code() == RESTRICTED && all_weak => vec![(0, NOT_FOUND); untyped.len()],
            Err(e) => {
                return Err(e.context(format!(
                    "resolving the {} untyped extern(s) of the object",
                    untyped.len()
                )))
            }
        };
        for ((&i, &(addr, err)), q) in untyped.iter().zip(&answers).zip(&parsed) {
            let x = &self.externs[i];
            let name = x.name.to_string_lossy();
            match err {
                0 => {}
                NOT_FOUND if x.weak => {}
                NOT_FOUND => {
                    // The near matches need one more pass: only on this error path.
                    let hint = not_found_error(source, q)
                        .map(|e| format!(": {}", e.message()))
                        .unwrap_or_default();
                    return Err(Error::not_found(format!(
                        "extern `{name}` (strong __ksym) not found{hint}; declare it __weak if it may be absent"
                    )));
                }
                AMBIGUOUS => {
                    return Err(Error::new(
                        AMBIGUOUS,
                        format!(
                            "extern `{name}` is ambiguous: several kernel symbols at different addresses \
                             (lowest {addr:#x}); name one with an asm label such as \
                             `extern const void x __asm__(\"module`{name}\") __ksym;`"
                        ),
                    ))
                }
                e => return Err(Error::new(e, format!("extern `{name}`: cannot be resolved"))),
            }
        }
        for (&i, &(addr, err)) in untyped.iter().zip(&answers) {
            let x = &mut self.externs[i];
            x.resolved = err == 0;
            x.addr = if err == 0 { addr } else { 0 };
        }
        self.stage.ksyms_resolved();
        Ok(())
    }
}
