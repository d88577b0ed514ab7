//! Pasted text → the words of the engine's own command line, with the environment it sees.
//!
//! Two readers: a small POSIX-shell tokenizer (quotes, backslash escapes and backslash-newline
//! continuations, `#` comments, `&&` / `;` / `|` / newline between commands, leading
//! `VAR=value` assignments and `export`), and a reader of the Kubernetes / Compose YAML a
//! container's `command:` / `args:` / `env:` / `image:` are written in (block lists, flow
//! lists, `|` / `>` block scalars). Then the wrappers are taken off: `sudo`, `env`, `exec`,
//! `nohup`, `sh -c '…'`, and `docker run … IMAGE …` (its `-e`/`--env`, `--gpus`,
//! `--entrypoint`; the vLLM image's entrypoint is `vllm serve`). Nothing is expanded or run.

use super::CommandError;

/// One environment variable the engine sees (`value` `None`: passed from the host, `-e VAR`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnvVar {
    /// Its name.
    pub name: String,
    /// Its value, when the text gives one.
    pub value: Option<String>,
}

/// The engine's command line as words, and what surrounds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Words {
    /// The command's words, from the program on (`vllm`, `serve`, `REPO`, `--flag`, …).
    pub words: Vec<String>,
    /// Environment variables seen (assignments, `export`, `-e`, YAML `env:`), in order.
    pub env: Vec<EnvVar>,
    /// The container image, when one is named.
    pub image: Option<String>,
    /// `docker run --gpus` as written.
    pub docker_gpus: Option<String>,
}

/// A shell token: a word, or the end of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    End,
}

/// Splits shell text into words and command ends.
fn shell_tokens(text: &str) -> Result<Vec<Tok>, CommandError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    // A word has started (so `''` is an empty word).
    let mut started = false;
    let mut chars = text.chars().peekable();
    let end_word = |cur: &mut String, started: &mut bool, out: &mut Vec<Tok>| {
        if *started {
            out.push(Tok::Word(std::mem::take(cur)));
            *started = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // Backslash-newline is a continuation (also with a CR before the newline).
                Some('\n') => {}
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                }
                Some(n) => {
                    cur.push(n);
                    started = true;
                }
                None => {}
            },
            '\'' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(n) => cur.push(n),
                        None => return Err(CommandError::UnclosedQuote { quote: '\'' }),
                    }
                }
            }
            '"' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\n') => {}
                            Some(n @ ('"' | '\\' | '$' | '`')) => cur.push(n),
                            Some(n) => {
                                cur.push('\\');
                                cur.push(n);
                            }
                            None => return Err(CommandError::UnclosedQuote { quote: '"' }),
                        },
                        Some(n) => cur.push(n),
                        None => return Err(CommandError::UnclosedQuote { quote: '"' }),
                    }
                }
            }
            '#' if !started => {
                // A comment runs to the end of the line.
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            '\n' | ';' | '&' | '|' => {
                end_word(&mut cur, &mut started, &mut out);
                if out.last() != Some(&Tok::End) {
                    out.push(Tok::End);
                }
            }
            c if c.is_whitespace() => end_word(&mut cur, &mut started, &mut out),
            c => {
                cur.push(c);
                started = true;
            }
        }
    }
    end_word(&mut cur, &mut started, &mut out);
    Ok(out)
}

/// `NAME=value` with a shell variable name.
fn assignment(w: &str) -> Option<EnvVar> {
    let (name, value) = w.split_once('=')?;
    let mut cs = name.chars();
    let first = cs.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| EnvVar {
        name: name.to_string(),
        value: Some(value.to_string()),
    })
}

