//! # baton-cluster: many baton instances acting as one controller
//!
//! Switches connect to every instance; for each datapath exactly one
//! instance is master at any moment (OpenFlow 1.3 roles, §6.3.7), decided
//! through etcd (v3 API). The rest are slaves: their applications do not
//! serve the switch and the runtime sends it nothing that changes state.
//! Maestro §1.1 names the direction: "a cluster of controller machines
//! working as a single logical controller".
//!
//! - [`etcd`]: the etcd v3 client (its JSON gateway: keys, leases,
//!   transactions, watches).
//! - [`local_etcd`]: etcd members started on loopback for tests.
//! - [`assign`]: which member should master each datapath (rendezvous
//!   hashing with bounded loads).
//! - [`elect`]: what a member knows of the cluster and what it should do
//!   (claim, hand over, demote), with no I/O.
//! - [`lease`]: until when a member may act as master.
//! - [`member`]: a running member: its lease, its sessions and claims,
//!   the watch, and the roles it gives the runtime.
//! - [`share`]: the network views shared through etcd: each member's
//!   facts written under its lease, the others' read into the `Peers` view.
//! - [`ledger`]: the bandwidth ledger the members share, admissions as
//!   etcd transactions.
//! - [`status`]: what the operator sees of the cluster.

/// Where the cluster's keys live in etcd.
pub const PREFIX: &str = "/baton/";

/// Locks a mutex, ignoring poisoning: a panic on one cluster thread must
/// not stop the others, and the state behind these locks stays
/// consistent between statements.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub mod assign;
pub mod elect;
pub mod etcd;
pub mod lease;
pub mod ledger;
pub mod local_etcd;
pub mod member;
pub mod share;
pub mod status;
