//! `vramfit plan owner/name` against a local Hub: a server in the test (127.0.0.1, a thread
//! per connection, stops after its deadline) that serves a fake repo: the real
//! Llama-3.1-8B `config.json` (the catalog's copy), an index, and two shards whose bodies are
//! virtual (the header is synthesised; the 16 GB of tensor data would be zeros). It honours
//! Range and counts the body bytes it sends per file.

use super::vramfit_env;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const REPO: &str = "some-org/new-model";
const SHARDS: [&str; 2] = [
    "model-00001-of-00002.safetensors",
    "model-00002-of-00002.safetensors",
];

/// The Llama-3.1-8B config, as the catalog holds it (`catalog/models/llama.json`, sourced there).
fn config() -> String {
    let text = include_str!("../../../vramfit-core/src/catalog/models/llama.json");
    let models: serde_json::Value = serde_json::from_str(text).unwrap();
    let m = models
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "llama-3.1-8b")
        .unwrap();
    serde_json::to_string_pretty(&m["config"]).unwrap()
}

/// Llama-3.1-8B's tensors (names and shapes as in the HF checkpoint), BF16: embeddings and
/// layers 0–15 in shard 1, layers 16–31, the final norm and `lm_head` in shard 2.
fn tensors(shard: usize) -> Vec<(String, Vec<u64>)> {
    let mut t = Vec::new();
    let layers = if shard == 0 { 0..16 } else { 16..32 };
    if shard == 0 {
        t.push(("model.embed_tokens.weight".to_string(), vec![128_256, 4096]));
    }
    for i in layers {
        let p = format!("model.layers.{i}");
        for (n, s) in [
            ("self_attn.q_proj", vec![4096, 4096]),
            ("self_attn.k_proj", vec![1024, 4096]),
            ("self_attn.v_proj", vec![1024, 4096]),
            ("self_attn.o_proj", vec![4096, 4096]),
            ("mlp.gate_proj", vec![14_336, 4096]),
            ("mlp.up_proj", vec![14_336, 4096]),
            ("mlp.down_proj", vec![4096, 14_336]),
            ("input_layernorm", vec![4096]),
            ("post_attention_layernorm", vec![4096]),
        ] {
            t.push((format!("{p}.{n}.weight"), s));
        }
    }
    if shard == 1 {
        t.push(("model.norm.weight".to_string(), vec![4096]));
        t.push(("lm_head.weight".to_string(), vec![128_256, 4096]));
    }
    t
}

/// A shard's header JSON and its data length.
fn header(shard: usize) -> (Vec<u8>, u64) {
    let mut off = 0u64;
    let mut entries = Vec::new();
    for (name, shape) in tensors(shard) {
        let bytes = shape.iter().product::<u64>() * 2;
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"BF16\",\"shape\":{shape:?},\"data_offsets\":[{off},{}]}}",
            off + bytes
        ));
        off += bytes;
    }
    let mut h = format!("{{{}}}", entries.join(",")).into_bytes();
    while h.len() % 8 != 0 {
        h.push(b' ');
    }
    (h, off)
}

fn index() -> String {
    let mut map = serde_json::Map::new();
    for (i, shard) in SHARDS.iter().enumerate() {
        for (name, _) in tensors(i) {
            map.insert(name, serde_json::Value::from(*shard));
        }
    }
    serde_json::json!({ "metadata": { "total_size": 16_060_522_496u64 }, "weight_map": map })
        .to_string()
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Normal,
    /// 401 without `Authorization: Bearer hf_secret`.
    Gated,
    /// Answers every request with 200 and the whole file.
    IgnoresRange,
    /// Serves an index that is not JSON.
    BadIndex,
    /// Redirects `resolve` URLs to `http://localhost:PORT/cdn/FILE` (another host name), as
    /// the Hub redirects to its CDN.
    Redirects,
}

/// The most a shard answer may send when Range is ignored (the server stops there).
const CAP: u64 = 256 << 20;

struct Hub {
    port: u16,
    sent: Arc<Mutex<HashMap<String, u64>>>,
    /// (path, Authorization) of every request.
    auth: Arc<Mutex<Vec<(String, String)>>>,
    stop: Arc<AtomicBool>,
}