/// The last path component (`/usr/bin/python3` → `python3`).
pub(super) fn base(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// Whether the words start an engine this module reads.
pub(super) fn is_engine_start(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let b = base(first);
    let second = words.get(1).map(String::as_str);
    match b {
        "vllm" | "sglang" => second == Some("serve"),
        "trtllm-serve" => true,
        _ if b.starts_with("python") => {
            second == Some("-m")
                && words.get(2).is_some_and(|m| {
                    m.starts_with("vllm.entrypoints") || m == "sglang.launch_server"
                })
        }
        _ => false,
    }
}

/// Docker options that take a value (the next word, unless written `--opt=value`).
const DOCKER_VALUE_OPTS: [&str; 38] = [
    "-e",
    "--env",
    "--env-file",
    "-v",
    "--volume",
    "-p",
    "--publish",
    "--name",
    "--gpus",
    "--ipc",
    "--shm-size",
    "--runtime",
    "--network",
    "--net",
    "-w",
    "--workdir",
    "--entrypoint",
    "--mount",
    "-u",
    "--user",
    "--ulimit",
    "--device",
    "--cpus",
    "-m",
    "--memory",
    "--restart",
    "-h",
    "--hostname",
    "-l",
    "--label",
    "--cap-add",
    "--security-opt",
    "--log-driver",
    "--log-opt",
    "--platform",
    "--pull",
    "--add-host",
    "--cpuset-cpus",
];

/// Takes the wrappers off one command's words (after its leading assignments).
fn unwrap(mut words: Vec<String>, w: &mut Words, depth: u32) -> Result<Vec<String>, CommandError> {
    loop {
        let Some(first) = words.first().map(|s| base(s).to_string()) else {
            return Ok(words);
        };
        match first.as_str() {
            "sudo" | "exec" | "nohup" | "time" | "command" => {
                words.remove(0);
                while words.first().is_some_and(|x| x.starts_with('-')) {
                    words.remove(0);
                }
            }
            "env" => {
                words.remove(0);
                while let Some(v) = words.first().and_then(|x| assignment(x)) {
                    w.env.push(v);
                    words.remove(0);
                }
            }
            "export" => {
                words.remove(0);
                w.env.extend(words.iter().filter_map(|x| assignment(x)));
                return Ok(Vec::new());
            }
            "sh" | "bash" | "zsh" | "dash" if words.get(1).is_some_and(|x| x == "-c") => {
                let script = words.get(2).cloned().unwrap_or_default();
                if depth > 4 {
                    return Ok(Vec::new());
                }
                return engine_words_of_shell(&script, w, depth + 1);
            }
            "docker" | "podman" | "nerdctl" if words.get(1).is_some_and(|x| x == "run") => {
                words = docker_run(&words[2..], w);
            }
            _ => {
                // Leading assignments (`VAR=1 vllm serve …`).
                let mut i = 0;
                while let Some(v) = words.get(i).and_then(|x| assignment(x)) {
                    w.env.push(v);
                    i += 1;
                }
                if i == 0 {
                    return Ok(words);
                }
                words.drain(..i);
            }
        }
    }
}

/// `docker run` options and image; returns the words the container runs.
fn docker_run(rest: &[String], w: &mut Words) -> Vec<String> {
    let mut entrypoint: Option<String> = None;
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let (opt, inline) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let takes = DOCKER_VALUE_OPTS.contains(&opt.as_str());
        let value = if takes && inline.is_none() {
            i += 1;
            rest.get(i).cloned()
        } else {
            inline
        };
        match opt.as_str() {
            "-e" | "--env" => {
                if let Some(v) = value {
                    w.env.push(assignment(&v).unwrap_or(EnvVar {
                        name: v,
                        value: None,
                    }));
                }
            }
            "--gpus" => w.docker_gpus = value,
            "--entrypoint" => entrypoint = value,
            _ => {}
        }
        i += 1;
    }
    let Some(image) = rest.get(i) else {
        return Vec::new();
    };
    w.image = Some(image.clone());
    let args: Vec<String> = rest[i + 1..].to_vec();
    if let Some(e) = entrypoint {
        let mut v = vec![e];
        v.extend(args);
        return v;
    }
    if is_vllm_image(image) && !is_engine_start(&args) {
        return vllm_serve(args);
    }
    args
}

/// The official vLLM images, whose entrypoint is `vllm serve`.
fn is_vllm_image(image: &str) -> bool {
    image.contains("vllm-openai") || image.contains("vllm/vllm")
}

fn vllm_serve(args: Vec<String>) -> Vec<String> {
    let mut v = vec!["vllm".to_string(), "serve".to_string()];
    v.extend(args);
    v
}

/// The engine's words from shell text: each command (between `&&`, `;`, newlines) is
/// unwrapped; the first that starts an engine wins, else the last non-empty one.
fn engine_words_of_shell(
    text: &str,
    w: &mut Words,
    depth: u32,
) -> Result<Vec<String>, CommandError> {
    let toks = shell_tokens(text)?;
    let mut last = Vec::new();
    for cmd in toks.split(|t| *t == Tok::End) {
        let words: Vec<String> = cmd
            .iter()
            .filter_map(|t| match t {
                Tok::Word(s) => Some(s.clone()),
                Tok::End => None,
            })
            .collect();
        let words = unwrap(words, w, depth)?;
        if is_engine_start(&words) {
            return Ok(words);
        }
        if !words.is_empty() {
            last = words;
        }
    }
    Ok(last)
}

/// Whether the text is YAML (a `command:` / `args:` key).
fn is_yaml(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim_start().trim_start_matches("- ");
        ["command:", "args:", "entrypoint:"]
            .iter()
            .any(|k| t.starts_with(k))
    })
}

