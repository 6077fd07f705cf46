//! [`Settings`]: an application's settings that the operator may change
//! while it runs, from the configuration file at start or from the API
//! later ([`baton_runtime::App::settings`]).
//!
//! Each application keeps one serde struct of settings ([`AppSettings`])
//! behind an `ArcSwap`: the packet path reads the current one with one
//! atomic load and no lock, and a change builds the next struct whole,
//! checks it, and swaps it in, so a reader never sees half of a change.
//! `Settings` is the one [`Configurable`] of every application: the
//! runtime merges the operator's changes into the current JSON object
//! ([`baton_runtime::AnyApp::configure`]) and this converts it to the
//! struct, naming the key a value does not fit.
//!
//! The typed half lives here and not in the runtime because it needs
//! serde's derive and `serde_path_to_error`, which the runtime does not
//! depend on; the runtime sees only the JSON face of it.

use arc_swap::{ArcSwap, Guard};
use baton_runtime::{Configurable, SettingsError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// What an application's settings struct offers: serde both ways (the
/// JSON keys are the settings' names) and a check of the values together.
pub trait AppSettings: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {
    /// Whether these values make sense together; the error names the key
    /// ([`SettingsError::invalid`]).
    fn check(&self) -> Result<(), SettingsError> {
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

    /// Replaces the settings with `next` if it passes
    /// [`AppSettings::check`].
    pub fn set(&self, next: C) -> Result<(), SettingsError> {
        next.check()?;
        self.current.store(Arc::new(next));
        Ok(())
    }
}

impl<C: AppSettings> Configurable for Settings<C> {
    fn json(&self) -> Value {
        serde_json::to_value(&**self.current.load()).unwrap_or(Value::Null)
    }

    fn replace(&self, next: Value) -> Result<(), SettingsError> {
        let next: C = serde_path_to_error::deserialize(next)
            .map_err(|e| SettingsError::invalid(e.path().to_string(), e.inner().to_string()))?;
        self.set(next)
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
    use baton_runtime::{AnyApp, App, SwitchCtx};
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
        fn check(&self) -> Result<(), SettingsError> {
            if self.period.is_zero() {
                return Err(SettingsError::invalid("period_ms", "must be at least 1"));
            }
            Ok(())
        }
    }

    struct ExampleApp(Settings<Example>);

    impl App for ExampleApp {
        type Switch = ();
        fn name(&self) -> &str {
            "example"
        }
        fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
        fn settings(&self) -> Option<&dyn Configurable> {
            Some(&self.0)
        }
    }

    fn example() -> (Arc<ExampleApp>, AnyApp) {
        let app = Arc::new(ExampleApp(Settings::new(Example {
            timeout: 10,
            period: Duration::from_secs(5),
            enabled: true,
        })));
        (app.clone(), AnyApp::from(app))
    }

    #[test]
    fn writes_durations_in_milliseconds() {
        assert_eq!(
            example().1.settings(),
            json!({"timeout": 10, "period_ms": 5000, "enabled": true})
        );
    }

    #[test]
    fn a_change_of_some_keys_keeps_the_others() {
        let (typed, app) = example();
        app.configure(&json!({"timeout": 30, "period_ms": 250}))
            .unwrap();
        let now = typed.0.get();
        assert_eq!(now.timeout, 30);
        assert_eq!(now.period, Duration::from_millis(250));
        assert!(now.enabled);
    }

    #[test]
    fn errors_name_the_key_and_change_nothing() {
        let (typed, app) = example();
        let before = app.settings();
        let e = app.configure(&json!({"timeout": 70000})).unwrap_err();
        assert_eq!(e.key(), Some("timeout"));
        assert!(
            e.to_string().contains("\"timeout\"") && e.to_string().contains("u16"),
            "{e}"
        );
        let e = app.configure(&json!({"enabled": "yes"})).unwrap_err();
        assert!(
            e.to_string().contains("\"enabled\"") && e.to_string().contains("boolean"),
            "{e}"
        );
        let e = app.configure(&json!({"timout": 3})).unwrap_err();
        assert!(
            e.to_string().contains("\"timout\"") && e.to_string().contains("timeout"),
            "{e}"
        );
        let e = app
            .configure(&json!({"timeout": 5, "period_ms": 0}))
            .unwrap_err();
        assert_eq!(e, SettingsError::invalid("period_ms", "must be at least 1"));
        let e = app.configure(&json!([1, 2])).unwrap_err();
        assert!(e.to_string().contains("object"), "{e}");
        assert_eq!(app.settings(), before);
        let mut next = Example::clone(&typed.0.get());
        next.period = Duration::ZERO;
        assert!(typed.0.set(next).is_err());
        assert_eq!(app.settings(), before);
    }
}
