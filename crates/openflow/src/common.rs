//! A version-independent view of the hot messages.
