#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ from the project's own data.

Deterministic (standard library only); rerun after the fixtures or the catalog change:
  safetensors_header  every crates/vramfit-core/tests/fixtures/safetensors/**/*.safetensors
  config_json         the `config` object of every catalog model (src/catalog/models/*.json)
  share_link          a few share-link queries
  oom_text            every out-of-memory message quoted in the tests of src/oom/tests.rs
  command             a few pasted launch commands (shell, docker, Kubernetes YAML)
"""
import ast
import glob
import json
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = os.path.join(ROOT, "crates", "vramfit-core")
OUT = os.path.join(ROOT, "fuzz", "corpus")


def reset(target):
    d = os.path.join(OUT, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def write(d, name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def safetensors():
    d = reset("safetensors_header")
    base = os.path.join(CORE, "tests", "fixtures", "safetensors")
    for p in sorted(glob.glob(os.path.join(base, "**", "*.safetensors"), recursive=True)):
        name = os.path.relpath(p, base).replace(os.sep, "__")
        with open(p, "rb") as f:
            write(d, name, f.read())
    return len(os.listdir(d))


def configs():
    d = reset("config_json")
    for p in sorted(glob.glob(os.path.join(CORE, "src", "catalog", "models", "*.json"))):
        with open(p, encoding="utf-8") as f:
            for m in json.load(f):
                write(d, m["id"] + ".json", json.dumps(m["config"], indent=1, sort_keys=True))
    return len(os.listdir(d))


SHARE_LINKS = [
    "",
    "?model=llama-3.1-70b&gpu=h100-sxm&quant=fp8&tp=4",
    "len=32768&tp=2",
    "model=deepseek-v3&gpu=h200&quant=fp8&kv=fp8&tp=8&pp=2&users=64&prompt=4096&output=512",
    "model=qwen%2FQwen3-32B&gpu=a100-80gb&engine=sglang&util=0.85&len=auto&seqs=128",
    "model=gpt-oss-120b&gpu=rtx-4090&quant=int4-awq&batched=8192&block=32&tps=30&view=cost",
    "engine=trtllm&util=1.5&len=-1&tp=0&pp=x&users=%ZZ&unknown=1&units=gb",
    "model=%3Cscript%3Ealert(1)%3C%2Fscript%3E&gpu=+&quant=nvfp4&kv=auto&engine=transformers",
]


def share():
    d = reset("share_link")
    for n, q in enumerate(SHARE_LINKS):
        write(d, f"link{n:02}", q)
    return len(os.listdir(d))


DECIMALS = [
    "0", "0.9", "-2.5e3", ".5", "5.", "1e22", "1e23", "9007199254740993",
    "2.4703282292062328e-324", "1.7976931348623158e308", "0.30000000000000004",
    "123456789012345678901234567890e-40", "1e-400", "inf", "1,5",
]


def decimals():
    d = reset("decimal")
    for n, t in enumerate(DECIMALS):
        write(d, f"num{n:02}", t)
    return len(os.listdir(d))


COMMANDS = [
    "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --quantization awq",
    "docker run --gpus all -e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm/vllm-openai:v0.16.0 \\\n"
    "  --model meta-llama/Llama-3.1-8B-Instruct --max-model-len=200k",
    "CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct"
    " --tp 2 --mem-fraction-static 0.8 --kv-cache-dtype fp8_e4m3",
    "trtllm-serve meta-llama/Llama-3.1-8B-Instruct --backend pytorch --tp_size 2 --max_seq_len 8192",
    "containers:\n  - image: vllm/vllm-openai:latest\n    args:\n      - \"Qwen/Qwen2.5-7B-Instruct\"\n"
    "      - \"--tensor-parallel-size\"\n      - \"8\"\n    env:\n      - name: HF_TOKEN\n        value: x\n",
    "command: [\"/bin/sh\", \"-c\"]\nargs:\n  - |\n    vllm serve 'm' --tp=2 # c\n",
]


def commands():
    d = reset("command")
    for n, t in enumerate(COMMANDS):
        write(d, f"cmd{n:02}", t)
    return len(os.listdir(d))


def ooms():
    d = reset("oom_text")
    path = os.path.join(CORE, "src", "oom", "tests.rs")
    with open(path, encoding="utf-8") as f:
        tests = f.read()
    n = 0
    for name, lit in re.findall(r'const ([A-Z0-9_]+): &str = ("(?:[^"\\]|\\.)*");', tests):
        # Rust and Python agree on the escapes these literals use (\n, \", \\).
        text = ast.literal_eval(lit.replace("\\\n", ""))
        if len(text) < 40:  # fragments, not messages
            continue
        write(d, name.lower() + ".txt", text)
        n += 1
    return n


if __name__ == "__main__":
    counts = {
        "safetensors_header": safetensors(),
        "config_json": configs(),
        "share_link": share(),
        "oom_text": ooms(),
        "decimal": decimals(),
        "command": commands(),
    }
    for k, v in counts.items():
        print(f"[make_corpus] {k}: {v} seeds")
