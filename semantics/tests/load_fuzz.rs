//! `load` never panics on anything the parser produces: random PTX-like text (valid fragments,
//! shuffled and mutated) goes through `parse` and then `load`, which must return (Ok or Err).

use proptest::prelude::*;

const FRAGMENTS: &[&str] = &[
    ".version 7.0\n.target sm_70\n.address_size 64\n",
    ".global .u32 g[4] = {1, -2, 3 / 0, generic(g)};\n",
    ".const .f32 c = 0f3F800000;\n",
    ".extern .shared .align 16 .b8 dyn[];\n",
    ".func (.param .b32 r) f(.param .b32 a, .reg .b32 b) {\n",
    ".visible .entry k(.param .u64 p, .param .u32 n) {\n",
    "{\n",
    "}\n",
    ".reg .b32 %r<8>;\n",
    ".reg .pred %p<4>;\n",
    ".reg .b64 %rd<4>;\n",
    ".reg .v4 .f32 v;\n",
    ".local .b8 buf[16];\n",
    ".param .b32 arg;\n",
    ".shared .u32 s;\n",
    "L1:\n",
    "L2:\n",
    "proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n",
    "T: .branchtargets L1, L2;\n",
    "add.s32 %r1, %r2, 3;\n",
    "mov.u32 %r1, %tid.x;\n",
    "mov.b64 %rd1, {%r1, %r2};\n",
    "mov.v4.f32 v, {v.y, v.x, v.w, v.z};\n",
    "setp.lt.and.u32 %p1|%p2, %r1, %r2, !%p3;\n",
    "@%p1 bra L1;\n",
    "@!%p2 bra.uni L2;\n",
    "brx.idx %r1, T;\n",
    "ld.global.v4.f32 {v.x, _, v.z, v.w}, [%rd1+16];\n",
    "st.shared.u32 [s], %r1;\n",
    "ld.param.u64 %rd1, [p];\n",
    "atom.global.cas.b32 %r1, [%rd1], %r2, %r3;\n",
    "call (arg), f, (arg, %r1);\n",
    "call (arg), %rd1, (arg, 1), proto;\n",
    "bar.red.popc.u32 %r1, 0, %p1;\n",
    "shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;\n",
    "vote.sync.ballot.b32 %r1, %p1, -1;\n",
    "cvt.rn.f32.s32 %r1, %r2;\n",
    "ssy L2;\nsync;\npreBrk L1;\nbrk;\npreRet L2;\n",
    "ret;\n",
    "exit;\n",
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1}, {%r2}, {%r3}, {%r4};\n",
];

fn mutate(text: &str, cuts: &[(usize, usize, u8)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for &(at, len, b) in cuts {
        if bytes.is_empty() {
            break;
        }
        let at = at % bytes.len();
        match b % 3 {
            0 => {
                let end = (at + len % 8).min(bytes.len());
                bytes.drain(at..end);
            }
            1 => bytes.insert(at, b"{};,.[]|!%_0x-"[(b as usize) % 14]),
            _ => bytes[at] = b"ab{}();.%0 "[(b as usize) % 11],
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn load_never_panics(picks in prop::collection::vec(0..FRAGMENTS.len(), 1..40), cuts in prop::collection::vec((0usize..4096, 0usize..8, any::<u8>()), 0..6)) {
        let text: String = picks.iter().map(|&i| FRAGMENTS[i]).collect();
        for source in [text.clone(), mutate(&text, &cuts)] {
            let parsed = ptx_parser::parse(&source);
            let _ = semantics::load(&parsed.module, &source);
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let mut src = String::from(".version 7.0\n.target sm_70\n.address_size 64\n.entry k() {\n");
    src.push_str(&"{\n".repeat(400));
    src.push_str(&"}\n".repeat(400));
    src.push_str("}\n");
    let parsed = ptx_parser::parse(&src);
    let _ = semantics::load(&parsed.module, &src);
}
