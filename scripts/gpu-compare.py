#!/usr/bin/env python3
"""Run cudasem's corpus kernels and ZLUDA's conformance kernels on a real NVIDIA GPU and compare.

Not used by the tests or CI (they have no GPU). Two inputs:

* the corpus as jobs written by cudasem (`cargo run -p corpus --example gpu_jobs -- jobs.json`):
  each job has the PTX, the launch and the distinct final buffers cudasem reached under several
  schedules; the GPU's buffers must equal one of them, byte for byte;
* ZLUDA's hardware-checked kernels (`<conformance>/zluda`: manifest.json and ptx/), launched as
  cudasem's ZLUDA conformance test launches them; the GPU's output must equal the manifest's
  (NaN matching any NaN), which cudasem's conformance test asserts for cudasem's output.

Needs only Python 3 and the CUDA driver (libcuda.so.1, through ctypes). Each kernel runs in its
own process with a time limit, so a kernel that hangs or corrupts its context cannot take the
others with it.

    python3 scripts/gpu-compare.py --jobs jobs.json --zluda DIR --out report.md
"""

import argparse
import concurrent.futures
import ctypes
import json
import math
import os
import re
import struct
import subprocess
import sys

# -- the CUDA driver API, through ctypes ---------------------------------------------------------

CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6


class Cuda:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.check(self.lib.cuInit(0), "cuInit")
        device = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
        name = ctypes.create_string_buffer(256)
        self.lib.cuDeviceGetName(name, 256, device)
        self.device_name = name.value.decode()
        self.ctx = ctypes.c_void_p()
        self.check(self.lib.cuCtxCreate_v2(ctypes.byref(self.ctx), 0, device), "cuCtxCreate")

    def check(self, status, what):
        if status != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(status, ctypes.byref(text))
            raise RuntimeError(f"{what}: CUDA error {status} ({(text.value or b'?').decode()})")

    def load(self, ptx_text):
        module = ctypes.c_void_p()
        log = ctypes.create_string_buffer(8192)
        options = (ctypes.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
        data = ctypes.create_string_buffer(ptx_text.encode())
        status = self.lib.cuModuleLoadDataEx(ctypes.byref(module), data, 2, options, values)
        if status != 0:
            raise RuntimeError("the driver cannot load the PTX: " + log.value.decode(errors="replace").strip())
        return module

    def function(self, module, name):
        f = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(f), module, name.encode()), f"kernel {name}")
        return f

    def alloc(self, data):
        ptr = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(max(len(data), 1))), "cuMemAlloc")
        if data:
            self.check(self.lib.cuMemcpyHtoD_v2(ptr, data, ctypes.c_size_t(len(data))), "cuMemcpyHtoD")
        return ptr.value

    def read(self, ptr, size):
        out = ctypes.create_string_buffer(max(size, 1))
        if size:
            self.check(self.lib.cuMemcpyDtoH_v2(out, ctypes.c_uint64(ptr), ctypes.c_size_t(size)), "cuMemcpyDtoH")
        return out.raw[:size]

    def set_global(self, module, name, data):
        ptr, size = ctypes.c_uint64(), ctypes.c_size_t()
        self.check(self.lib.cuModuleGetGlobal_v2(ctypes.byref(ptr), ctypes.byref(size), module, name.encode()),
                   f"global {name}")
        self.check(self.lib.cuMemcpyHtoD_v2(ptr, data, ctypes.c_size_t(min(len(data), size.value))), "cuMemcpyHtoD")

    def launch(self, function, grid, block, shared, params):
        """`params`: one bytes object per kernel parameter."""
        holders = [ctypes.create_string_buffer(p, max(len(p), 1)) for p in params]
        array = (ctypes.c_void_p * max(len(holders), 1))(*[ctypes.cast(h, ctypes.c_void_p) for h in holders])
        if shared > 48 * 1024:
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.lib.cuFuncSetAttribute(function, 8, shared), "cuFuncSetAttribute")
        self.check(self.lib.cuLaunchKernel(function, *grid, *block, shared, None, array, None), "cuLaunchKernel")
        self.check(self.lib.cuCtxSynchronize(), "the kernel")


# -- one corpus job ------------------------------------------------------------------------------

