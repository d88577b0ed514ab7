use super::*;

fn repo() -> Repo {
    Repo::new(Some("http://127.0.0.1:8080/"), "org/model", None).unwrap()
}

/// One tensor `w`, BF16 [4096, 4096]: 4096 · 4096 · 2 = 33,554,432 bytes of data.
const HEADER: &[u8] = br#"{"w":{"dtype":"BF16","shape":[4096,4096],"data_offsets":[0,33554432]}}"#;

#[test]
fn urls_follow_the_hubs_template_and_quote_the_revision() {
    let r = repo();
    assert_eq!(r.endpoint, "http://127.0.0.1:8080", "trailing / stripped");
    assert_eq!(r.revision, "main");
    assert_eq!(
        r.url("config.json"),
        "http://127.0.0.1:8080/org/model/resolve/main/config.json"
    );
    let pr = Repo::new(None, "org/model", Some("refs/pr/3")).unwrap();
    // huggingface_hub quotes the revision with safe="" and the file name with "/" kept.
    assert_eq!(
        pr.url("sub dir/a.safetensors"),
        "https://huggingface.co/org/model/resolve/refs%2Fpr%2F3/sub%20dir/a.safetensors"
    );
    assert_eq!(
        pr.cache_path("config.json"),
        "https%3A%2F%2Fhuggingface.co/org/model/refs%2Fpr%2F3/config.json"
    );
}

#[test]
fn repo_ids_are_owner_slash_name() {
    for ok in [
        "meta-llama/Llama-3.1-8B",
        "Qwen/Qwen3-0.6B",
        "a/b",
        "o_1/m.v2",
    ] {
        assert!(is_repo_id(ok), "{ok}");
    }
    for bad in [
        "llama-3.1-8b",
        "a/b/c",
        "/a",
        "a/",
        "a/-b",
        "a/b.",
        "a/b--c",
        "a/b..c",
        "a b/c",
        "./x",
        "../etc",
    ] {
        assert!(!is_repo_id(bad), "{bad}");
    }
    assert_eq!(
        Repo::new(None, "x", None).unwrap_err().to_string(),
        "`x` is not a repo id of the form owner/name"
    );
    assert!(matches!(
        Repo::new(Some("ftp://h"), "a/b", None),
        Err(HubError::BadEndpoint(_))
    ));
    for bad in ["a b", ".", "..", "x\ny"] {
        assert!(
            matches!(
                Repo::new(None, "a/b", Some(bad)),
                Err(HubError::BadRevision(_))
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn env_true_reads_huggingface_hubs_true_values() {
    for t in ["1", "on", "YES", "True"] {
        assert!(env_true(Some(t)), "{t}");
    }
    for f in [None, Some("0"), Some(""), Some("no")] {
        assert!(!env_true(f), "{f:?}");
    }
}

/// Drives a sharded import: config, index, then 8 bytes and the header of each shard.
#[test]
fn a_sharded_import_asks_for_the_headers_only() {
    let mut im = Import::new(repo());
    let r = im.request().unwrap();
    assert_eq!(
        (r.kind, r.range, r.limit()),
        (Kind::Config, None, MAX_JSON_BYTES)
    );
    assert!(im.status(200).unwrap());
    im.body(br#"{"model_type":"llama"}"#).unwrap();
    assert_eq!(im.request().unwrap().kind, Kind::Index);
    assert!(im.status(200).unwrap());
    let index = br#"{"weight_map":{"w":"b.safetensors","v":"a.safetensors","u":"a.safetensors"}}"#;
    im.body(index).unwrap();
    let n = HEADER.len() as u64; // 70 characters
    assert_eq!(n, 70);
    for shard in ["a.safetensors", "b.safetensors"] {
        let len = im.request().unwrap();
        assert_eq!(len.file, shard, "sorted, unique");
        assert_eq!(len.range_header().unwrap(), "bytes=0-7");
        assert!(im.status(206).unwrap());
        im.body(&n.to_le_bytes()).unwrap();
        let h = im.request().unwrap();
        // [8, 8 + 70) is bytes=8-77 (the last byte inclusive).
        assert_eq!(
            (h.kind, h.range_header().unwrap()),
            (Kind::Header, "bytes=8-77".into())
        );
        assert_eq!(h.limit(), 70);
        assert!(im.status(206).unwrap());
        im.body(HEADER).unwrap();
    }
    assert_eq!(im.shards_done(), (2, 2));
    assert!(im.request().is_none());
    let f = im.finish().unwrap();
    // Σ (8 + 70) over two shards = 156.
    assert_eq!(f.header_bytes, 156);
    assert_eq!(f.headers[1].data_len, 33_554_432);
    assert_eq!(f.index.as_deref(), Some(&index[..]));
}

#[test]
fn a_missing_index_is_a_single_file_repo_and_other_statuses_stop() {
    let mut im = Import::new(repo());
    assert!(im.status(200).unwrap());
    im.body(b"{}").unwrap();
    assert!(!im.status(404).unwrap());
    assert_eq!(im.request().unwrap().file, "model.safetensors");
    // A server that ignores Range answers 200: stop before reading.
    assert_eq!(
        im.status(200).unwrap_err().to_string(),
        "model.safetensors: the server ignored the Range request and started sending the whole file; aborted to avoid downloading it."
    );

    let mut im = Import::new(repo());
    let e = im.status(401).unwrap_err().to_string();
    assert!(e.starts_with("config.json: access denied (401)"), "{e}");
    let mut im = Import::new(repo());
    assert_eq!(
        im.status(404).unwrap_err().to_string(),
        "config.json: not found (404) at http://127.0.0.1:8080/org/model/resolve/main/config.json. Check the repo id and revision."
    );
}

#[test]
fn bad_answers_are_errors_naming_the_file() {
    let mut im = Import::new(repo());
    im.status(200).unwrap();
    assert_eq!(
        im.body(&[0xff, 0xfe]).unwrap_err().to_string(),
        "config.json is not UTF-8"
    );
    im.body(b"{}").unwrap();
    im.status(200).unwrap();
    assert!(matches!(
        im.body(br#"{"weight_map":{"w":"../x.safetensors"}}"#),
        Err(HubError::BadShardName(_))
    ));
    assert!(matches!(
        im.body(br#"{"weight_map":{}}"#),
        Err(HubError::Header { .. })
    ));
    im.body(br#"{"weight_map":{"w":"a.safetensors"}}"#).unwrap();
    im.status(206).unwrap();
    // A 206 for bytes=0-7 must start at 0 (RFC 9110 §14.4); no header passes.
    assert!(im.content_range(Some("bytes 0-7/16060522496")).is_ok());
    assert!(im.content_range(None).is_ok());
    assert_eq!(
        im.content_range(Some("bytes 8-15/100"))
            .unwrap_err()
            .to_string(),
        "a.safetensors: the server sent another byte range (Content-Range: bytes 8-15/100)"
    );
    assert!(im.content_range(Some("garbage")).is_err());
    // Nine bytes for an 8-byte range.
    assert!(matches!(
        im.body(&[0; 9]),
        Err(HubError::TooLong { limit: 8, .. })
    ));
    // A length over MAX_HEADER_SIZE (100,000,000) is refused before the header is asked for.
    let e = im.body(&200_000_000u64.to_le_bytes()).unwrap_err();
    assert!(matches!(e, HubError::Header { .. }), "{e}");
    assert!(im.finish().is_none(), "not finished");
}
