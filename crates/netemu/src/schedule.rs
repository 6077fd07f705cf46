//! Link and switch events on a schedule (issue 55, part 2:
//! `--events 'at 10s cut s3-s7; at 12s restore s3-s7; at 20s kill s5'`).
//!
//! A schedule is items separated by `;` or new lines, each
//! `at TIME ACTION TARGET`:
//! - `cut a-b` takes every link between switches `a` and `b` down (both
//!   ports report it to the controller; frames on the link are lost);
//!   `cut a:2-b:1` only the link between those ports;
//! - `restore a-b` (or `a:2-b:1`) brings them up again;
//! - `kill a` closes switch `a`'s connection to the controller and takes
//!   the far end of each of its links down; a killed switch stays dead.
//!
//! Times (`10s`, `500ms`, `1.5s`, `250us`) count from the moment traffic
//! starts (every switch connected, then the warm-up), so one schedule
//! fits a topology of any size. [`Schedule::parse`] checks the syntax;
//! [`Schedule::resolve`] checks the names against a [`Graph`].

use crate::error::{Error, Result};
use crate::graph::{Graph, LinkId, SwitchId};
use std::time::Duration;

/// A duration as written: a number (decimals allowed) and a unit, `s`,
/// `ms`, `us` or `ns`, with nothing between them.
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is no duration: a number, then s, ms, us or ns"))?;
    let nanos_per_unit = match unit {
        "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "" => return Err(format!("`{text}` has no unit: s, ms, us or ns")),
        other => return Err(format!("`{text}`: unit `{other}` is none of s, ms, us, ns")),
    };
    // In whole nanoseconds, so `250us` is exactly 250 µs.
    let nanos = (value * nanos_per_unit).round();
    if !(0.0..1e18).contains(&nanos) {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// One end of a link as a schedule names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The switch's name.
    pub switch: String,
    /// The port, if given.
    pub port: Option<u16>,
}

/// What an item does, with the names as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Take links down.
    Cut(Named, Named),
    /// Bring links up.
    Restore(Named, Named),
    /// Disconnect a switch for good.
    Kill(String),
}

/// One item of a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// When, from the start of traffic.
    pub at: Duration,
    /// What.
    pub action: Action,
    /// The item as written (for reports).
    pub text: String,
}

/// A parsed schedule, in time order (items at the same time in the order
/// written).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Schedule {
    /// The items.
    pub items: Vec<Item>,
}

/// An item whose names were found in the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Take these links down.
    Cut(Vec<LinkId>),
    /// Bring these links up.
    Restore(Vec<LinkId>),
    /// Disconnect this switch.
    Kill(SwitchId),
}

/// A resolved item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// When, from the start of traffic.
    pub at: Duration,
    /// What.
    pub change: Change,
    /// The item as written.
    pub text: String,
}

fn named(text: &str) -> std::result::Result<Named, String> {
    match text.split_once(':') {
        Some((s, p)) => Ok(Named {
            switch: s.to_string(),
            port: Some(
                p.parse()
                    .map_err(|_| format!("`{p}` in `{text}` is no port number"))?,
            ),
        }),
        None => Ok(Named {
            switch: text.to_string(),
            port: None,
        }),
    }
}

fn link(text: &str) -> std::result::Result<(Named, Named), String> {
    let (a, b) = text
        .split_once('-')
        .ok_or_else(|| format!("`{text}` is no link: `a-b` or `a:port-b:port`"))?;
    if a.is_empty() || b.is_empty() || b.contains('-') {
        return Err(format!("`{text}` is no link: `a-b` or `a:port-b:port`"));
    }
    Ok((named(a)?, named(b)?))
}

impl Schedule {
    /// Parses a schedule (see the module doc); the error names the item
    /// and what is wrong with it.
    pub fn parse(text: &str) -> Result<Schedule> {
        let mut items = Vec::new();
        let pieces = text.split([';', '\n']).map(str::trim);
        for (n, piece) in pieces.filter(|p| !p.is_empty()).enumerate() {
            let bad = |m: String| Error::Schedule(format!("item {} (`{piece}`): {m}", n + 1));
            let words: Vec<&str> = piece.split_whitespace().collect();
            let [at, time, verb, target] = words[..] else {
                return Err(bad(
                    "expected `at TIME cut|restore A-B` or `at TIME kill A`".into(),
                ));
            };
            if at != "at" {
                return Err(bad(format!("starts with `{at}`, not `at`")));
            }
            let at = parse_duration(time).map_err(bad)?;
            let action = match verb {
                "cut" => {
                    let (a, b) = link(target).map_err(bad)?;
                    Action::Cut(a, b)
                }
                "restore" => {
                    let (a, b) = link(target).map_err(bad)?;
                    Action::Restore(a, b)
                }
                "kill" => {
                    if target.contains(['-', ':']) {
                        return Err(bad(format!("`kill` takes one switch, not `{target}`")));
                    }
                    Action::Kill(target.to_string())
                }
                other => {
                    return Err(bad(format!("`{other}` is none of cut, restore, kill")));
                }
            };
            items.push(Item {
                at,
                action,
                text: piece.to_string(),
            });
        }
        items.sort_by_key(|i| i.at);
        Ok(Schedule { items })
    }

