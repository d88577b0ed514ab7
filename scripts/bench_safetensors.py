#!/usr/bin/env python3
"""The reference `safetensors` package on the 200k-tensor checkpoint of the Rust benchmark.

  bench_safetensors.py [PATH]          write PATH (default /tmp/vramfit-bench-200k.safetensors)
                                       if missing, time it, print `RESULT key=value` lines
  bench_safetensors.py --child PATH    one open + walk in a fresh process; prints the growth
                                       of its peak resident set (VmHWM, KiB)

The header is byte-for-byte the one `crates/vramfit-core/examples/bench.rs` builds (the
Rust bench checks that with `--compare-file`): `__metadata__` {format: pt}, then
800 layers x 250 experts `model.layers.{i}.mlp.experts.{j}.up_proj.weight`, BF16 [64, 64],
contiguous offsets, padded with spaces to a multiple of 8. The data section (1.6 GB of
zeros) is a sparse hole: the file takes only the header's blocks on disk.

Timed work: `safe_open(path, "np")`, then for every key `get_slice(k).get_shape()` and
`get_slice(k).get_dtype()`; median of 5 (after one warm-up that pages the header in).
"""
import json
import os
import resource
import struct
import subprocess
import sys
import time

LAYERS = 800
EXPERTS = 250
TENSOR_BYTES = 64 * 64 * 2
DEFAULT_PATH = "/tmp/vramfit-bench-200k.safetensors"


def header_bytes():
    parts = ['{"__metadata__":{"format":"pt"}']
    offset = 0
    for i in range(LAYERS):
        for j in range(EXPERTS):
            end = offset + TENSOR_BYTES
            parts.append(
                f',"model.layers.{i}.mlp.experts.{j}.up_proj.weight":'
                f'{{"dtype":"BF16","shape":[64,64],"data_offsets":[{offset},{end}]}}'
            )
            offset = end
    parts.append("}")
    h = "".join(parts).encode("ascii")
    h += b" " * (-len(h) % 8)
    return h, offset


def write_file(path):
    header, data_len = header_bytes()
    json.loads(header)  # well-formed
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        f.truncate(8 + len(header) + data_len)  # zeros, as a sparse hole
    os.replace(tmp, path)


def walk(path):
    from safetensors import safe_open

    n = 0
    with safe_open(path, "np") as f:
        for k in f.keys():
            s = f.get_slice(k)
            s.get_shape()
            s.get_dtype()
            n += 1
    return n


def peak_rss_kib():
    """VmHWM, the peak resident set of this process image, KiB.

    Not `resource.getrusage(...).ru_maxrss`: Linux carries that over `execve` from the
    parent (the forking benchmark process, which has walked the header six times), so a
    child would start at the parent's peak. VmHWM belongs to the new address space.
    """
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # not Linux


def child(path):
    import numpy  # noqa: F401  (loaded before the baseline, as in the timed runs)
    import safetensors  # noqa: F401

    before = peak_rss_kib()
    n = walk(path)
    after = peak_rss_kib()
    print(f"peak_delta_kib={after - before} tensors={n} before_kib={before} after_kib={after}")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_PATH
    expected, data_len = header_bytes()
    current = None
    if os.path.exists(path):
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            current = f.read(n)
    if current != expected or os.path.getsize(path) != 8 + len(expected) + data_len:
        write_file(path)
    import numpy
    import safetensors

    n = walk(path)  # warm-up
    assert n == LAYERS * EXPERTS, n
    times = []
    for _ in range(5):
        t = time.perf_counter()
        walk(path)
        times.append(time.perf_counter() - t)
    times.sort()
    out = subprocess.run(
        [sys.executable, __file__, "--child", path], check=True, capture_output=True, text=True
    ).stdout
    delta = int(out.split("peak_delta_kib=")[1].split()[0])
    print(f"RESULT py_file={path} py_header_bytes={len(expected)} py_tensors={n}")
    print(
        f"RESULT py_median_ms={times[2] * 1e3:.3f} py_min_ms={times[0] * 1e3:.3f} "
        f"py_peak_delta_kib={delta} py_peak_x_header={delta * 1024 / len(expected):.3f}"
    )
    print(f"RESULT py_safetensors={safetensors.__version__} py_numpy={numpy.__version__} "
          f"python={sys.version.split()[0]}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
