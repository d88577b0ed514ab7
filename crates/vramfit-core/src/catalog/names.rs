//! GPU names as people write them: nvidia-smi and rocm-smi output, engines' logs
//! (`collect_env`'s `GPU 0: NVIDIA H100 80GB HBM3`), MLPerf's system tables
//! (`NVIDIA H100-SXM5-80GB`, `AMD Instinct MI300X-NPS1-SPX-192GB-750W`), vendors' benchmark
//! tables (`H200 141GB HBM3`) and marketing names with or without the vendor.
//!
//! A name is read into a [`Spec`] by its structure, not looked up as a string:
//!
//! - **Words.** Lower case; every character but a letter or a digit separates words (a `.`
//!   between digits stays: `140.4 GB`); text in brackets keeps only its memory, memory type
//!   and form factor (`NVIDIA B200 (HGX, 180GB)`, `Intel Gaudi 3 (HL-325L OAM) 128GB`).
//!   `Max-Q` is one word, `PCI-E` and `PCI Express` are `pcie`.
//! - **Brand and packaging words** are dropped: the vendors (`NVIDIA`, `AMD`, `Intel`,
//!   `Apple`), the brands (`Tesla`, `GeForce`, `Quadro`, `Radeon`, `Instinct`, `Arc`), and
//!   `Graphics`, `Generation`, `Edition`, `GPU`, `VF` (rocm-smi names an SR-IOV virtual
//!   function `AMD Instinct MI300X VF`, the same chip), `HGX`/`DGX` (the baseboard or system
//!   sold with the chip), `Grace`/`Superchip` (the CPU packaged with it: `GH200 Grace Hopper
//!   Superchip`), `NVL72`-style rack names, MLPerf's AMD partition modes (`NPS1`,
//!   `SPX`, `CPX`), board power (`750W`), and the index after `GPU` in `GPU 0: NVIDIA …`
//!   (collect_env's and `nvidia-smi -L`'s lines).
//! - **Memory**: a number glued to or followed by `GB`, `G`, `GiB` (`80GB`, `80 GB`, `80G`,
//!   `80GiB`, `141GB`), or `MiB`/`MB` (nvidia-smi's `81559MiB`, read as GiB: /1024).
//!   It agrees with an entry whose `memory_marketed_gb` is within 8 %: the same part is
//!   quoted at more than one size — B200 180 GB marketed on HGX B200, 192 GB on the package
//!   (the catalog's b200 notes, huggingface.js#1539); GB200 186 GB per GPU, `GB200 192GB` in
//!   TensorRT-LLM's perf overview; H200 141 GB, `143GB` in a benchmark README and `~138 GiB`
//!   as CUDA counts it in an SGLang log (`tests/data/measurements.csv`) — while the closest
//!   two sizes of one family differ by more (H100 80 vs 94 GB: 17.5 %; A100 40 vs 80; V100
//!   16 vs 32).
//! - **Memory type**: `HBM2`, `HBM2e`, `HBM3`, `HBM3e`, `GDDR6`, `GDDR6X`, `GDDR7`,
//!   `LPDDR5(X)`, compared by generation without the `e`/`X` suffix (`H200 141GB HBM3` in
//!   vendors' tables names the HBM3e part; the PCIe H100 is HBM2e, so `80GB HBM3` is SXM).
//! - **Form factor**: `SXM`, `SXM2`…`SXM6`, `PCIe`, `NVL`, `OAM`, `Server` (Edition),
//!   `Workstation` (Edition) and `Max-Q` (the 300 W Workstation Edition).
//! - **Cut names**: nvidia-smi cuts long names to fit its table (`NVIDIA RTX PRO 6000
//!   Blac...`); after a trailing `...` the last word may be the start of an entry's word.
//! - **Model words**: everything else, split where letters meet digits (`RTX4090` =
//!   `RTX 4090`, `Gaudi3` = `Gaudi 3`) and compared as a set (`RTX 6000 Pro` =
//!   `RTX PRO 6000`). They must agree exactly with the entry's name or one of its aliases:
//!   `H100` never matches `V100`, `L40` never `L40S`, `RTX 4090 D` is not the RTX 4090.
//!   One exception, the architecture word of the entry (`Blackwell`, `Ada`, `Hopper`, the
//!   first word of its `architecture`): a name may add it, and may leave it out when at
//!   least two letter words remain (`RTX PRO 6000` for the RTX PRO 6000 Blackwell). With
//!   only the line and the number left it must stay: `Quadro RTX 6000` is the 24 GB Turing
//!   card, not the RTX 6000 Ada Generation, because NVIDIA reused the number.
//!
//! An entry matches when the model words agree and the memory, memory type and form
//! factor the name gives do not contradict it (the entry's forms are those of its name and
//! aliases, plus `PCIe` for a PCIe-linked card). A name that contradicts every entry
//! (`H100 40GB`) is unknown, never silently resolved.
//!
//! **The most common variant.** When several entries match (`H100`, `NVIDIA H100 80GB`,
//! `A100`), the one chosen is, in order: the entry whose name or alias is the name as
//! written; else the entry with an alias that names no more than the name does (the bare
//! family alias: `H100` on `h100-sxm`, `A100` on `a100-80gb-sxm`, `V100` on `v100-32gb`,
//! `H200` on `h200-sxm`, `RTX PRO 6000` on the Workstation Edition, `A100 PCIe` on
//! `a100-80gb-pcie`); else the first in catalog order (SXM before PCIe in every family).
//! The evidence for those aliases: every H100, A100 and H200 row of the measurements
//! (`tests/data/measurements.csv`: vLLM's and SGLang's logs and benchmark pages, mostly on
//! DGX/HGX nodes) names or implies the SXM part, and `NVIDIA H100 80GB HBM3` — nvidia-smi's
//! name of the SXM5 — is the H100 spelling of the engines' issues (`tests/data/
//! gpu_spellings.csv`); NVIDIA's TensorRT-LLM perf overview measures on SXM parts
//! (NVIDIA/TensorRT-LLM#281: 'based on SXM and 80GB memory'); the A100 PCIe of the engines'
//! collect_env output is the 80 GB card (vllm-project/vllm#14944, #13415); the bare
//! `V100` alias was on the 32 GB SXM2 before this resolver. The match carries the others and a
//! notice naming them.
//!
//! **Suggestions** for an unknown name rank entries by token similarity: each model word
//! of the name scores 6 when the entry has it, 2 when one of the entry's words of two or
//! more characters differs from it by one character (`1000` ~ `100`; single letters are
//! family prefixes and score only when equal), and each entry word the name lacks costs 1;
//! the memory and form factor add 1 each when they agree; ties keep catalog order. So
//! `H100 40GB` suggests the H100s first (`h` and `100`: 12), then the H200s (`h`, `100` ~
//! `200`, `200` lacking: 7), ahead of the A100 40GB (`100`, the memory, `a` lacking: 6);
//! `V100S` suggests the V100s.