    /// The items with their switches and links found in `g`: a name that
    /// is no switch, a link that does not exist, or a port that is not on
    /// it is an error.
    pub fn resolve(&self, g: &Graph) -> Result<Vec<Planned>> {
        let adj = g.adjacency();
        let switch = |item: &Item, name: &str| {
            g.switch_named(name).ok_or_else(|| {
                Error::Schedule(format!("`{}`: no switch is called `{name}`", item.text))
            })
        };
        let links = |item: &Item, a: &Named, b: &Named| -> Result<Vec<LinkId>> {
            let (sa, sb) = (switch(item, &a.switch)?, switch(item, &b.switch)?);
            let found: Vec<LinkId> = adj[sa.0 as usize]
                .iter()
                .filter(|&&(id, port, peer)| {
                    let l = g.links()[id.0 as usize];
                    let far = if l.a.switch == sa && l.a.port == port {
                        l.b.port
                    } else {
                        l.a.port
                    };
                    peer == sb
                        && a.port.is_none_or(|p| p == port)
                        && b.port.is_none_or(|p| p == far)
                })
                .map(|&(id, _, _)| id)
                .collect();
            if found.is_empty() {
                return Err(Error::Schedule(format!(
                    "`{}`: there is no such link between `{}` and `{}`",
                    item.text, a.switch, b.switch
                )));
            }
            Ok(found)
        };
        self.items
            .iter()
            .map(|item| -> Result<Planned> {
                let change = match &item.action {
                    Action::Cut(a, b) => Change::Cut(links(item, a, b)?),
                    Action::Restore(a, b) => Change::Restore(links(item, a, b)?),
                    Action::Kill(s) => Change::Kill(switch(item, s)?),
                };
                Ok(Planned {
                    at: item.at,
                    change,
                    text: item.text.clone(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str, port: Option<u16>) -> Named {
        Named {
            switch: s.into(),
            port,
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0ns"), Ok(Duration::ZERO));
        for (bad, want) in [
            ("10", "no unit"),
            ("ms", "no duration"),
            ("1..2s", "no duration"),
            ("-1s", "no duration"),
            ("3parsecs", "unit `parsecs`"),
            ("1e300s", "unit `e300s`"),
            ("9999999999s", "out of range"),
        ] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: `{want}` not in `{e}`");
        }
    }

    #[test]
    fn the_issues_example_parses_in_time_order() {
        let s = Schedule::parse("at 20s kill s5; at 10s cut s3-s7;\n at 12s restore s3:2-s7:1")
            .unwrap();
        let got: Vec<(Duration, Action)> =
            s.items.iter().map(|i| (i.at, i.action.clone())).collect();
        assert_eq!(
            got,
            [
                (
                    Duration::from_secs(10),
                    Action::Cut(n("s3", None), n("s7", None))
                ),
                (
                    Duration::from_secs(12),
                    Action::Restore(n("s3", Some(2)), n("s7", Some(1)))
                ),
                (Duration::from_secs(20), Action::Kill("s5".into())),
            ]
        );
        assert_eq!(s.items[2].text, "at 20s kill s5");
        assert!(Schedule::parse("  ;\n").unwrap().items.is_empty());
    }

    #[test]
    fn bad_items_are_named() {
        for (text, want) in [
            (
                "at 1s cut s1-s2; at 2s cut",
                "item 2 (`at 2s cut`): expected",
            ),
            ("on 1s kill s1", "starts with `on`"),
            ("at 1x kill s1", "unit `x`"),
            (
                "at 1s explode s1",
                "`explode` is none of cut, restore, kill",
            ),
            ("at 1s cut s1", "`s1` is no link"),
            ("at 1s cut s1-s2-s3", "is no link"),
            ("at 1s cut -s2", "is no link"),
            ("at 1s cut s1:x-s2", "`x` in `s1:x` is no port number"),
            ("at 1s kill s1-s2", "takes one switch"),
            ("at 1s kill s1 now", "expected"),
        ] {
            let e = Schedule::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: `{want}` not in `{e}`");
        }
    }

    #[test]
    fn resolution_finds_links_and_refuses_unknown_names() {
        // netlab's linear:3: s1 port 3 - s2 port 2, s2 port 3 - s3 port 2.
        let g = Graph::named("linear:3").unwrap();
        let s = Schedule::parse("at 1s cut s2-s1; at 2s restore s2:3-s3:2; at 3s kill s3").unwrap();
        let plan = s.resolve(&g).unwrap();
        assert_eq!(plan[0].change, Change::Cut(vec![LinkId(0)]));
        assert_eq!(plan[1].change, Change::Restore(vec![LinkId(1)]));
        assert_eq!(plan[2].change, Change::Kill(SwitchId(2)));
        for (text, want) in [
            ("at 1s kill s9", "no switch is called `s9`"),
            ("at 1s cut s1-s3", "no such link"),
            ("at 1s cut s1:2-s2:2", "no such link"),
        ] {
            let e = Schedule::parse(text)
                .unwrap()
                .resolve(&g)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: `{want}` not in `{e}`");
        }
    }
}
