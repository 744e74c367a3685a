//! The data sections' variables: found by name, and set before the loader
//! creates their maps, as a libbpf skeleton's `obj->rodata->x = v` or
//! `bpf_map__set_initial_value` (and aya's `set_global`) do. A loader
//! without libbpf sets a tool's options (`const volatile` filters in
//! `.rodata`, which the verifier reads as constants) this way; the map it
//! then creates takes [`Map::initial_value`].

use crate::base::read::limits;
use crate::bpf::object::{Map, Object, Var};
use crate::error::{Call, Error, ErrorKind, Result};

impl Object {
    /// The data sections' variables, by map, then offset.
    pub fn vars(&self) -> &[Var] {
        &self.vars
    }

    /// Variable `var`, or `NotFound` saying how many there are.
    pub fn var(&self, var: usize) -> Result<&Var> {
        crate::bpf::object::nth(&self.vars, var, "variable", "the object")
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