use super::{Catalog, Gpu};

/// A form factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Form {
    /// SXM socket (SXM2–SXM6).
    Sxm,
    /// PCIe card.
    Pcie,
    /// NVL (NVLink-bridged pair of PCIe cards).
    Nvl,
    /// OCP accelerator module.
    Oam,
    /// Server Edition (passive cooling).
    Server,
    /// Workstation Edition (and its Max-Q version).
    Workstation,
}

impl Form {
    fn of(word: &str) -> Option<Form> {
        let sxm = word
            .strip_prefix("sxm")
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        Some(match word {
            _ if sxm => Form::Sxm,
            "pcie" | "pcie4" | "pcie5" | "pci" => Form::Pcie,
            "nvl" => Form::Nvl,
            "oam" => Form::Oam,
            "server" => Form::Server,
            "workstation" | "maxq" => Form::Workstation,
            _ => return None,
        })
    }
}

/// What a name says: model words, memory, memory type, form factors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spec {
    /// The model words, split where letters meet digits, sorted (compared as a set).
    pub model: Vec<String>,
    /// Memory, GB (or GiB as written).
    pub memory_gb: Option<f64>,
    /// Memory type without its `e`/`x` suffix (`hbm3`, `gddr6`).
    pub memory_type: Option<String>,
    /// Form factors named.
    pub forms: Vec<Form>,
    /// The last model word when the name ends in `...` (nvidia-smi cuts long names to fit
    /// its table: `NVIDIA RTX PRO 6000 Blac...`): it may be the start of the entry's word.
    pub truncated: Option<String>,
}

const NOISE: [&str; 24] = [
    "nvidia",
    "amd",
    "intel",
    "apple",
    "tesla",
    "geforce",
    "quadro",
    "radeon",
    "instinct",
    "arc",
    "graphics",
    "generation",
    "edition",
    "gpu",
    "vf",
    "hgx",
    "dgx",
    "spx",
    "dpx",
    "qpx",
    "cpx",
    "express",
    "grace",
    "superchip",
];