/// A YAML scalar as written on one line: quotes removed (`"…"` with its escapes, `'…'`
/// with `''`), a plain scalar without its ` #` comment.
fn yaml_scalar(s: &str) -> String {
    let s = s.trim();
    if let Some(body) = s.strip_prefix('"') {
        let mut out = String::new();
        let mut cs = body.chars();
        while let Some(c) = cs.next() {
            match c {
                '"' => break,
                '\\' => match cs.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(n) => out.push(n),
                    None => {}
                },
                c => out.push(c),
            }
        }
        return out;
    }
    if let Some(body) = s.strip_prefix('\'') {
        let end = body.rfind('\'').unwrap_or(body.len());
        return body[..end].replace("''", "'");
    }
    match s.find(" #") {
        Some(i) => s[..i].trim_end().to_string(),
        None => s.to_string(),
    }
}

/// The items of a YAML flow list `[a, "b c", 'd']` (quotes respected).
fn flow_items(s: &str) -> Vec<String> {
    let inner = s.trim().trim_start_matches('[');
    let inner = inner.rfind(']').map_or(inner, |i| &inner[..i]);
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, ',') => {
                items.push(yaml_scalar(&cur));
                cur.clear();
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        items.push(yaml_scalar(&cur));
    }
    items
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// Which list a YAML line belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Command,
    Args,
    Env,
    Other,
}

/// The words and environment of a container spec written in YAML.
fn yaml(text: &str, w: &mut Words) -> Result<Vec<String>, CommandError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut command: Vec<String> = Vec::new();
    let mut args: Vec<String> = Vec::new();
    let mut key = Key::Other;
    let mut key_indent = 0;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        i += 1;
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let ind = indent(line);
        // A list item of the current key (`- x`), or a mapping key (`command:`).
        let item = t.strip_prefix("- ").or_else(|| (t == "-").then_some(""));
        if let (Some(item), true) = (item, key != Key::Other && ind >= key_indent) {
            match key {
                Key::Env => {
                    if let Some(name) = item.trim().strip_prefix("name:") {
                        w.env.push(EnvVar {
                            name: yaml_scalar(name),
                            value: None,
                        });
                    }
                }
                Key::Command | Key::Args => {
                    let it = item.trim();
                    let value = if matches!(it, "|" | ">" | "|-" | ">-" | "|+" | ">+") {
                        // A block scalar: the following lines indented deeper than the dash.
                        let mut body = Vec::new();
                        while i < lines.len()
                            && (lines[i].trim().is_empty() || indent(lines[i]) > ind)
                        {
                            body.push(lines[i].trim());
                            i += 1;
                        }
                        body.join(if it.starts_with('|') { "\n" } else { " " })
                    } else {
                        yaml_scalar(it)
                    };
                    if key == Key::Command {
                        command.push(value);
                    } else {
                        args.push(value);
                    }
                }
                Key::Other => {}
            }
            continue;
        }
        if key == Key::Env && ind > key_indent {
            // `value: "1"` of the current env item.
            if let (Some(v), Some(last)) = (t.strip_prefix("value:"), w.env.last_mut()) {
                last.value = Some(yaml_scalar(v));
            }
            continue;
        }
        let t = t.strip_prefix("- ").unwrap_or(t);
        let Some((k, rest)) = t.split_once(':') else {
            continue;
        };
        let k = k.trim();
        let rest = rest.trim();
        key_indent = ind;
        key = match k {
            "command" | "entrypoint" => Key::Command,
            "args" => Key::Args,
            "env" | "environment" => Key::Env,
            "image" => {
                w.image = Some(yaml_scalar(rest));
                Key::Other
            }
            _ => Key::Other,
        };
        if matches!(key, Key::Command | Key::Args) && !rest.is_empty() {
            let mut v = rest.to_string();
            if v.starts_with('[') {
                // A flow list may run over several lines.
                while !v.contains(']') && i < lines.len() {
                    v.push(' ');
                    v.push_str(lines[i].trim());
                    i += 1;
                }
                let items = flow_items(&v);
                if key == Key::Command {
                    command.extend(items);
                } else {
                    args.extend(items);
                }
            } else {
                // `command: vllm serve …` (Compose): a shell line.
                let words: Vec<String> = shell_tokens(&yaml_scalar(&v))?
                    .into_iter()
                    .filter_map(|t| match t {
                        Tok::Word(s) => Some(s),
                        Tok::End => None,
                    })
                    .collect();
                if key == Key::Command {
                    command.extend(words);
                } else {
                    args.extend(words);
                }
            }
            key = Key::Other;
        }
    }
    command.extend(args);
    let words = unwrap(command, w, 0)?;
    Ok(words)
}

