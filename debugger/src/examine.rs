//! Reading memory for `x` and `mem`: a launch buffer or a module variable by name (a `.cu`
//! kernel's `__shared__` array by its source name too), and addresses of every state space, a
//! thread's `.local` memory included.

use super::command::MemTarget;
use super::{Focus, Session, memory_space_name, view};
use crate::DebugError;
use memory_model::Who;
use ptx_parser::ScalarType;
use semantics::machine::Machine;
use traces::MemSpace;

impl Session {
    /// A value of `ty` at `address` in `space` (`block` selects the shared memory).
    pub(super) fn read_value(
        &self,
        space: MemSpace,
        address: u64,
        ty: ScalarType,
        block: u32,
    ) -> Option<u64> {
        self.read_value_in(&self.machine, space, address, ty, block)
    }

    /// [`Session::read_value`] in machine `m`.
    pub(super) fn read_value_in(
        &self,
        m: &Machine,
        space: MemSpace,
        address: u64,
        ty: ScalarType,
        block: u32,
    ) -> Option<u64> {
        view::read(m, space, address, semantics::machine::type_size(ty), block)
    }

    /// A launch buffer or module variable by name, with the name to show. A variable of a `.cu`
    /// kernel may be named as in the source (`partial` for `_ZZ6kernelPfE7partial`).
    pub(super) fn named_region(&self, name: &str) -> Result<(String, view::Region), DebugError> {
        if let Some(i) = self.launch.buffers.iter().position(|b| b.name == name) {
            let b = &self.launch.buffers[i];
            let size = semantics::machine::type_size(b.elem).max(1) as u64;
            let region = view::Region {
                space: MemSpace::Global,
                address: self.machine.buffer_address(i).unwrap_or(0),
                ty: b.elem,
                len: b.bytes.len() as u64 / size,
            };
            return Ok((name.to_string(), region));
        }
        let variable = self
            .program
            .variables
            .iter()
            .find(|v| v.name == name)
            .or_else(|| {
                let mut by_source = self
                    .program
                    .variables
                    .iter()
                    .filter(|v| source_variable_name(&v.name) == Some(name));
                // Two kernels' `partial`s are ambiguous: ask for the PTX name then.
                match (by_source.next(), by_source.next()) {
                    (Some(v), None) => Some(v),
                    _ => None,
                }
            });
        if let Some(v) = variable {
            use semantics::program::Space;
            let space = match v.space {
                Space::Global => MemSpace::Global,
                Space::Shared => MemSpace::Shared,
                Space::Const => MemSpace::Const,
                Space::Local => MemSpace::Local,
                _ => {
                    return Err(format!(
                        "`{name}` is not in .global, .shared, .local or .const memory"
                    )
                    .into());
                }
            };
            let size = semantics::machine::type_size(v.ty).max(1) as u64;
            let region = view::Region {
                space,
                address: v.address,
                ty: v.ty,
                len: (v.size / size).max(1),
            };
            return Ok((name.to_string(), region));
        }
        let mut names: Vec<String> = self.launch.buffers.iter().map(|b| b.name.clone()).collect();
        names.extend(
            self.program
                .variables
                .iter()
                .map(|v| match source_variable_name(&v.name) {
                    Some(short) => format!("{short} ({})", v.name),
                    None => v.name.clone(),
                }),
        );
        Err(format!(
            "no buffer or variable `{name}`; there are: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )
        .into())
    }

    pub(super) fn cmd_mem(&self, t: &MemTarget) -> Result<String, DebugError> {
        let raw = |space, address, ty, len| view::Region {
            space,
            address,
            ty,
            len,
        };
        let at_block = |b: u32| Who {
            block: b,
            thread: 0,
        };
        let (region, start, end, who, title) = match t {
            MemTarget::Named { name, start, end } => {
                let (name, r) = self.named_region(name)?;
                let start = start.unwrap_or(0);
                let end = end.unwrap_or(r.len);
                if end > r.len || start >= r.len.max(1) {
                    return Err(format!(
                        "`{name}` has {} elements (0 to {}): {start}..{end} is out of range",
                        r.len,
                        r.len.saturating_sub(1)
                    )
                    .into());
                }
                let title = format!("{name}: {}[{}]", r.ty.directive(), r.len);
                (r, start, end, at_block(self.focus.block), title)
            }
            MemTarget::From {
                name,
                count,
                ty,
                block,
            } => {
                let (name, r) = self.named_region(name)?;
                let b = block.unwrap_or(self.focus.block);
                let (who, whose) = match r.space {
                    MemSpace::Shared => (at_block(b), format!(" of block {b}")),
                    MemSpace::Local => {
                        let Focus { block, warp, lane } = self.focus;
                        let thread = warp * self.warp_size() + lane;
                        let who = Who { block, thread };
                        (who, format!(" of block {block} warp {warp} lane {lane}"))
                    }
                    _ => (at_block(b), String::new()),
                };
                let title = format!(
                    "{}{whose} `{name}` at {:#x}: {} x {count}",
                    memory_space_name(r.space),
                    r.address,
                    ty.directive()
                );
                (raw(r.space, r.address, *ty, *count), 0, *count, who, title)
            }
            MemTarget::Shared {
                address,
                count,
                ty,
                block,
            } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                let b = block.unwrap_or(self.focus.block);
                let title = format!(
                    ".shared of block {b} at {address:#x}: {} x {count}",
                    ty.directive()
                );
                let r = raw(MemSpace::Shared, *address, ty, *count);
                (r, 0, *count, at_block(b), title)
            }
            MemTarget::Global { address, count, ty } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                let title = format!(".global at {address:#x}: {} x {count}", ty.directive());
                let r = raw(MemSpace::Global, *address, ty, *count);
                (r, 0, *count, at_block(0), title)
            }
            MemTarget::Local {
                address,
                count,
                ty,
                at,
            } => {
                let b = at.block.unwrap_or(self.focus.block);
                let w = at.warp.unwrap_or(self.focus.warp);
                let l = at.lane.unwrap_or(self.focus.lane);
                let thread = w * self.warp_size() + l;
                if thread >= self.threads_in_block(b) {
                    return Err(format!(
                        "block {b} has {} threads: warp {w} lane {l} is not one",
                        self.threads_in_block(b)
                    )
                    .into());
                }
                let title = format!(
                    ".local of block {b} warp {w} lane {l} at {address:#x}: {} x {count}",
                    ty.directive()
                );
                let r = raw(MemSpace::Local, *address, *ty, *count);
                (r, 0, *count, Who { block: b, thread }, title)
            }
            MemTarget::Bank {
                space,
                address,
                count,
                ty,
            } => {
                let title = format!(
                    "{} at {address:#x}: {} x {count}",
                    memory_space_name(*space),
                    ty.directive()
                );
                let r = raw(*space, *address, *ty, *count);
                (r, 0, *count, at_block(self.focus.block), title)
            }
        };
        if end - start > 4096 {
            return Err("at most 4096 elements at a time".into());
        }
        let size = semantics::machine::type_size(region.ty) as u64;
        // One reader for the whole read; as a thread reads memory: under cached memory, L2's
        // valid bytes over DRAM's.
        let mut memory = self.machine.reader();
        let mut values = Vec::new();
        for i in start..end {
            let a = region.address + i * size;
            match memory.read(who, region.space, a, size as u32) {
                Ok(v) => values.push(view::value_text(region.ty, v)),
                Err(_) => {
                    return Err(format!(
                        "{} address {a:#x} is not mapped{}",
                        memory_space_name(region.space),
                        match region.space {
                            MemSpace::Shared =>
                                format!(" in block {} (is the block resident? `blocks`)", who.block),
                            MemSpace::Local => format!(
                                " for thread {} of block {} (local memory holds {} bytes per thread)",
                                who.thread,
                                who.block,
                                self.machine.memory().local_limit()
                            ),
                            _ => String::new(),
                        }
                    ).into());
                }
            }
        }
        let mut s = format!("{title}\n");
        s.push_str(&view::rows(&values, start));
        Ok(s)
    }
}

/// The source name of a C++ function-local static (`__shared__` arrays are such):
/// `_ZZ12reduce_blockPKfPfiE7partial` -> `partial` (Itanium C++ ABI 5.1.6, local names).
fn source_variable_name(mangled: &str) -> Option<&str> {
    let rest = mangled.strip_prefix("_ZZ")?;
    let (_, tail) = rest.rsplit_once('E')?;
    let digits = tail.chars().take_while(char::is_ascii_digit).count();
    let len: usize = tail[..digits].parse().ok()?;
    let name = &tail[digits..];
    (name.len() == len).then_some(name)
}