fn is_noise(w: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    NOISE.contains(&w)
        || w.strip_prefix("nvl").is_some_and(digits)
        || w.strip_prefix("nps").is_some_and(digits)
        || w.strip_suffix('w').is_some_and(digits)
}

/// `(number, unit)` of a word such as `80gb`, `140.4`, `81559mib`.
fn number_unit(w: &str) -> Option<(&str, &str)> {
    let end = w
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(w.len());
    let (n, u) = w.split_at(end);
    (!n.is_empty() && n.as_bytes()[0].is_ascii_digit()).then_some((n, u))
}

/// Memory in GB for a number and its unit, when the unit is a memory unit.
fn memory(n: &str, unit: &str) -> Option<f64> {
    let x = crate::decimal::parse_f64(n)?;
    let gb = match unit {
        "gb" | "g" | "gib" | "gigabytes" => x,
        "mib" | "mb" => x / 1024.0,
        _ => return None,
    };
    (gb.is_finite() && gb > 0.0).then_some(gb)
}

fn memory_type(w: &str) -> Option<String> {
    let base = ["hbm", "gddr", "lpddr"]
        .into_iter()
        .find(|p| w.starts_with(p))?;
    let rest = &w[base.len()..];
    let gen = rest.trim_end_matches(['e', 'x']);
    (gen.len() <= 1 && gen.bytes().all(|b| b.is_ascii_digit()) && rest.len() <= 2)
        .then(|| format!("{base}{gen}"))
}

/// The words of a name, each with whether it sits inside brackets.
fn words(name: &str) -> Vec<(String, bool)> {
    let lower = name
        .to_ascii_lowercase()
        .replace("max-q", "maxq")
        .replace("pci-e", "pcie")
        .replace("pci express", "pcie");
    let chars: Vec<char> = lower.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for (i, &c) in chars.iter().enumerate() {
        let dot_in_number = c == '.'
            && i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if c.is_ascii_alphanumeric() || dot_in_number {
            cur.push(c);
            continue;
        }
        if !cur.is_empty() {
            out.push((std::mem::take(&mut cur), depth > 0));
        }
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if !cur.is_empty() {
        out.push((cur, depth > 0));
    }
    out
}

/// Splits a word where letters meet digits (`rtx4090` → `rtx`, `4090`).
fn runs(w: &str, out: &mut Vec<String>) {
    let mut cur = String::new();
    for c in w.chars() {
        if let Some(last) = cur.chars().last() {
            if last.is_ascii_digit() != (c.is_ascii_digit() || c == '.') {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
}

impl Spec {
    /// Reads a name.
    ///
    /// # Example
    /// ```
    /// use vramfit_core::catalog::names::{Form, Spec};
    /// let s = Spec::parse("NVIDIA H100-SXM5-80GB");
    /// assert_eq!(s.model, ["100", "h"]);
    /// assert_eq!(s.memory_gb, Some(80.0));
    /// assert_eq!(s.forms, [Form::Sxm]);
    /// ```
    #[must_use]
    pub fn parse(name: &str) -> Spec {
        let ws = words(name);
        let mut s = Spec::default();
        let mut i = 0;
        while i < ws.len() {
            let (w, bracketed) = (&ws[i].0, ws[i].1);
            i += 1;
            if let Some((n, u)) = number_unit(w) {
                let unit = if u.is_empty() {
                    ws.get(i).map_or("", |(next, _)| next.as_str())
                } else {
                    u
                };
                if let Some(gb) = memory(n, unit) {
                    s.memory_gb = Some(gb);
                    i += usize::from(u.is_empty());
                    continue;
                }
            }
            // `GPU 0: NVIDIA …` (collect_env, `nvidia-smi -L`): the index is no model word.
            let index = i >= 2 && ws[i - 2].0 == "gpu" && w.bytes().all(|b| b.is_ascii_digit());
            if index {
                continue;
            }
            if let Some(t) = memory_type(w) {
                s.memory_type = Some(t);
            } else if let Some(f) = Form::of(w) {
                if !s.forms.contains(&f) {
                    s.forms.push(f);
                }
            } else if !bracketed && !is_noise(w) {
                runs(w, &mut s.model);
            }
        }
        let t = name.trim_end();
        if t.ends_with("...") || t.ends_with('\u{2026}') {
            let last = ws.last().map(|(w, _)| w.as_str()).unwrap_or_default();
            if s.model.last().is_some_and(|m| last.ends_with(m.as_str())) {
                s.truncated = s.model.pop();
            }
        }
        s.model.sort();
        s
    }
}

/// How a name resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The catalog id.
    Id,
    /// The entry's name or an alias, as written (up to case and spaces).
    Name,
    /// By structure, to one entry.
    Structure,
    /// By structure, to several entries: the most common variant was chosen.
    MostCommon,
}

/// A resolved GPU name.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuMatch<'a> {
    /// The entry.
    pub gpu: &'a Gpu,
    /// How it matched.
    pub how: MatchKind,
    /// The other entries the name also fits (empty unless [`MatchKind::MostCommon`]).
    pub others: Vec<&'a Gpu>,
    /// For an ambiguous name: which entry it was read as and the others.
    pub notice: Option<String>,
}

/// A name no catalog GPU fits.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownGpu {
    /// What was asked.
    pub name: String,
    /// Catalog ids ranked by token similarity, best first (at most 5).
    pub suggestions: Vec<String>,
}

impl std::fmt::Display for UnknownGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.suggestions.is_empty() {
            write!(
                f,
                "unknown GPU `{}`; no catalog GPU shares a word with it",
                self.name
            )
        } else {
            write!(
                f,
                "unknown GPU `{}`; closest catalog ids: {}",
                self.name,
                self.suggestions.join(", ")
            )
        }
    }
}

