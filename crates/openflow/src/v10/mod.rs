//! OpenFlow 1.0.0: every message a controller sends or receives.
