//! The ingest pipeline.
