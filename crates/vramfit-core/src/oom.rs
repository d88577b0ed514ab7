//! OOM error text parser (work in progress).
