#!/usr/bin/env python3
"""Write the safetensors fixture corpus used by vramfit-core's parser tests.

Standard library only and deterministic: running it twice writes identical
bytes. Output: crates/vramfit-core/tests/fixtures/safetensors/ (small valid
and malformed .safetensors files, a sharded model with its index, and a
README.md listing each file with the error kind the parser must report).

File layout (huggingface/safetensors): an 8-byte little-endian u64 N, N bytes
of UTF-8 JSON header, then the data section. Tensor data here is all zeros.

Usage: python3 scripts/make_safetensors_fixtures.py
"""

import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "vramfit-core", "tests", "fixtures", "safetensors")

BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
    "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32,
    "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}


def nbytes(dtype, shape):
    n = 1
    for d in shape:
        n *= d
    bits = n * BITS[dtype]
    assert bits % 8 == 0, (dtype, shape)
    return bits // 8


def layout(tensors, metadata=None):
    """Header dict for [(name, dtype, shape)], contiguous in the given order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape in tensors:
        size = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    return header


def data_len_of(header):
    ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
    return max(ends, default=0)


def encode(header, pad=True):
    """JSON bytes of a header (dict or raw bytes), space-padded to 8 like the reference."""
    raw = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        raw += b" " * ((8 - len(raw) % 8) % 8)
    return raw


def st_file(header, data_len=None, pad=True, trailing=b""):
    raw = encode(header, pad)
    if data_len is None:
        data_len = data_len_of(header)
    return struct.pack("<Q", len(raw)) + raw + bytes(data_len) + trailing


FIXTURES = []  # (file name, bytes, expected kind, description)


def add(name, content, kind, description):
    FIXTURES.append((name, content, kind, description))


def build():
    add("valid_bf16.safetensors",
        st_file(layout([
            ("model.embed_tokens.weight", "BF16", [16, 8]),
            ("model.layers.0.self_attn.q_proj.weight", "BF16", [8, 8]),
            ("model.norm.weight", "BF16", [8]),
        ], metadata={"format": "pt"})),
        "Ok", "three BF16 tensors and `__metadata__` {format: pt}")

    # GPTQ 4-bit, group size 32: in=64, out=32.
    add("valid_gptq.safetensors",
        st_file(layout([
            ("model.layers.0.mlp.down_proj.qweight", "I32", [8, 32]),
            ("model.layers.0.mlp.down_proj.qzeros", "I32", [2, 4]),
            ("model.layers.0.mlp.down_proj.scales", "F16", [2, 32]),
            ("model.layers.0.mlp.down_proj.g_idx", "I32", [64]),
            ("model.embed_tokens.weight", "F16", [16, 8]),
        ], metadata={"format": "pt"})),
        "Ok", "GPTQ 4-bit layer (qweight/qzeros/scales/g_idx) plus an F16 embedding")

    add("valid_awq.safetensors",
        st_file(layout([
            ("model.layers.0.mlp.up_proj.qweight", "I32", [64, 4]),
            ("model.layers.0.mlp.up_proj.qzeros", "I32", [2, 4]),
            ("model.layers.0.mlp.up_proj.scales", "F16", [2, 32]),
        ])),
        "Ok", "AWQ 4-bit layer (qweight packed along out, no g_idx)")

    add("valid_mxfp4_moe.safetensors",
        st_file(layout([
            ("model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", [2, 8, 2, 16]),
            ("model.layers.0.mlp.experts.gate_up_proj_scales", "U8", [2, 8, 2]),
            ("model.layers.0.mlp.experts.gate_up_proj_bias", "BF16", [2, 8]),
            ("model.layers.0.mlp.router.weight", "BF16", [2, 8]),
            ("model.layers.0.self_attn.q_proj.weight", "BF16", [8, 8]),
        ])),
        "Ok", "gpt-oss style MXFP4 experts (U8 _blocks/_scales) and BF16 attention")

    add("valid_fp8_block.safetensors",
        st_file(layout([
            ("model.layers.0.mlp.up_proj.weight", "F8_E4M3", [16, 16]),
            ("model.layers.0.mlp.up_proj.weight_scale_inv", "F32", [2, 2]),
            ("model.norm.weight", "BF16", [16]),
        ])),
        "Ok", "DeepSeek style block-scaled FP8 (F8_E4M3 weight, 2-D weight_scale_inv)")

    add("valid_subbyte_mixed.safetensors",
        st_file(layout([
            ("a.f4", "F4", [4, 8]),
            ("b.f6", "F6_E2M3", [4, 4]),
            ("c.e8m0", "F8_E8M0", [4]),
            ("d.bf16", "BF16", [2, 3]),
            ("e.scalar", "F32", []),
            ("f.complex", "C64", [1]),
            ("g.mask", "BOOL", [3]),
            ("h.empty", "I64", [0]),
        ])),
        "Ok", "sub-byte F4/F6 sizing, F8_E8M0, C64, BOOL, a scalar and a zero-size tensor")

    add("valid_empty_header.safetensors", st_file({}), "Ok",
        "header `{}` padded to 8 bytes, no tensors, no data")

    add("header_too_large.safetensors",
        struct.pack("<Q", 200_000_000) + b"{}      ",
        "HeaderTooLarge", "length prefix 200 000 000, over the 100 000 000 limit")

    add("header_beyond_file.safetensors",
        struct.pack("<Q", 1000) + encode({}),
        "HeaderBeyondFile", "length prefix 1000 in a 16-byte file")

    add("truncated_json.safetensors",
        st_file(b'{"w":{"dtype":"F32","sha', data_len=0),
        "InvalidJson", "header JSON cut off mid-key")

    add("non_utf8.safetensors",
        st_file(b'{"w\xff":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', data_len=1),
        "InvalidUtf8", "byte 0xFF inside a tensor name")

    add("not_object.safetensors", st_file(b"[1,2,3]", data_len=0),
        "NotAnObject", "header is a JSON array")

    add("duplicate_key.safetensors",
        st_file(b'{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                b'"w":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}', data_len=1),
        "DuplicateKey", "tensor `w` listed twice, with different dtypes")

    add("valid_repeated_entry.safetensors",
        st_file(b'{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                b'"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', data_len=1),
        "Ok", "tensor `w` listed twice, identically (the reference parser keeps one)")

    add("valid_null_metadata.safetensors",
        st_file(b'{"__metadata__":null,"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
                data_len=1),
        "Ok", "`__metadata__` is null (the reference parser reads it as none)")

    add("bad_metadata.safetensors",
        st_file({"__metadata__": {"format": 1},
                 "w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}),
        "InvalidMetadata", "`__metadata__` value is a number, not a string")

    add("invalid_entry.safetensors",
        st_file({"w": {"dtype": "U8", "shape": [1]}}, data_len=0),
        "InvalidTensorEntry", "tensor entry without `data_offsets`")

    add("unknown_dtype.safetensors",
        st_file({"w": {"dtype": "F12", "shape": [1], "data_offsets": [0, 2]}}),
        "UnknownDtype", "dtype `F12`")

    add("size_mismatch.safetensors",
        st_file({"model.layers.0.mlp.up_proj.weight":
                 {"dtype": "F16", "shape": [4, 4], "data_offsets": [0, 16]}}),
        "SizeMismatch", "F16 [4, 4] is 32 bytes but data_offsets span 16")

    add("misaligned_f4.safetensors",
        st_file({"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}),
        "MisalignedSubByte", "F4 [3] is 12 bits, not a whole number of bytes")

    add("misordered.safetensors",
        st_file({"w": {"dtype": "U8", "shape": [16], "data_offsets": [16, 0]}}, data_len=16),
        "MisorderedOffsets", "data_offsets [16, 0]")

    add("overlap.safetensors",
        st_file({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                 "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}),
        "Overlap", "`b` [8, 24] starts inside `a` [0, 16]")

    add("gap.safetensors",
        st_file({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                 "b": {"dtype": "F32", "shape": [4], "data_offsets": [24, 40]}}),
        "Gap", "bytes 16..24 belong to no tensor")

    add("past_end.safetensors",
        st_file({"w": {"dtype": "F32", "shape": [16], "data_offsets": [0, 64]}}, data_len=32),
        "PastEnd", "tensor covers 64 data bytes, the file holds 32")

    add("trailing_data.safetensors",
        st_file({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, trailing=bytes(8)),
        "DataEndMismatch", "8 bytes after the last tensor")

    add("overflow.safetensors",
        st_file({"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 16],
                       "data_offsets": [0, 16]}}, data_len=16),
        "Overflow", "shape 2^32 x 2^32 x 16 overflows u64")

    add("empty.safetensors", b"", "EmptyFile", "0 bytes")

    add("short.safetensors", b"\x08\x00\x00\x00\x00", "FileTooShort",
        "5 bytes, shorter than the length prefix")


SHARDS = [
    ("model-00001-of-00002.safetensors", [
        ("model.embed_tokens.weight", "BF16", [16, 8]),
        ("model.layers.0.self_attn.q_proj.weight", "BF16", [8, 8]),
    ]),
    ("model-00002-of-00002.safetensors", [
        ("model.layers.0.mlp.up_proj.weight", "BF16", [16, 8]),
        ("lm_head.weight", "BF16", [16, 8]),
    ]),
]


def build_sharded():
    """A two-shard model, its consistent index and an index naming a missing shard."""
    files = {}
    weight_map = {}
    total = 0
    for shard, tensors in SHARDS:
        header = layout(tensors, metadata={"format": "pt"})
        files["sharded/" + shard] = st_file(header)
        total += data_len_of(header)
        for name, _, _ in tensors:
            weight_map[name] = shard
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    files["sharded/model.safetensors.index.json"] = (json.dumps(index, indent=2) + "\n").encode()
    broken = dict(weight_map)
    broken["model.layers.1.mlp.up_proj.weight"] = "model-00003-of-00003.safetensors"
    index = {"metadata": {"total_size": total + 256}, "weight_map": dict(sorted(broken.items()))}
    files["sharded/index_missing_shard.json"] = (json.dumps(index, indent=2) + "\n").encode()
    return files


README_HEAD = """# safetensors parser fixtures

