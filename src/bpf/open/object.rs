//! `Object`'s methods of the open: [`Object::parse`] and [`Object::open`],
//! and what they found (programs, maps, externs, initial slots, the
//! `.kconfig` map).
//!
//! The data sections' variables: found by name, and set before the loader
//! creates their maps, as a libbpf skeleton's `obj->rodata->x = v` or
//! `bpf_map__set_initial_value` (and aya's `set_global`) do. A loader
//! without libbpf sets a tool's options (`const volatile` filters in
//! `.rodata`, which the verifier reads as constants) this way; the map it
//! then creates takes [`Map::initial_value`].

use std::ffi::CString;

use super::load;
use crate::base::read::limits;
use crate::bpf::elf::file;
use crate::bpf::object::externs::Extern;
use crate::bpf::object::{nth, Map, Object, Program, Slot, Var};
use crate::error::{Call, Error, ErrorKind, Result};

impl Object {
    /// Parses an object file's bytes (copied as needed: nothing borrows them).
    pub fn parse(data: &[u8]) -> Result<Object> {
        load(data)
    }

    /// Reads and parses an object file (only the sections it needs:
    /// DWARF and the relocations of .BTF.ext are left unread).
    pub fn open(path: &std::path::Path) -> Result<Object> {
        let data = file::read_object(path)?;
        Self::parse(&data).map_err(|e| e.context(path.display()))
    }

    /// The license (`SEC("license")`), as `BPF_PROG_LOAD` takes it.
    pub fn license(&self) -> &CString {
        &self.license
    }

    /// Every program, aliases included: the object's in symbol order, then
    /// the aliases [`Object::expand`] made, in the order it made them.
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// The maps, in libbpf's order.
    pub fn maps(&self) -> &[Map] {
        &self.maps
    }

    /// The externs (`__ksym`, `__kconfig`).
    pub fn externs(&self) -> &[Extern] {
        &self.externs
    }

    /// The index of the program named `name` (its symbol name).
    pub fn find_program(&self, name: &[u8]) -> Result<usize> {
        find_named(&self.programs, name, "program", |p| &p.name)
    }

    /// The index of the map named `name`.
    pub fn find_map(&self, name: &[u8]) -> Result<usize> {
        find_named(&self.maps, name, "map", |m| &m.name)
    }

    /// Program `prog`, or `NotFound` saying how many there are.
    pub fn program(&self, prog: usize) -> Result<&Program> {
        nth(&self.programs, prog, "program", "the object")
    }

    /// Map `map`, or `NotFound` saying how many there are.
    pub fn map(&self, map: usize) -> Result<&Map> {
        nth(&self.maps, map, "map", "the object")
    }

    /// Extern `ext`, or `NotFound` saying how many there are.
    pub fn external(&self, ext: usize) -> Result<&Extern> {
        nth(&self.externs, ext, "extern", "the object")
    }

    /// Initial slot `i` of map `map`.
    pub fn slot(&self, map: usize, i: usize) -> Result<&Slot> {
        let m = self.map(map)?;
        nth(
            &m.slots,
            i,
            "initial slot",
            &format!("map `{}`", m.name.to_string_lossy()),
        )
    }

    /// The `.kconfig` map, if the object has `.kconfig` externs.
    pub fn kconfig_map(&self) -> Option<usize> {
        self.kconfig_map
    }

    /// The data sections' variables, by map, then offset.
    pub fn vars(&self) -> &[Var] {
        &self.vars
    }

    /// Variable `var`, or `NotFound` saying how many there are.
    pub fn var(&self, var: usize) -> Result<&Var> {
        nth(&self.vars, var, "variable", "the object")
    }