impl std::error::Error for UnknownGpu {}

/// An entry's specs: its own (name + entry fields) and one per alias.
struct Entry<'a> {
    gpu: &'a Gpu,
    /// Name first, then aliases.
    specs: Vec<Spec>,
    forms: Vec<Form>,
    memory_type: Option<String>,
    arch: Option<String>,
}

impl<'a> Entry<'a> {
    fn new(gpu: &'a Gpu) -> Self {
        let specs: Vec<Spec> = std::iter::once(&gpu.name)
            .chain(&gpu.aliases)
            .map(|n| Spec::parse(n))
            .collect();
        let mut forms: Vec<Form> = specs.iter().flat_map(|s| s.forms.clone()).collect();
        if gpu.interconnect.kind == "pcie" {
            forms.push(Form::Pcie);
        }
        forms.sort();
        forms.dedup();
        let arch = gpu
            .architecture
            .as_deref()
            .and_then(|a| a.split_whitespace().next())
            .map(str::to_ascii_lowercase)
            .filter(|w| w.bytes().all(|b| b.is_ascii_alphabetic()) && !is_noise(w));
        Entry {
            gpu,
            specs,
            forms,
            memory_type: gpu.memory_type.as_deref().and_then(|t| {
                memory_type(&t.to_ascii_lowercase()).or(Some(t.to_ascii_lowercase()))
            }),
            arch,
        }
    }

    fn memory_agrees(&self, gb: f64) -> bool {
        (gb - self.gpu.memory_marketed_gb).abs() <= 0.08 * self.gpu.memory_marketed_gb
    }

    /// Whether the name contradicts none of the entry's memory, type and forms.
    fn agrees(&self, q: &Spec) -> bool {
        q.memory_gb.is_none_or(|gb| self.memory_agrees(gb))
            && match (&q.memory_type, &self.memory_type) {
                (Some(a), Some(b)) => a == b || a == "hbm" && b.starts_with("hbm"),
                _ => true,
            }
            && (self.forms.is_empty() || q.forms.iter().all(|f| self.forms.contains(f)))
    }