impl Hub {
    fn start(mode: Mode) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let sent = Arc::new(Mutex::new(HashMap::new()));
        let auth = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let files: Arc<HashMap<String, (Vec<u8>, u64)>> = Arc::new({
            let base = format!("/{REPO}/resolve/main/");
            let mut f = HashMap::new();
            f.insert(format!("{base}config.json"), (config().into_bytes(), 0));
            f.insert(
                format!("{base}model.safetensors.index.json"),
                (index().into_bytes(), 0),
            );
            for (i, s) in SHARDS.iter().enumerate() {
                let (h, data) = header(i);
                let mut head = (h.len() as u64).to_le_bytes().to_vec();
                head.extend(h);
                f.insert(format!("{base}{s}"), (head, data));
            }
            let cdn: Vec<_> = f
                .iter()
                .map(|(k, v)| (k.replace(&base, "/cdn/"), v.clone()))
                .collect();
            f.extend(cdn);
            f
        });
        let (s2, a2, st2) = (sent.clone(), auth.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline && !st2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((c, _)) => {
                        let (f, s, a) = (files.clone(), s2.clone(), a2.clone());
                        std::thread::spawn(move || serve(c, mode, port, &f, &s, &a));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Hub {
            port,
            sent,
            auth,
            stop,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn total_sent(&self) -> u64 {
        self.sent.lock().unwrap().values().sum()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One connection: requests until EOF (keep-alive), each answered from `files`.
fn serve(
    c: TcpStream,
    mode: Mode,
    port: u16,
    files: &HashMap<String, (Vec<u8>, u64)>,
    sent: &Mutex<HashMap<String, u64>>,
    auth: &Mutex<Vec<(String, String)>>,
) {
    c.set_nonblocking(false).ok();
    c.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut w = c.try_clone().unwrap();
    let mut r = BufReader::new(c);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let (mut range, mut bearer) = (None, String::new());
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
            let (k, v) = h.split_once(':').unwrap_or(("", ""));
            let v = v.trim();
            match k.to_ascii_lowercase().as_str() {
                "range" => {
                    range = v.strip_prefix("bytes=").and_then(|x| {
                        let (a, b) = x.split_once('-')?;
                        Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))
                    });
                }
                "authorization" => bearer = v.to_string(),
                _ => {}
            }
        }
        auth.lock().unwrap().push((path.clone(), bearer.clone()));
        if let (Mode::Redirects, Some(file)) =
            (mode, path.strip_prefix(&format!("/{REPO}/resolve/main/")))
        {
            let _ = write!(
                w,
                "HTTP/1.1 302 Found\r\nlocation: http://localhost:{port}/cdn/{file}\r\ncontent-length: 0\r\n\r\n"
            );
            continue;
        }
        let Some((head, data)) = files.get(&path) else {
            let _ = w.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
            continue;
        };
        if mode == Mode::Gated && bearer != "Bearer hf_secret" {
            let _ = w.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n");
            continue;
        }
        if mode == Mode::BadIndex && path.ends_with(".index.json") {
            let _ = w.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nnot json!");
            continue;
        }
        let size = head.len() as u64 + data;
        let (status, start, end) = match range {
            Some((a, b)) if mode != Mode::IgnoresRange => {
                ("206 Partial Content", a, (b + 1).min(size))
            }
            _ => ("200 OK", 0, size),
        };
        let _ = write!(
            w,
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\ncontent-range: bytes {start}-{}/{size}\r\n\r\n",
            end - start,
            end.saturating_sub(1)
        );
        // The body: the real bytes of the head, zeros past it (the virtual tensor data), in
        // 64 KiB writes, counted as written; stops at CAP or when the client hangs up.
        let mut at = start;
        let mut n = 0u64;
        while at < end && n < CAP {
            let chunk: Vec<u8> = if at < head.len() as u64 {
                head[at as usize..(end.min(head.len() as u64)) as usize].to_vec()
            } else {
                vec![0; (end - at).min(64 << 10) as usize]
            };
            if w.write_all(&chunk).is_err() {
                break;
            }
            at += chunk.len() as u64;
            n += chunk.len() as u64;
        }
        let name = path.rsplit('/').next().unwrap_or("").to_string();
        *sent.lock().unwrap().entry(name).or_default() += n;
        if n < end - start {
            return;
        }
    }
}

fn plan(hub: &Hub, cache: &std::path::Path, extra: &[(&str, &str)]) -> std::process::Output {
    let ep = hub.endpoint();
    let cache = cache.to_string_lossy().into_owned();
    let mut env = vec![
        ("HF_ENDPOINT", ep.as_str()),
        ("VRAMFIT_CACHE_DIR", cache.as_str()),
    ];
    env.extend_from_slice(extra);
    vramfit_env(
        &[
            "plan",
            REPO,
            "--gpu",
            "h100",
            "--tensor-parallel-size",
            "1",
            "--json",
        ],
        &env,
    )
}

/// Asserts that `o` exited 2 (a Hub failure) with `needle` in its stderr.
fn fails_saying(o: &std::process::Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains(needle), "{e}");
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("vramfit-hub-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn hub_plan_reads_only_config_index_and_headers_then_the_cache() {
    let hub = Hub::start(Mode::Normal);
    let cache = scratch("plan");
    let o = plan(&hub, &cache, &[("HF_TOKEN", "hf_abc")]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();

    // What the server sent: config + index + Σ (8 + N) over the two shards, exactly.
    let (h1, h2) = (header(0).0.len() as u64, header(1).0.len() as u64);
    let want = config().len() as u64 + index().len() as u64 + (8 + h1) + (8 + h2);
    assert_eq!(hub.total_sent(), want, "{:?}", hub.sent.lock().unwrap());
    assert_eq!(j["hub"]["header_bytes_read"], 16 + h1 + h2);
    assert_eq!(j["model_source"], "hub");
    assert_eq!(j["hub"]["repo"], REPO);
    assert_eq!(j["hub"]["revision"], "main");
    assert_eq!(j["hub"]["shards"], 2);
    // The token reached the server on every request.
    let auth = hub.auth.lock().unwrap().clone();
    assert_eq!(auth.len(), 6, "config, index, 2 × (length, header)");
    assert!(auth.iter().all(|(_, a)| a == "Bearer hf_abc"), "{auth:?}");

    // Llama-3.1-8B by hand from its config (hidden 4096, 32 layers, 32 heads, 8 KV heads of
    // 128, intermediate 14336, vocab 128256, untied):
    //   embeddings and lm_head: 2 × 128256 × 4096           = 1,050,673,152
    //   per layer: q, o 2 × 4096²  = 33,554,432; k, v 2 × 1024 × 4096 = 8,388,608;
    //              MLP 3 × 4096 × 14336 = 176,160,768; norms 2 × 4096 = 8,192
    //              → 218,112,000; × 32                       = 6,979,584,000
    //   final norm                                           = 4,096
    //   total                                                = 8,030,261,248
    // The headers hold the same tensors (BF16, 2 bytes each): 16,060,522,496 bytes, so the
    // assertion holds whether the plan sizes weights from the config or from the headers.
    assert_eq!(j["parameters"], 8_030_261_248u64);
    assert_eq!(header(0).1 + header(1).1, 16_060_522_496);
    // Per GPU at TP 1, vLLM also holds the rotary cos/sin cache (vramfit-core `model.rs`,
    // from vLLM `rotary_embedding.py`): max_position_embeddings × head_dim × 2 bytes =
    // 131,072 × 128 × 2 = 33,554,432. 16,060,522,496 + 33,554,432 = 16,094,076,928.
    assert_eq!(j["per_gpu"]["weights_bytes"], 16_094_076_928u64);

    // A second run sends nothing: everything is in the cache.
    let before = hub.total_sent();
    let again = plan(&hub, &cache, &[]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(hub.total_sent(), before);
    assert_eq!(hub.auth.lock().unwrap().len(), 6, "no request at all");
    let j2: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(j2["per_gpu"], j["per_gpu"]);

    // Offline with the cache works; offline without it names the file and the variable.
    let off = plan(&hub, &cache, &[("HF_HUB_OFFLINE", "1")]);
    assert_eq!(off.status.code(), Some(0));
    let empty = scratch("plan-empty");
    let off = plan(&hub, &empty, &[("HF_HUB_OFFLINE", "1")]);
    fails_saying(
        &off,
        "config.json is not in the cache and HF_HUB_OFFLINE is set",
    );
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn hub_import_works_for_check_fit_scale_and_inspect() {
    let hub = Hub::start(Mode::Normal);
    let cache = scratch("cmds");
    let ep = hub.endpoint();
    let c = cache.to_string_lossy().into_owned();
    let env = [
        ("HF_ENDPOINT", ep.as_str()),
        ("VRAMFIT_CACHE_DIR", c.as_str()),
    ];
    let check = vramfit_env(&["check", REPO, "--gpu", "h100"], &env);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let fit = vramfit_env(
        &["fit", REPO, "--gpu", "h100", "--find", "gpus", "--json"],
        &env,
    );
    let j: serde_json::Value = serde_json::from_slice(&fit.stdout).unwrap();
    assert_eq!(
        (j["answer"].clone(), j["model_source"].clone()),
        (1.into(), "hub".into())
    );
    let cheapest = vramfit_env(&["fit", REPO, "--gpu", "h100", "--find", "cheapest"], &env);
    assert_eq!(cheapest.status.code(), Some(2), "not an empty list");
    assert!(String::from_utf8_lossy(&cheapest.stderr).contains("catalog models only"));
    let scale = vramfit_env(&["scale", REPO, "--gpu", "h100", "--json"], &env);
    assert_eq!(
        scale.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&scale.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&scale.stdout).unwrap();
    assert_eq!(j["points"].as_array().unwrap().len(), 7);
    let inspect = vramfit_env(&["inspect", REPO, "--json"], &env);
    assert_eq!(
        inspect.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    // 1 + 16 × 9 = 145 tensors in shard 1, 16 × 9 + 2 = 146 in shard 2: 291.
    assert_eq!(
        (j["shards"].clone(), j["tensor_count"].clone()),
        (2.into(), 291.into())
    );
    assert_eq!(j["total_bytes"], 16_060_522_496u64);
    assert_eq!(j["index_problems"].as_array().unwrap().len(), 0);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_gated_repo_is_access_denied_until_the_token_is_given() {
    let hub = Hub::start(Mode::Gated);
    let cache = scratch("gated");
    let o = plan(&hub, &cache, &[]);
    fails_saying(
        &o,
        &format!("`{REPO}` from the Hugging Face Hub: config.json: access denied (401)"),
    );
    // The older variable works too; HF_TOKEN wins when both are set.
    let old = plan(&hub, &cache, &[("HUGGING_FACE_HUB_TOKEN", "hf_secret")]);
    assert_eq!(
        old.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&old.stderr)
    );
    let _ = std::fs::remove_dir_all(&cache);
    let both = [
        ("HF_TOKEN", "hf_wrong"),
        ("HUGGING_FACE_HUB_TOKEN", "hf_secret"),
    ];
    assert_eq!(plan(&hub, &cache, &both).status.code(), Some(2));
    let ok = plan(&hub, &cache, &[("HF_TOKEN", "hf_secret")]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_server_that_ignores_range_is_cut_off() {
    let hub = Hub::start(Mode::IgnoresRange);
    let cache = scratch("norange");
    let o = plan(&hub, &cache, &[]);
    fails_saying(&o, "ignored the Range request");
    // The CLI hung up: the server sent far less than the 8 GB shard (it would stop at CAP,
    // 256 MiB, had the client kept reading; loopback buffers hold a few MiB).
    std::thread::sleep(Duration::from_millis(300));
    let shard = hub
        .sent
        .lock()
        .unwrap()
        .get(SHARDS[0])
        .copied()
        .unwrap_or(0);
    assert!(shard < CAP / 8, "sent {shard} bytes of the shard");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_closed_port_is_cannot_reach_exit_2() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }; // dropped: nothing listens there now
    let cache = scratch("closed");
    let ep = format!("http://127.0.0.1:{port}");
    let c = cache.to_string_lossy().into_owned();
    let o = vramfit_env(
        &["plan", REPO, "--gpu", "h100"],
        &[
            ("HF_ENDPOINT", ep.as_str()),
            ("VRAMFIT_CACHE_DIR", c.as_str()),
        ],
    );
    fails_saying(
        &o,
        &format!("`{REPO}` from the Hugging Face Hub: cannot reach 127.0.0.1:{port}"),
    );
    // Not in the catalog either: the closest catalog ids follow, as for any unknown model.
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains(&format!("unknown model `{REPO}`; closest catalog ids: ")),
        "{e}"
    );
}

#[test]
fn redirects_are_followed_without_the_token_to_another_host() {
    let hub = Hub::start(Mode::Redirects);
    let cache = scratch("redirect");
    let o = plan(&hub, &cache, &[("HF_TOKEN", "hf_abc")]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let auth = hub.auth.lock().unwrap().clone();
    // Six files' requests, each a redirect from 127.0.0.1 and a fetch from localhost.
    let (hub_side, cdn): (Vec<_>, Vec<_>) = auth.iter().partition(|(p, _)| p.contains("/resolve/"));
    assert_eq!((hub_side.len(), cdn.len()), (6, 6), "{auth:?}");
    assert!(
        hub_side.iter().all(|(_, a)| a == "Bearer hf_abc"),
        "{auth:?}"
    );
    assert!(
        cdn.iter().all(|(_, a)| a.is_empty()),
        "token sent to the CDN: {auth:?}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_malformed_index_is_an_error_naming_the_repo_and_the_file() {
    let hub = Hub::start(Mode::BadIndex);
    let cache = scratch("badindex");
    let o = plan(&hub, &cache, &[]);
    fails_saying(
        &o,
        &format!("`{REPO}` from the Hugging Face Hub: model.safetensors.index.json: "),
    );
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_cache_that_cannot_be_written_is_a_warning() {
    let hub = Hub::start(Mode::Normal);
    // A file where the cache directory should be: nothing can be created under it.
    let file = scratch("cachefile");
    std::fs::write(&file, b"x").unwrap();
    let o = plan(&hub, &file, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let warned = j["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .is_some_and(|w| w.starts_with("could not write the Hub cache"))
    });
    assert!(warned, "{}", j["warnings"]);
    let _ = std::fs::remove_file(&file);
}
