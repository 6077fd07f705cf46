//! OpenFlow 1.3.5: every message a controller sends or receives.
