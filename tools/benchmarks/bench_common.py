"""What tools/bench and tools/bench_sweep share: finding the three sides, running one
measurement process, and describing the machine.

A side is one framework's measurement program; all take the same options
(--workload N --threads T --reps R --warmup W, and --L --B --E --heads --causal for
workload 10) and print one JSON line with "times", "extra", "info", "rss_before_kb",
"peak_rss_kb" and "peak_delta_kb":
  attograd   <build>/tools/benchmarks/ag_bench            (required)
  libtorch   <build>/tools/benchmarks/libtorch_bench      (built when CMake finds LibTorch)
  pytorch    tools/benchmarks/torch_bench.py under a Python that imports torch
"""
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCH_BENCH = os.path.join(ROOT, "tools", "benchmarks", "torch_bench.py")
SIDES = ("attograd", "libtorch", "pytorch")
LABELS = {"attograd": "attograd", "libtorch": "LibTorch", "pytorch": "PyTorch"}
ENV_SHOWN = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_CORETYPE")  # set: part of the command shown
# OpenBLAS's pre-AVX2 kernel sets, as openblas_get_corename() names them (core/runtime.cpp
# has the same list for the library's warning).
OLD_BLAS_CORES = {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2", "Penryn",
                  "Dunnington", "Nehalem", "Sandybridge", "Athlon", "Opteron", "Opteron(SSE3)", "Barcelona",
                  "Nano", "Bobcat", "Bulldozer", "Piledriver", "Steamroller"}


def blas_coretype():
    """(value, why) for OPENBLAS_CORETYPE when it is unset and this machine's OpenBLAS picks
    pre-AVX2 kernels on a CPU with AVX2 or AVX-512 (Debian's 0.3.21 on an Emerald Rapids
    falls back to "Prescott"), else (None, None). Every side then runs with it, so no side
    measures a crippled sgemm; the records show it as part of the command."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return None, None
    try:
        import ctypes
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        core = lib.openblas_get_corename().decode()
        with open("/proc/cpuinfo") as f:
            flags = set(next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), []))
    except (OSError, AttributeError, StopIteration):
        return None, None
    if core not in OLD_BLAS_CORES:
        return None, None
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        value = "Cooperlake" if "avx512_bf16" in flags else "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        value = "Haswell"
    else:
        return None, None
    return value, f"OpenBLAS picked its {core} kernels on this CPU"


def apply_blas_coretype():
    """Sets OPENBLAS_CORETYPE in this process's environment (inherited by every side) when
    blas_coretype() advises it; says so on stderr. Call before machine_info()."""
    value, why = blas_coretype()
    if value:
        os.environ["OPENBLAS_CORETYPE"] = value
        print(f"{why}: running every side with OPENBLAS_CORETYPE={value}", file=sys.stderr)


def add_side_args(p):
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                   help="CMake build tree holding tools/benchmarks/ag_bench (default: build)")
    p.add_argument("--python", help="Python with PyTorch for torch_bench.py "
                   "(default: this one if it has torch, else /usr/bin/python3)")
    p.add_argument("--no-torch", action="store_true", help="leave out the PyTorch side")
    p.add_argument("--no-libtorch", action="store_true", help="leave out the LibTorch side")


def find_torch_python(args):
    """The Python that imports torch, and its version; (None, why) when there is none."""
    if args.no_torch:
        return None, "--no-torch given"
    candidates = [args.python] if args.python else [sys.executable, "/usr/bin/python3"]
    for py in dict.fromkeys(c for c in candidates if c):
        try:
            r = subprocess.run([py, "-c", "import torch; print(torch.__version__)"],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return py, r.stdout.strip()
    return None, ("no PyTorch for " + ", ".join(dict.fromkeys(c for c in candidates if c)) +
                  " (Debian: apt-get install python3-torch; or pass --python)")


def find_sides(args, prog):
    """({side: base command}, {side: why missing}, {side: version}); exits without ag_bench."""
    bench_dir = os.path.join(args.build_dir, "tools", "benchmarks")
    ag = os.path.join(bench_dir, "ag_bench")
    if not os.access(ag, os.X_OK):
        build = os.path.abspath(args.build_dir)
        rel = os.path.relpath(build, ROOT) if build.startswith(ROOT + os.sep) else build
        sys.exit(f"{prog}: {ag} not found. Build it first, in {ROOT}:\n"
                 f"  cmake -S . -B {rel} -DCMAKE_BUILD_TYPE=Release && "
                 f"cmake --build {rel} --target ag_bench libtorch_bench\n"
                 f"(or point --build-dir at a build tree that has it)")
    cmds, missing, versions = {"attograd": [ag]}, {}, {}
    lt = os.path.join(bench_dir, "libtorch_bench")
    if args.no_libtorch:
        missing["libtorch"] = "--no-libtorch given"
    elif os.access(lt, os.X_OK):
        cmds["libtorch"] = [lt]
    else:
        missing["libtorch"] = (f"{lt} not built (tools/setup bench installs libtorch-dev; then "
                               "cmake --build <build> --target libtorch_bench)")
    py, version = find_torch_python(args)
    if py:
        cmds["pytorch"] = [py, TORCH_BENCH]
        versions["pytorch"] = version
    else:
        missing["pytorch"] = version
    return cmds, missing, versions


def run_one(cmd, threads, timeout=3600, env_extra=None):
    """Runs one measurement process (env_extra added to its environment); returns its JSON
    record (or one with an "error")."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), **(env_extra or {}))
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s", "cmd": cmd, "wall_s": round(time.time() - t0, 3)}
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0 or not lines:
        return {"error": f"exit status {r.returncode}: {r.stderr.strip()[-2000:]}", "cmd": cmd,
                "wall_s": round(time.time() - t0, 3)}
    rec = json.loads(lines[-1])
    rec["wall_s"] = round(time.time() - t0, 3)
    rec["loadavg_after"] = os.getloadavg()[0]
    return rec


