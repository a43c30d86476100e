//! Synthetic trajectory generator for benchmarks.
