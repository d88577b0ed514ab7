//! Server platforms: what GPUs are bought in (`catalog/platforms/*.json`), and the cost
//! defaults of a total cost of ownership (`catalog/tco.json`).
//!
//! A platform is an 8-GPU HGX/OAM/UBB baseboard server, a 4- or 8-GPU PCIe server, a
//! workstation, a rack sold as one unit (GB200/GB300 NVL72) or a complete system (a Mac,
//! DGX Spark, a Jetson kit). Each entry gives the GPUs it takes and how many per node, its
//! price without the GPUs (or a whole-system price), its power at load, rack units, the link
//! inside the node and the network between nodes with its cost per node, and the serving
//! engines that run on it; every price and wattage carries its source and date in the file.
//! [`crate::budget`] reads them.

use serde::Serialize;

/// What a platform is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlatformKind {
    /// An HGX/OAM/UBB baseboard server: the GPUs come on the board.
    Baseboard,
    /// A rack server with PCIe slots.
    PcieServer,
    /// A tower or desk-side machine with one to four cards.
    Workstation,
    /// A whole rack sold as one unit (NVL72).
    Rack,
    /// A complete device whose GPU is the device (Mac, DGX Spark, Jetson, mini-PC).
    System,
}

impl PlatformKind {
    /// From the file's `kind`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "baseboard" => Self::Baseboard,
            "pcie-server" => Self::PcieServer,
            "workstation" => Self::Workstation,
            "rack" => Self::Rack,
            "system" => Self::System,
            _ => return None,
        })
    }

    /// As the file writes it.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Baseboard => "baseboard",
            Self::PcieServer => "pcie-server",
            Self::Workstation => "workstation",
            Self::Rack => "rack",
            Self::System => "system",
        }
    }
}

/// A platform's price, with its kind, date and source.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlatformPrice {
    /// The server without its GPUs, USD.
    pub usd_without_gpus: Option<f64>,
    /// The whole system with `gpus_per_node` GPUs, USD (where it is only sold whole).
    pub system_usd: Option<f64>,
    /// `street`, `list` or `estimate`.
    pub kind: Option<String>,
    /// When the price was read or published.
    pub date: Option<String>,
    /// Where it comes from.
    pub source: String,
}

/// A platform's power at load.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlatformPower {
    /// The node at load without its GPUs' board power, W.
    pub host_w: Option<f64>,
    /// The whole node at load with all its GPUs, W.
    pub system_w: Option<f64>,
    /// Where it comes from.
    pub source: String,
}

/// A link: inside the node, or the network between nodes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlatformLink {
    /// `nvlink`, `pcie`, `infinity-fabric`, `infiniband`, `ethernet`, ...
    pub kind: String,
    /// e.g. "NDR 400 Gb/s, one ConnectX-7 per GPU".
    pub generation: Option<String>,
    /// Bandwidth per direction per GPU, GB/s.
    pub gb_per_s_per_direction: Option<f64>,
    /// Network cost per node (NICs, switch ports, cables), USD; inter-node links only.
    pub network_usd_per_node: Option<f64>,
    /// Where it comes from.
    pub source: String,
}

/// One server platform of the catalog.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Platform {
    /// Stable id (`hgx-h100-8gpu`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it is.
    pub kind: Option<PlatformKind>,
    /// The GPU vendor.
    pub vendor: String,
    /// Catalog GPU ids it takes.
    pub gpus: Vec<String>,
    /// GPUs in one node at most.
    pub gpus_per_node: u64,
    /// The GPU counts a node can be bought with (ascending).
    pub gpu_counts: Vec<u64>,
    /// Price.
    pub price: PlatformPrice,
    /// Power at load.
    pub power: PlatformPower,
    /// Rack units of one node.
    pub rack_units: Option<u64>,
    /// GPU-to-GPU link inside the node.
    pub intra_node_link: Option<PlatformLink>,
    /// The network between nodes.
    pub inter_node_link: Option<PlatformLink>,
    /// Engines that run on it (`vllm`, `sglang`, `trtllm`, `llama.cpp`, `mlx`).
    pub engines: Vec<String>,
    /// Whether it can be bought (false: only rented).
    pub on_prem: bool,
    /// Datasheet or vendor page, with date.
    pub source: String,
    /// Traps, derivations.
    pub notes: Option<String>,
}

impl Platform {
    /// Whether vLLM-class engines (vLLM, SGLang) run on it.
    #[must_use]
    pub fn runs_vllm(&self) -> bool {
        self.engines.iter().any(|e| e == "vllm" || e == "sglang")
    }
}

/// A default of the cost model with its source.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sourced {
    /// The value.
    pub value: f64,
    /// When it was read or published.
    pub date: Option<String>,
    /// Where it comes from.
    pub source: String,
}

/// A dated API price per token, as an example to compare with.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ApiPrice {
    /// Provider.
    pub provider: String,
    /// Catalog model id.
    pub model: String,
    /// USD per million input tokens.
    pub input_usd_per_million: f64,
    /// USD per million output tokens.
    pub output_usd_per_million: f64,
    /// When it was read.
    pub date: Option<String>,
    /// Where it comes from.
    pub source: String,
}

/// The cost model's defaults (`catalog/tco.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tco {
    /// Years of service.
    pub years: Sourced,
    /// Electricity, USD per kWh.
    pub kwh_price_usd: Sourced,
    /// Power usage effectiveness.
    pub pue: Sourced,
    /// Share of hours at the planned load.
    pub utilization: Sourced,
    /// Power while idle, as a fraction of the power at load.
    pub idle_power_fraction: Sourced,
    /// Resale value at the end, as a fraction of the purchase.
    pub resale_fraction: Sourced,
    /// Dated API prices.
    pub api_examples: Vec<ApiPrice>,
}
