//! What the state-cost benches of the exploration crates share: a global allocator that counts
//! live heap bytes and their peak (for bytes per stored state), and the corpus machines they
//! explore (the grid barrier and the spin lock of `bench/explore-families.sh`).

use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig};
use std::alloc::{GlobalAlloc, Layout};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A global allocator that forwards to `A` (divan's profiler, say) and keeps a process-wide
/// count of live heap bytes with its peak: divan's own counts are per thread and per sample,
/// and a search's workers allocate on several threads.
pub struct CountingAlloc<A> {
    inner: A,
}

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl<A> CountingAlloc<A> {
    pub const fn new(inner: A) -> Self {
        CountingAlloc { inner }
    }
}

/// The heap bytes live now.
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Starts a new peak at the bytes live now, and returns them.
pub fn restart_peak() -> usize {
    let now = live_bytes();
    PEAK.store(now, Ordering::Relaxed);
    now
}

/// The most bytes live since the last [`restart_peak`].
pub fn peak_bytes() -> usize {
    PEAK.load(Ordering::Relaxed)
}

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `A` unchanged; the counters only observe sizes.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.inner.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.inner.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.inner.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

/// A corpus file's text, from `$CUDASEM_ROOT` (default: the workspace root), so that a built
/// bench can run elsewhere.
pub fn read(rel: &str) -> String {
    let root = std::env::var_os("CUDASEM_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(crate::workspace_root);
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The machine of corpus PTX file `file` under `launch`, default configuration.
pub fn machine(file: &str, launch: &LaunchConfig) -> Machine {
    let text = read(file);
    let parsed = ptx_parser::parse(&text);
    let program = semantics::load(&parsed.module, &text).expect("loads").0;
    Machine::new(Arc::new(program), launch, &MachineConfig::default()).expect("launches")
}

fn s32s(name: &str, values: Vec<i32>) -> BufferSpec {
    BufferSpec {
        name: name.to_string(),
        elem: ptx_parser::ScalarType::S32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// `grid_barrier_launch N` of bench/explore-families.sh: `blocks` blocks of 32 threads.
pub fn grid_barrier(blocks: u32) -> Machine {
    machine(
        "tests/kernels/grid_barrier.ptx",
        &grid_barrier_launch(blocks),
    )
}

/// The launch of [`grid_barrier`].
pub fn grid_barrier_launch(blocks: u32) -> LaunchConfig {
    let n = 32 * blocks as usize;
    LaunchConfig {
        kernel: Some("grid_barrier".to_string()),
        grid: [blocks, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![
            s32s("in", (1..=n as i32).collect()),
            s32s("partial", vec![0; blocks as usize]),
            s32s("count", vec![0]),
            s32s("out", vec![0; blocks as usize]),
        ],
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2),
            ArgValue::Buffer(3),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::S32,
                bits: n as u64,
            },
        ],
        globals: Vec::new(),
        extern_values: Vec::new(),
    }
}

/// `tests/kernels/spinlock.ron` with `blocks` blocks.
pub fn spinlock(blocks: u32) -> Machine {
    let l = LaunchConfig {
        kernel: Some("spinlock".to_string()),
        grid: [blocks, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![s32s("lock", vec![0]), s32s("counter", vec![0])],
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::S32,
                bits: 3,
            },
        ],
        globals: Vec::new(),
        extern_values: Vec::new(),
    };
    machine("tests/kernels/spinlock.ptx", &l)
}
