//! Device files (`--device FILE.ron`): any subset of the device's fields.

use crate::launch::ron_options;
use crate::locate::line_text;
use crate::{LaunchError, Location};
use semantics::machine::DeviceConfig;
use serde::Deserialize;
use std::path::Path;

/// A `--device FILE.ron`: any subset of [`DeviceConfig`]'s fields; the rest keep their defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    pub num_sms: Option<u32>,
    pub max_blocks_per_sm: Option<u32>,
    pub max_threads_per_sm: Option<u32>,
    pub max_warps_per_sm: Option<u32>,
    pub shared_mem_per_sm: Option<u32>,
    pub max_threads_per_block: Option<u32>,
    pub warp_size: Option<u32>,
}

impl DeviceFile {
    pub fn read(path: &Path) -> Result<DeviceFile, LaunchError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            LaunchError::new(format!("cannot read device file {}: {e}", path.display()))
                .help("check the path given to --device")
        })?;
        ron_options().from_str(&text).map_err(|e| {
            let pos = e.span.start;
            LaunchError::new(format!("bad device file: {}", e.code))
                .at(Some(Location { path: path.display().to_string(), line: pos.line, col: pos.col, line_text: line_text(&text, pos.line) }))
                .help("a device file is `(num_sms: 16, warp_size: 32, ...)` with any of the fields of `cudasem run --help`")
        })
    }

    /// `base` with this file's fields applied.
    pub fn apply(&self, base: &mut DeviceConfig) {
        let set = |slot: &mut u32, v: Option<u32>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut base.num_sms, self.num_sms);
        set(&mut base.max_blocks_per_sm, self.max_blocks_per_sm);
        set(&mut base.max_threads_per_sm, self.max_threads_per_sm);
        set(&mut base.max_warps_per_sm, self.max_warps_per_sm);
        set(&mut base.shared_mem_per_sm, self.shared_mem_per_sm);
        set(&mut base.max_threads_per_block, self.max_threads_per_block);
        set(&mut base.warp_size, self.warp_size);
    }
}