def run_job(job, root):
    cuda = Cuda()
    with open(os.path.join(root, job["ptx"])) as f:
        module = cuda.load(f.read())
    function = cuda.function(module, job["kernel"])
    buffers = [bytes.fromhex(b["bytes"]) for b in job["buffers"]]
    pointers = [cuda.alloc(b) for b in buffers]
    for g in job.get("globals", []):
        cuda.set_global(module, g["name"], bytes.fromhex(g["bytes"]))
    params = []
    for arg in job["args"]:
        if "buffer" in arg:
            params.append(struct.pack("<Q", pointers[arg["buffer"]]))
        elif arg.get("null"):
            params.append(struct.pack("<Q", 0))
        else:
            data = bytearray.fromhex(arg["bytes"])
            for buffer, offset in arg.get("pointers", []):
                data[offset:offset + 8] = struct.pack("<Q", pointers[buffer])
            params.append(bytes(data))
    cuda.launch(function, job["grid"], job["block"], job["shared"], params)
    return {"device": cuda.device_name, "buffers": [cuda.read(p, len(b)).hex() for p, b in zip(pointers, buffers)]}


def describe_difference(job, gpu, cudasem):
    """Which buffers differ from cudasem's first outcome, and where first."""
    parts = []
    for spec, got, want in zip(job["buffers"], gpu, cudasem):
        if got != want:
            g, w = bytes.fromhex(got), bytes.fromhex(want)
            first = next(i for i in range(len(g)) if g[i] != w[i])
            count = sum(1 for i in range(len(g)) if g[i] != w[i])
            word = first // 4 * 4
            parts.append(f"`{spec['name']}`: {count} bytes differ, first at byte {first} "
                         f"(GPU word {g[word:word + 4].hex()}, cudasem {w[word:word + 4].hex()})")
    return "; ".join(parts)


# -- one ZLUDA test ------------------------------------------------------------------------------

INT = {"u8": ("B", 8), "u16": ("H", 16), "u32": ("I", 32), "u64": ("Q", 64),
       "i8": ("B", 8), "i16": ("H", 16), "i32": ("I", 32), "i64": ("Q", 64)}
FLOAT = {"f16": "e", "f32": "f", "f64": "d"}
SIZE = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "f16": 2, "u32": 4, "i32": 4, "f32": 4, "u64": 8, "i64": 8, "f64": 8}


def float_of(v):
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return float(v)


def pack(ty, v):
    if ty in FLOAT:
        return struct.pack("<" + FLOAT[ty], float_of(v))
    code, bits = INT[ty]
    return struct.pack("<" + code, int(v) & ((1 << bits) - 1))


def element_matches(ty, got, want):
    if want == "nan" and ty in FLOAT:
        return math.isnan(struct.unpack("<" + FLOAT[ty], got)[0])
    return got == pack(ty, want)


def entry_params(ptx, name):
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    return len(re.findall(r"\.param", m.group(1))) if m else 2


def run_zluda(test, directory):
    cuda = Cuda()
    name = test["name"]
    with open(os.path.join(directory, "ptx", name + ".ptx")) as f:
        ptx = f.read()
    module = cuda.load(ptx)
    function = cuda.function(module, name)
    out_ty, want = test["output"]["type"], test["output"]["values"]
    output = cuda.alloc(bytes(len(want) * SIZE[out_ty]))
    params = []
    if test.get("input"):
        ty, values = test["input"]["type"], test["input"]["values"]
        if ty in INT and any(isinstance(v, float) for v in values):
            ty = "f32"  # as cudasem's conformance test: floats listed under an integer type
        params.append(struct.pack("<Q", cuda.alloc(b"".join(pack(ty, v) for v in values))))
    elif entry_params(ptx, name) != 1:
        params.append(struct.pack("<Q", 0))
    params.append(struct.pack("<Q", output))
    shared = 1024 if re.search(r"\.extern\s+\.shared", ptx) else 0
    cuda.launch(function, [1, 1, 1], [test.get("block_dim_x", 1), 1, 1], shared, params)
    got = cuda.read(output, len(want) * SIZE[out_ty])
    size = SIZE[out_ty]
    bad = [i for i, w in enumerate(want) if not element_matches(out_ty, got[i * size:(i + 1) * size], w)]
    return {"device": cuda.device_name, "bad": bad, "got": got.hex()}


