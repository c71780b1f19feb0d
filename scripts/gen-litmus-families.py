#!/usr/bin/env python3
"""Writes the scaling families of litmus tests (issue 14) to tests/litmus/families/:
MP-n (a release/acquire message-passing chain), SB-n (a store-buffering ring), LB-n (a
load-buffering ring), one thread per CTA, n = 2..8; IRIW-n (two writers, n - 2 readers with a
fence.sc between their loads), n = 4..8. Run from the repository root."""
import os

OUT = "tests/litmus/families"


def table(threads):
    """herd's columns: one list of instructions per thread, padded."""
    n = len(threads)
    rows = max(len(t) for t in threads)
    heads = [f"P{i}@cta {i},gpu 0" for i in range(n)]
    cols = [[h] + t + [""] * (rows - len(t)) for h, t in zip(heads, threads)]
    widths = [max(len(c) for c in col) for col in cols]
    lines = []
    for r in range(rows + 1):
        cells = [col[r].ljust(w) for col, w in zip(cols, widths)]
        lines.append(" " + " | ".join(cells) + " ;")
    return "\n".join(lines)


def write(name, comment, init, threads, cond):
    text = f'PTX {name}\n"{comment}"\n{{\n{init}\n}}\n{table(threads)}\n\n{cond}\n'
    with open(os.path.join(OUT, f"{name}.litmus"), "w") as f:
        f.write(text)


def mp(n):
    threads = [["st.weak x, 1", "st.release.gpu y1, 1"]]
    for k in range(1, n - 1):
        threads.append([f"ld.acquire.gpu r0, y{k}", f"st.release.gpu y{k + 1}, 1"])
    threads.append([f"ld.acquire.gpu r0, y{n - 1}", "ld.weak r1, x"])
    locs = ["x=0;"] + [f"y{k}=0;" for k in range(1, n)]
    regs = [f"P{k}:r0=0;" for k in range(1, n)] + [f"P{n - 1}:r1=0;"]
    cond = " /\\ ".join([f"P{k}:r0 == 1" for k in range(1, n)] + [f"P{n - 1}:r1 != 1"])
    write(f"MP-{n}", f"Message passing through a chain of {n} threads in {n} CTAs "
          "(release/acquire at gpu scope): forbidden",
          " ".join(locs) + "\n" + " ".join(regs), threads, f"~exists\n({cond})")


def sb(n):
    threads = [[f"st.relaxed.gpu x{i}, 1", f"ld.relaxed.gpu r0, x{(i + 1) % n}"]
               for i in range(n)]
    locs = " ".join(f"x{i}=0;" for i in range(n))
    regs = " ".join(f"P{i}:r0=0;" for i in range(n))
    cond = " /\\ ".join(f"P{i}:r0 == 0" for i in range(n))
    write(f"SB-{n}", f"Store buffering, a ring of {n} threads in {n} CTAs (relaxed at gpu "
          "scope): allowed by PTX, not sequentially consistent",
          locs + "\n" + regs, threads, f"exists\n({cond})")


def lb(n):
    threads = [[f"ld.relaxed.gpu r0, x{i}", f"st.relaxed.gpu x{(i + 1) % n}, 1"]
               for i in range(n)]
    locs = " ".join(f"x{i}=0;" for i in range(n))
    regs = " ".join(f"P{i}:r0=0;" for i in range(n))
    cond = " /\\ ".join(f"P{i}:r0 == 1" for i in range(n))
    write(f"LB-{n}", f"Load buffering, a ring of {n} threads in {n} CTAs (relaxed at gpu "
          "scope): allowed by PTX, not sequentially consistent",
          locs + "\n" + regs, threads, f"exists\n({cond})")


def iriw(n):
    """Two writers of x and y; readers P2, P4, ... read x then y, P3, P5, ... y then x, with a
    fence.sc between: no two readers may see the writes in opposite orders."""
    threads = [["st.relaxed.gpu x, 1"], ["st.relaxed.gpu y, 1"]]
    for k in range(2, n):
        first, second = ("x", "y") if k % 2 == 0 else ("y", "x")
        threads.append([f"ld.relaxed.gpu r0, {first}", "fence.sc.gpu",
                        f"ld.relaxed.gpu r1, {second}"])
    regs = " ".join(f"P{k}:r0=0; P{k}:r1=0;" for k in range(2, n))
    cond = "P2:r0 == 1 /\\ P2:r1 == 0 /\\ P3:r0 == 1 /\\ P3:r1 == 0"
    write(f"IRIW-{n}", f"Independent reads of independent writes, 2 writers and {n - 2} readers "
          f"in {n} CTAs (fence.sc.gpu between the reads): forbidden",
          "x=0; y=0;\n" + regs, threads, f"~exists\n({cond})")


os.makedirs(OUT, exist_ok=True)
for n in range(2, 9):
    mp(n)
    sb(n)
    lb(n)
for n in range(4, 9):
    iriw(n)