    /// The specs whose model words agree with the name's.
    fn model_specs<'s>(&'s self, q: &'s Spec) -> impl Iterator<Item = &'s Spec> + 's {
        self.specs.iter().filter(move |s| match &q.truncated {
            None => model_agrees(&q.model, &s.model, self.arch.as_deref()),
            // A cut name: its whole words are the entry's, and the cut word starts one of
            // the entry's other words.
            Some(t) => {
                q.model.iter().all(|w| s.model.contains(w))
                    && s.model
                        .iter()
                        .any(|w| !q.model.contains(w) && w.starts_with(t.as_str()))
            }
        })
    }

    fn matches(&self, q: &Spec) -> bool {
        !q.model.is_empty() && self.agrees(q) && self.model_specs(q).next().is_some()
    }

    /// How many constraints the best alias that names no more than the name names
    /// (`None` when every alias names something the name does not).
    fn fit(&self, q: &Spec) -> Option<usize> {
        self.model_specs(q)
            .filter(|s| {
                s.memory_gb
                    .is_none_or(|gb| q.memory_gb.is_some_and(|m| (m - gb).abs() <= 0.08 * gb))
                    && s.forms.iter().all(|f| q.forms.contains(f))
            })
            .map(|s| usize::from(s.memory_gb.is_some()) + s.forms.len())
            .max()
    }

    /// Token similarity to a name (see the module docs).
    fn similarity(&self, q: &Spec) -> i64 {
        let words = self
            .specs
            .iter()
            .map(|s| {
                let got: i64 = q
                    .model
                    .iter()
                    .map(|w| {
                        if s.model.contains(w) {
                            6
                        } else if s.model.iter().any(|e| one_edit(e, w)) {
                            2
                        } else {
                            0
                        }
                    })
                    .sum();
                let missing = s.model.iter().filter(|e| !q.model.contains(e)).count();
                // OK because: a name has a handful of words.
                #[allow(clippy::cast_possible_wrap)]
                let missing = missing as i64;
                if got == 0 {
                    0
                } else {
                    got - missing
                }
            })
            .max()
            .unwrap_or(0);
        if words <= 0 {
            return 0;
        }
        let mem = q.memory_gb.is_some_and(|gb| self.memory_agrees(gb));
        let form = !q.forms.is_empty() && q.forms.iter().all(|f| self.forms.contains(f));
        words + i64::from(mem) + i64::from(form)
    }
}

/// Model words agree: equal as sets, up to the entry's architecture word (module docs).
fn model_agrees(q: &[String], e: &[String], arch: Option<&str>) -> bool {
    if q == e {
        return true;
    }
    let Some(a) = arch else { return false };
    let without = |v: &[String]| -> Vec<String> { v.iter().filter(|w| *w != a).cloned().collect() };
    let (q_has, e_has) = (q.iter().any(|w| w == a), e.iter().any(|w| w == a));
    match (q_has, e_has) {
        (true, false) => without(q) == e,
        (false, true) => {
            let e2 = without(e);
            let letters = e2
                .iter()
                .filter(|w| w.bytes().all(|b| b.is_ascii_alphabetic()))
                .count();
            letters >= 2 && q == e2.as_slice()
        }
        _ => false,
    }
}

/// Whether two words of the same kind (letters, digits) differ by one edit.
fn one_edit(a: &str, b: &str) -> bool {
    let digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    // Single letters are family prefixes (`H`, `V`, `A`): one apart says nothing.
    if a == b || digits(a) != digits(b) || a.len().min(b.len()) < 2 {
        return false;
    }
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    match long.len() - short.len() {
        0 => short.iter().zip(long).filter(|(x, y)| x != y).count() == 1,
        1 => {
            let p = short.iter().zip(long).take_while(|(x, y)| x == y).count();
            short[p..] == long[p + 1..]
        }
        _ => false,
    }
}

fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase()
}

/// The hint at the end of an ambiguity notice: what tells the candidates apart.
fn hint(all: &[&Gpu], forms: &[Vec<Form>]) -> &'static str {
    let mem = all
        .windows(2)
        .any(|w| (w[0].memory_marketed_gb - w[1].memory_marketed_gb).abs() > 0.5);
    let form = forms.windows(2).any(|w| w[0] != w[1]);
    match (mem, form) {
        (true, true) => "name the memory size or form factor to pick one",
        (true, false) => "name the memory size to pick one",
        (false, true) => "name the form factor to pick one",
        (false, false) => "name the exact model to pick one",
    }
}

