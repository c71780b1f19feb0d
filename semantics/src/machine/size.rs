//! How big a [`Machine`] is: an explorer clones one for every successor it builds and keeps one
//! for every state whose successors it has not built yet, so every byte of the struct is paid
//! per clone and per kept state (issue 14, Build 3: cheaper states).

#[cfg(test)]
mod tests {
    use super::super::*;
    use std::mem::size_of;

    /// 1,320 bytes when the memory environment held the cached engine inline, the configuration
    /// and the launch's caches by value, and the termination unboxed.
    #[test]
    fn a_machine_stays_small() {
        let machine = size_of::<Machine>();
        eprintln!(
            "Machine {machine} B (memory {} B, enabled set {} B, block table {} B); \
             what a stepped kept machine owns besides: block {} B, warp {} B (call level {} B)",
            size_of::<memory_model::Memory>(),
            size_of::<enabled::EnabledSet>(),
            size_of::<memory_model::BlockTable<block::Block>>(),
            size_of::<block::Block>(),
            size_of::<warp::Warp>(),
            size_of::<thread::Level>(),
        );
        assert!(machine <= 480, "a Machine is {machine} bytes");
    }
}
