//! trajan: review coding-agent trajectories.
//!
//! Layers (see docs/ARCHITECTURE.md): [`ingest`] turns files into the [`model`]; [`store`] is the
//! only place with SQL; [`analysis`] holds pure functions over the model; `cli` is thin.

pub mod agreement;
pub mod analysis;
pub mod atif;
pub mod classify;
pub mod config;
pub mod error;
pub mod files;
pub mod ingest;
pub mod interrupt;
pub mod label;
pub mod model;
pub mod review;
pub mod sanitize;
pub mod store;
pub mod tui;