/// Reads pasted text (shell or YAML) into the engine's words and environment.
///
/// # Errors
/// An unclosed quote.
pub(super) fn read(text: &str) -> Result<Words, CommandError> {
    let mut w = Words::default();
    let words = if is_yaml(text) {
        yaml(text, &mut w)?
    } else {
        engine_words_of_shell(text, &mut w, 0)?
    };
    // Only flags (a container's `args:`, or what follows a vLLM image): the vLLM image's
    // entrypoint, `vllm serve`, runs them.
    let image_is_vllm = w.image.as_deref().is_none_or(is_vllm_image);
    w.words = if !is_engine_start(&words)
        && image_is_vllm
        && words
            .first()
            .is_some_and(|f| f.starts_with("--") || f.contains('/'))
        && (w.image.is_some() || is_yaml(text))
    {
        vllm_serve(words)
    } else {
        words
    };
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        read(text).unwrap().words
    }

    #[test]
    fn quotes_continuations_and_comments() {
        let t = "vllm serve 'my org/model' \\\n  --x \"a \\\"b\\\" c\" # a comment\n";
        assert_eq!(
            words(t),
            ["vllm", "serve", "my org/model", "--x", "a \"b\" c"]
        );
        assert_eq!(
            read("vllm serve m --x 'open").unwrap_err(),
            CommandError::UnclosedQuote { quote: '\'' }
        );
    }

    #[test]
    fn assignments_exports_and_chains() {
        let w =
            read("export HF_TOKEN=x\nCUDA_VISIBLE_DEVICES=0,1 vllm serve m && echo done").unwrap();
        assert_eq!(w.words, ["vllm", "serve", "m"]);
        let names: Vec<_> = w.env.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["HF_TOKEN", "CUDA_VISIBLE_DEVICES"]);
        assert_eq!(
            words("sudo -E env A=1 sh -c 'pip install x; vllm serve m'"),
            ["vllm", "serve", "m"]
        );
    }

    #[test]
    fn docker_run_and_the_vllm_entrypoint() {
        let w = read(
            "docker run --runtime nvidia --gpus all -v ~/.cache:/root/.cache \\\n  --env \"HF_TOKEN=$T\" -e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 -p 8000:8000 --ipc=host \\\n  vllm/vllm-openai:latest --model m --tensor-parallel-size 2",
        )
        .unwrap();
        assert_eq!(
            w.words,
            [
                "vllm",
                "serve",
                "--model",
                "m",
                "--tensor-parallel-size",
                "2"
            ]
        );
        assert_eq!(w.image.as_deref(), Some("vllm/vllm-openai:latest"));
        assert_eq!(w.docker_gpus.as_deref(), Some("all"));
        assert_eq!(w.env[1].value.as_deref(), Some("1"));
        let w = read("docker run --gpus all lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m").unwrap();
        assert_eq!(w.words[..3], ["python3", "-m", "sglang.launch_server"]);
    }

    #[test]
    fn kubernetes_lists() {
        let y = "containers:\n  - name: vllm\n    image: vllm/vllm-openai:v0.10.1\n    command: [\"vllm\", \"serve\"]\n    args:\n      - \"meta-llama/Llama-3.1-8B-Instruct\"\n      - \"--tensor-parallel-size\"\n      - \"4\"\n      - --max-model-len=8192  # short\n    env:\n      - name: VLLM_ALLOW_LONG_MAX_MODEL_LEN\n        value: \"1\"\n      - name: HF_TOKEN\n        valueFrom:\n          secretKeyRef: {name: hf}\n";
        let w = read(y).unwrap();
        assert_eq!(
            w.words,
            [
                "vllm",
                "serve",
                "meta-llama/Llama-3.1-8B-Instruct",
                "--tensor-parallel-size",
                "4",
                "--max-model-len=8192"
            ]
        );
        assert_eq!(w.env.len(), 2);
        assert_eq!(w.env[0].value.as_deref(), Some("1"));
        assert_eq!(w.env[1].value, None);
        // Args only: the vLLM image's entrypoint runs them.
        assert_eq!(
            words("args: [\"--model\", 'm', --tp, \"2\"]"),
            ["vllm", "serve", "--model", "m", "--tp", "2"]
        );
        // A block scalar given to `sh -c`.
        let y = "command: [\"/bin/sh\", \"-c\"]\nargs:\n  - |\n    pip list\n    python3 -m sglang.launch_server --model-path m \\\n      --tp 2\n";
        assert_eq!(
            words(y),
            [
                "python3",
                "-m",
                "sglang.launch_server",
                "--model-path",
                "m",
                "--tp",
                "2"
            ]
        );
    }
}
