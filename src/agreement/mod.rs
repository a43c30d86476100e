//! Agreement statistics (being written).