Generated by `scripts/make_safetensors_fixtures.py` (python3, standard library,
deterministic); do not edit by hand, rerun the script. Tensor data is zeros.
The unit tests in `crates/vramfit-core/src/safetensors/tests.rs` read every file
below with `include_bytes!`, parse it with `parse_file`, and check the result
against the **Expected** column (`Ok` or the `HeaderError` variant), and check
that this table and the test's list agree.

| File | Expected | What it holds |
| --- | --- | --- |
"""

README_TAIL = """
## Sharded model (`sharded/`)

| File | What it holds |
| --- | --- |
| `model-00001-of-00002.safetensors` | embedding and q_proj, BF16 |
| `model-00002-of-00002.safetensors` | up_proj and lm_head, BF16 |
| `model.safetensors.index.json` | consistent index: `weight_map` for all four tensors, `total_size` {total} |
| `index_missing_shard.json` | also places `model.layers.1.mlp.up_proj.weight` in the absent `model-00003-of-00003.safetensors` (`MissingShard`), `total_size` off by 256 |
"""


def main():
    build()
    os.makedirs(os.path.join(OUT, "sharded"), exist_ok=True)
    files = {name: content for name, content, _, _ in FIXTURES}
    files.update(build_sharded())
    total = sum(nbytes(d, s) for _, ts in SHARDS for _, d, s in ts)
    rows = "".join(f"| `{n}` | `{k}` | {d} |\n" for n, _, k, d in FIXTURES)
    files["README.md"] = (README_HEAD + rows + README_TAIL.format(total=total)).encode()
    for rel, content in sorted(files.items()):
        path = os.path.join(OUT, rel)
        with open(path, "wb") as f:
            f.write(content)
    print(f"wrote {len(files)} files under {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