# -- the driver loop -----------------------------------------------------------------------------

def in_child(kind, index, path, root, timeout):
    """Runs one job in a child process; its JSON result or an error."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, str(index), path, root]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no end within {timeout} s (hang?)"}
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (p.stderr.strip().splitlines() or ["child failed"])[-1]}


def child(kind, index, path, root):
    try:
        if kind == "job":
            with open(path) as f:
                result = run_job(json.load(f)["jobs"][index], root)
        else:
            with open(os.path.join(path, "manifest.json")) as f:
                result = run_zluda(json.load(f)["tests"][index], path)
    except Exception as e:  # reported as the job's result
        result = {"error": str(e).replace("\n", " ")[:400]}
    print(json.dumps(result))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", action="append", default=[], help="jobs written by the gpu_jobs example (repeatable)")
    ap.add_argument("--zluda", help="ZLUDA conformance folder (manifest.json, ptx/)")
    ap.add_argument("--root", default=".", help="repository root the jobs' PTX paths are relative to")
    ap.add_argument("--timeout", type=int, default=30, help="seconds per kernel")
    ap.add_argument("--out", default="gpu-report.md")
    ap.add_argument("--parallel", type=int, default=8, help="kernels run at once (one process each)")
    args = ap.parse_args()
    pool = concurrent.futures.ThreadPoolExecutor(args.parallel)
    lines, device, totals = [], None, {}

    def count(section, verdict):
        totals.setdefault(section, {}).setdefault(verdict, 0)
        totals[section][verdict] += 1

    for jobs_path in args.jobs:
        section = os.path.splitext(os.path.basename(jobs_path))[0]
        with open(jobs_path) as f:
            jobs = json.load(f)["jobs"]
        lines += [f"## {section}", "", "| kernel | verdict | detail |", "|---|---|---|"]
        runnable = [i for i, job in enumerate(jobs) if "skip" not in job]
        results = dict(zip(runnable, pool.map(
            lambda i: in_child("job", i, os.path.abspath(jobs_path), os.path.abspath(args.root), args.timeout),
            runnable)))
        for i, job in enumerate(jobs):
            if "skip" in job:
                count(section, "not run")
                lines.append(f"| {job['name']} | not run | {job['skip']} |")
                continue
            r = results[i]
            device = r.get("device", device)
            if "error" in r:
                verdict, detail = "GPU error", r["error"]
            elif r["buffers"] in job["cudasem"]:
                n = len(job["cudasem"])
                verdict, detail = "same", "" if n == 1 else f"one of cudasem's {n} outcomes"
            else:
                verdict, detail = "DIFFERENT", describe_difference(job, r["buffers"], job["cudasem"][0])
            count(section, verdict)
            lines.append(f"| {job['name']} | {verdict} | {detail} |")
            print(lines[-1], flush=True)
        lines.append("")
    if args.zluda:
        with open(os.path.join(args.zluda, "manifest.json")) as f:
            tests = json.load(f)["tests"]
        lines += ["## ZLUDA conformance", "", "| test | verdict | detail |", "|---|---|---|"]
        results = list(pool.map(lambda i: in_child("zluda", i, os.path.abspath(args.zluda), ".", args.timeout),
                                range(len(tests))))
        for i, test in enumerate(tests):
            r = results[i]
            device = r.get("device", device)
            if "error" in r:
                verdict, detail = "GPU error", r["error"]
            elif not r["bad"]:
                verdict, detail = "same", ""
            else:
                verdict = "DIFFERENT"
                i, size = r['bad'][0], SIZE[test['output']['type']]
                detail = (f"{len(r['bad'])} of {len(test['output']['values'])} elements differ; element {i}: "
                          f"GPU {bytes.fromhex(r['got'])[i * size:(i + 1) * size][::-1].hex()}, "
                          f"manifest (and cudasem) {test['output']['values'][i]}")
            count("zluda", verdict)
            lines.append(f"| {test['name']} | {verdict} | {detail} |")
            print(lines[-1], flush=True)
    summary = [f"# cudasem against {device or 'the GPU'}", ""]
    for section, verdicts in totals.items():
        summary.append(f"- {section}: " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())))
    summary.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(summary + lines) + "\n")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
