//! Extracting the exact match of a frame.