    /// The index of the variable named `name`. `NotFound` lists the
    /// variables; `Ambiguous` when several have that name (`static` ones
    /// of different functions or files), saying where each is.
    pub fn find_var(&self, name: &[u8]) -> Result<usize> {
        let mut hits = self
            .vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.name.to_bytes() == name);
        let shown = String::from_utf8_lossy(name);
        let Some((first, _)) = hits.next() else {
            let names: Vec<String> = self
                .vars
                .iter()
                .map(|v| {
                    format!(
                        "{}`{}",
                        self.maps[v.map].name.to_string_lossy(),
                        v.name.to_string_lossy()
                    )
                })
                .collect();
            return Err(Error::not_found(if names.is_empty() {
                format!("no variable `{shown}`: the object has no variables in data sections")
            } else {
                format!(
                    "no variable `{shown}` in the object's data sections (variables: {})",
                    names.join(", ")
                )
            }));
        };
        let at = |v: &Var| format!("{}+{}", self.maps[v.map].name.to_string_lossy(), v.offset);
        let others: Vec<String> = hits.map(|(_, v)| at(v)).collect();
        if others.is_empty() {
            return Ok(first);
        }
        Err(Error::with_kind(
            ErrorKind::Ambiguous,
            format!(
                "{} variables are named `{shown}` ({}, {}: `static` ones of different functions \
                 or files): set the section's whole initial value instead",
                others.len() + 1,
                at(&self.vars[first]),
                others.join(", ")
            ),
        ))
    }

    /// Sets the whole initial value of data-section map `map` (`.rodata`,
    /// `.data`, `.bss`, ...: not `.kconfig`, which resolve_btf fills in)
    /// before the loader creates it: `data` must be the map's value size.
    /// `.bss` gets an initial value this way (it has none otherwise).
    pub fn set_initial_value(&mut self, map: usize, data: &[u8]) -> Result<()> {
        let m = self.writable_data_map(map)?;
        if data.len() != m.value_size as usize {
            return Err(Error::invalid(format!(
                "map `{}`: {} bytes given, its value is {} bytes",
                m.name.to_string_lossy(),
                data.len(),
                m.value_size
            )));
        }
        self.maps[map].initial_value = Some(data.to_vec());
        Ok(())
    }

    /// Sets variable `name` of a data section to `value` (exactly its
    /// size) in its map's initial value, before the loader creates that
    /// map.
    ///
    /// ```
    /// use ksym::bpf::Object;
    ///
    /// // c-tests/bpf/aliases.bpf.o: `const volatile __u64 magic` in .rodata.
    /// let mut o = Object::open(concat!(env!("CARGO_MANIFEST_DIR"), "/c-tests/bpf/aliases.bpf.o").as_ref())?;
    /// o.set_var(b"magic", &42u64.to_ne_bytes())?;
    /// let v = &o.vars()[o.find_var(b"magic")?];
    /// let rodata = o.maps()[v.map].initial_value.as_deref().unwrap();
    /// assert_eq!(&rodata[v.offset..v.offset + v.size], &42u64.to_ne_bytes());
    /// // Not its size: refused, nothing written.
    /// assert!(o.set_var(b"magic", &[1, 2, 3, 4]).is_err());
    /// # Ok::<(), ksym::Error>(())
    /// ```
    pub fn set_var(&mut self, name: &[u8], value: &[u8]) -> Result<()> {
        let v = self.vars[self.find_var(name)?].clone();
        let m = self.writable_data_map(v.map)?;
        if value.len() != v.size {
            return Err(Error::invalid(format!(
                "variable `{}` of `{}` is {} bytes, not {}",
                v.name.to_string_lossy(),
                m.name.to_string_lossy(),
                v.size,
                value.len()
            )));
        }
        let size = m.value_size as usize;
        if m.initial_value.is_none() && size > limits::ZERO_SECTION_VALUE {
            return Err(Error::unsupported(format!(
                "variable `{}`: `{}` is {size} bytes, more than the {} MiB an initial value is made \
                 for: write it with BPF_MAP_UPDATE_ELEM once the map is created",
                v.name.to_string_lossy(),
                m.name.to_string_lossy(),
                limits::ZERO_SECTION_VALUE >> 20
            )));
        }
        let init = self.maps[v.map]
            .initial_value
            .get_or_insert_with(|| vec![0; size]);
        init[v.offset..v.offset + v.size].copy_from_slice(value);
        Ok(())
    }

    /// Map `map`, if a loader may still set its initial value: a data
    /// section's map whose fd has not been given yet.
    fn writable_data_map(&self, map: usize) -> Result<&Map> {
        let m = self.map(map)?;
        let name = m.name.to_string_lossy();
        if Some(map) == self.kconfig_map {
            return Err(Error::invalid(format!(
                "map `{name}` holds the `.kconfig` externs' values, which "
            ))
            .then_call(Call::ResolveBtf, " fills in"));
        }
        if !self.data_maps.contains(&map) {
            return Err(Error::invalid(format!(
                "map `{name}` is not a data section's: its contents are the loader's \
                 (BPF_MAP_UPDATE_ELEM once it is created)"
            )));
        }
        if m.fd.is_some() {
            return Err(Error::invalid(format!(
                "map `{name}` was created already (its fd was given with "
            ))
            .then_call(
                Call::SetMapFd,
                "): set its initial value before creating it",
            ));
        }
        Ok(m)
    }
}

/// The index of the item named `name`, or KSYM_ERR_NOT_FOUND listing them.
fn find_named<T>(
    items: &[T],
    name: &[u8],
    what: &str,
    name_of: fn(&T) -> &CString,
) -> Result<usize> {
    items
        .iter()
        .position(|x| name_of(x).to_bytes() == name)
        .ok_or_else(|| {
            let names: Vec<String> = items
                .iter()
                .map(|x| name_of(x).to_string_lossy().into_owned())
                .collect();
            Error::not_found(format!(
                "no {what} `{}` in the object ({what}s: {})",
                String::from_utf8_lossy(name),
                names.join(", ")
            ))
        })
}
