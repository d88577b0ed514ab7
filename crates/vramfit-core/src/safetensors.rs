//! Safetensors header parser (work in progress).
