//! [`Settings`]: an application's settings that the operator may change
//! while it runs (`App::settings` and `App::configure`), from the
//! configuration file at start or from the API later.
//!
//! Each application keeps one serde struct of settings behind an
//! `ArcSwap`: the packet path reads the current one with one atomic load
//! and no lock, and a change builds the next struct whole, checks it, and
//! swaps it in, so a reader never sees half of a change.

use arc_swap::{ArcSwap, Guard};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// What an application's settings struct offers: serde both ways (the
/// JSON keys are the settings' names) and a check of the values together.
pub trait AppSettings: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {
    /// Whether these values make sense together; the error names the key.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The current settings of an application.
pub struct Settings<C> {
    current: ArcSwap<C>,
}

impl<C: AppSettings> Settings<C> {
    /// Starts from `initial` (not checked: the application's own defaults
    /// or values built in code).
    pub fn new(initial: C) -> Settings<C> {
        Settings {
            current: ArcSwap::from_pointee(initial),
        }
    }

    /// The settings now, for as long as the guard is held.
    pub fn get(&self) -> Guard<Arc<C>> {
        self.current.load()
    }

    /// The settings now, as a JSON object.
    pub fn json(&self) -> Value {
        serde_json::to_value(&**self.current.load()).unwrap_or(Value::Null)
    }

    /// Applies `changes`, a JSON object of some of the settings' keys: all
    /// of them, or none with an error that names the key and what was
    /// expected.
    pub fn merge(&self, changes: &Value) -> Result<(), String> {
        let Value::Object(changes) = changes else {
            return Err(format!("settings must be an object, not {changes}"));
        };
        let Value::Object(mut next) = self.json() else {
            return Err("the settings are not an object".to_string());
        };
        for (key, value) in changes {
            if !next.contains_key(key) {
                let known: Vec<&str> = next.keys().map(String::as_str).collect();
                return Err(format!(
                    "unknown setting {key:?}; the settings are: {}",
                    known.join(", ")
                ));
            }
            next.insert(key.clone(), value.clone());
        }
        let next: C = serde_path_to_error::deserialize(Value::Object(next))
            .map_err(|e| format!("setting {:?}: {}", e.path().to_string(), e.inner()))?;
        next.check()?;
        self.current.store(Arc::new(next));
        Ok(())
    }
}

/// Durations written as whole milliseconds (`#[serde(with = ...)]`), so
/// that a setting reads `probe_interval_ms = 5000` in TOML and JSON.
pub mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Writes `d` in milliseconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis().try_into().unwrap_or(u64::MAX))
    }

    /// Reads milliseconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::time::Duration;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Example {
        timeout: u16,
        #[serde(rename = "period_ms", with = "millis")]
        period: Duration,
        enabled: bool,
    }

    impl AppSettings for Example {
        fn check(&self) -> Result<(), String> {
            if self.period.is_zero() {
                return Err("setting \"period_ms\": must be at least 1".to_string());
            }
            Ok(())
        }
    }

    fn example() -> Settings<Example> {
        Settings::new(Example {
            timeout: 10,
            period: Duration::from_secs(5),
            enabled: true,
        })
    }

    #[test]
    fn writes_durations_in_milliseconds() {
        assert_eq!(
            example().json(),
            json!({"timeout": 10, "period_ms": 5000, "enabled": true})
        );
    }

    #[test]
    fn a_change_of_some_keys_keeps_the_others() {
        let s = example();
        s.merge(&json!({"timeout": 30, "period_ms": 250})).unwrap();
        let now = s.get();
        assert_eq!(now.timeout, 30);
        assert_eq!(now.period, Duration::from_millis(250));
        assert!(now.enabled);
    }

    #[test]
    fn errors_name_the_key_and_change_nothing() {
        let s = example();
        let before = s.json();
        let e = s.merge(&json!({"timeout": 70000})).unwrap_err();
        assert!(e.contains("\"timeout\"") && e.contains("u16"), "{e}");
        let e = s.merge(&json!({"enabled": "yes"})).unwrap_err();
        assert!(e.contains("\"enabled\"") && e.contains("boolean"), "{e}");
        let e = s.merge(&json!({"timout": 3})).unwrap_err();
        assert!(e.contains("\"timout\"") && e.contains("timeout"), "{e}");
        let e = s.merge(&json!({"timeout": 5, "period_ms": 0})).unwrap_err();
        assert!(e.contains("period_ms"), "{e}");
        let e = s.merge(&json!([1, 2])).unwrap_err();
        assert!(e.contains("object"), "{e}");
        assert_eq!(s.json(), before);
    }
}