/// Resolves `name` against `cat`'s GPUs (see the module docs).
///
/// # Errors
/// [`UnknownGpu`] with suggestions when no entry fits the name.
pub fn resolve<'a>(cat: &'a Catalog, name: &str) -> Result<GpuMatch<'a>, UnknownGpu> {
    let n = norm(name);
    if let Some(g) = cat.gpus.iter().find(|g| norm(&g.id) == n) {
        return Ok(GpuMatch {
            gpu: g,
            how: MatchKind::Id,
            others: Vec::new(),
            notice: None,
        });
    }
    let entries: Vec<Entry> = cat.gpus.iter().map(Entry::new).collect();
    let q = Spec::parse(name);
    let exact = |e: &Entry| {
        !n.is_empty() && (norm(&e.gpu.name) == n || e.gpu.aliases.iter().any(|a| norm(a) == n))
    };
    let mut cands: Vec<&Entry> = entries
        .iter()
        .filter(|e| exact(e) || e.matches(&q))
        .collect();
    if cands.is_empty() {
        let mut scored: Vec<(i64, usize, &Entry)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.similarity(&q), i, e))
            .filter(|(s, _, _)| *s > 0)
            .collect();
        crate::order::sort_by_key(&mut scored, |(s, i, _)| (-*s, *i));
        return Err(UnknownGpu {
            name: name.to_string(),
            suggestions: scored
                .into_iter()
                .take(5)
                .map(|(_, _, e)| e.gpu.id.clone())
                .collect(),
        });
    }
    if cands.len() == 1 {
        let e = cands[0];
        return Ok(GpuMatch {
            gpu: e.gpu,
            how: if exact(e) {
                MatchKind::Name
            } else {
                MatchKind::Structure
            },
            others: Vec::new(),
            notice: None,
        });
    }
    // The most common variant: exact name, then the best-fitting alias, then catalog order.
    let rank = |e: &Entry| (!exact(e), e.fit(&q).map_or(0, |f| f + 1));
    let best = cands
        .iter()
        .enumerate()
        .min_by_key(|(i, e)| {
            let (not_exact, fit) = rank(e);
            (not_exact, std::cmp::Reverse(fit), *i)
        })
        .map_or(0, |(i, _)| i);
    let chosen = cands.remove(best);
    let all: Vec<&Gpu> = std::iter::once(chosen.gpu)
        .chain(cands.iter().map(|e| e.gpu))
        .collect();
    let forms: Vec<Vec<Form>> = std::iter::once(&chosen.forms)
        .chain(cands.iter().map(|e| &e.forms))
        .cloned()
        .collect();
    let others: Vec<&Gpu> = cands.iter().map(|e| e.gpu).collect();
    let notice = format!(
        "`{}` read as {}; also: {} — {}",
        name.trim(),
        chosen.gpu.name,
        others
            .iter()
            .map(|g| g.id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        hint(&all, &forms)
    );
    Ok(GpuMatch {
        gpu: chosen.gpu,
        how: MatchKind::MostCommon,
        others,
        notice: Some(notice),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_where_letters_meet_digits_and_units_glue_or_not() {
        for (name, model, gb) in [
            ("RTX4090", vec!["4090", "rtx"], None),
            ("Gaudi3", vec!["3", "gaudi"], None),
            ("H100 80 GB", vec!["100", "h"], Some(80.0)),
            ("H100-80G", vec!["100", "h"], Some(80.0)),
            ("H100 80GiB", vec!["100", "h"], Some(80.0)),
            // 140.4 stays one number (the dot sits between digits).
            (
                "8x NVIDIA H200 (~140.4 GB)",
                vec!["200", "8", "h", "x"],
                Some(140.4),
            ),
            // nvidia-smi's MiB: 81559 / 1024 = 79.647 GiB.
            ("H100 81559MiB", vec!["100", "h"], Some(81559.0 / 1024.0)),
        ] {
            let s = Spec::parse(name);
            let want: Vec<String> = model.iter().map(|w| (*w).to_string()).collect();
            assert_eq!(s.model, want, "{name}");
            assert_eq!(s.memory_gb, gb, "{name}");
        }
    }

    #[test]
    fn memory_types_compare_by_generation() {
        assert_eq!(memory_type("hbm3e").as_deref(), Some("hbm3"));
        assert_eq!(memory_type("gddr6x").as_deref(), Some("gddr6"));
        assert_eq!(memory_type("hbm"), Some("hbm".to_string()));
        assert_eq!(memory_type("hbmx3"), None);
        assert_eq!(memory_type("gddr"), Some("gddr".to_string()));
    }

    #[test]
    fn one_edit_is_one_edit_of_the_same_kind() {
        assert!(one_edit("100", "1000"));
        assert!(one_edit("100", "200"));
        assert!(!one_edit("100", "300x"));
        assert!(!one_edit("h", "100"));
        assert!(!one_edit("h", "v"));
        assert!(!one_edit("100", "100"));
        assert!(!one_edit("100", "10000"));
    }

    #[test]
    fn noise_patterns() {
        for w in ["nvl72", "nps1", "750w", "vf", "quadro"] {
            assert!(is_noise(w), "{w}");
        }
        for w in ["nvl", "w", "h100", "max"] {
            assert!(!is_noise(w), "{w}");
        }
    }
}