def cpu_family_model():
    """"6/207" (family/model): names the CPU where a VM's model name does not
    ("Intel(R) Xeon(R) Processor" is an Emerald Rapids at 6/207)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                fields[k.strip()] = v.strip()
    except OSError:
        pass
    return f"{fields.get('cpu family', '?')}/{fields.get('model', '?')}"


def cpu_isa():
    """The vector extensions that decide which kernels run (AVX2, AVX-512, VNNI, BF16, AMX)."""
    wanted = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_tile", "amx_bf16")
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
    except OSError:
        flags = []
    return [w for w in wanted if w in flags]


def machine_info(versions):
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        # Results files are not code: a full run rewrites results/latest.md, which must not
        # mark the next run's code as changed.
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)tools/benchmarks/results", ":(exclude)examples/*/results"],
                               capture_output=True, text=True).stdout.strip() != ""
    except OSError:
        commit, dirty = "", False
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"), "cpu": cpu,
            "cpu_family_model": cpu_family_model(), "cpu_isa": cpu_isa(), "cores": os.cpu_count(), "loadavg_start": os.getloadavg(), "versions": versions,
            "attograd_commit": commit + ("+dirty" if dirty else ""), "python": sys.version.split()[0],
            "command": " ".join([f"{k}={shlex.quote(os.environ[k])}" for k in ENV_SHOWN if k in os.environ] +
                                [shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT)
                                                          if sys.argv[0].startswith(ROOT) else sys.argv[0]]
                                 + sys.argv[1:]])}


def describe(meta, missing):
    """One line: machine, versions, date, command, and which side is missing why."""
    v = meta["versions"]
    s = (f"{meta['cpu']}, {meta['cores']} cores; {meta['date']}; attograd {meta['attograd_commit']}, "
         f"LibTorch {v.get('libtorch', 'missing')}, PyTorch {v.get('pytorch', 'missing')}; "
         f"command: `{meta['command']}`")
    return s + "".join(f"; **{LABELS[k]} missing**: {why}" for k, why in missing.items())


if __name__ == "__main__":
    # tools/demo: prints the OPENBLAS_CORETYPE to start with, or nothing
    print(blas_coretype()[0] or "")
