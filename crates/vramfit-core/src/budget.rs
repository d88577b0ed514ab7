//! The hardware budget: what to buy to serve a workload, ranked by total cost of ownership.
//!
//! Every catalog GPU is planned in every server platform that takes it
//! (`catalog/platforms/*.json`, [`crate::catalog::platform`]): the platform sets the node
//! size (tensor parallelism stays inside a node, pipeline stages cross nodes) and the
//! network between nodes, which carries the pipeline hand-off in the serving model
//! ([`crate::serving`]'s `stage_link`). The engine is the one the hardware runs: the asked
//! engine where the platform runs it (vLLM and SGLang on CUDA, ROCm and Gaudi, TensorRT-LLM
//! on NVIDIA only), else the platform's first modelled engine (llama.cpp on Apple silicon and
//! other parts vLLM does not serve); a platform with no modelled engine is excluded, saying so.
//!
//! An option buys whole nodes: `⌈GPUs ÷ GPUs per node⌉` nodes, each with the smallest count
//! the platform is sold with that holds its share (an 8-GPU baseboard is bought with 8 even
//! when the plan uses 2: the others are spare). Its money:
//! - purchase = GPUs × the catalog GPU price + nodes × the platform without GPUs (or nodes
//!   × the whole-system price, GPUs included) + nodes × the network per node when there is
//!   more than one node;
//! - power at load = nodes × host power + GPUs × board power (or nodes × the system's power);
//! - racks: nodes per rack is the fewest of the rack power cap ÷ node power and 42 U ÷ the
//!   node's rack units (a workstation or a system stands on a desk: no racks);
//! - energy, TCO, renting and the API, and the crossovers: [`money`].
//!
//! Constraints ([`crate::inputs::Buyer`]): a power cap (total and per rack), a budget cap,
//! on-prem only, and a GPU vendor; an option that breaks one, misses the speed targets, or
//! cannot be priced is kept, `excluded`, with the reasons. Options are ranked: kept before
//! excluded, then by TCO (unpriced last), then by purchase.

pub mod money;
mod options;
mod rows;

pub use money::{Money, Monthly, Terms, Unit, HOURS_PER_MONTH, HOURS_PER_YEAR};
pub use options::{age_months, budget, month_of, Budget, BuyOption};
pub use rows::{cheapest, CostRow};
