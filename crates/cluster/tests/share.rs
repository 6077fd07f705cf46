//! The shared views' facts against a real etcd on loopback
//! ([`LocalEtcd`]): a member writes only what changed, another reads them
//! back, and a member's facts vanish with its lease.

use baton_apps::views::{Hosts, Link, PortRef, Served, SwitchNode, Topology};
use baton_cluster::PREFIX;
use baton_cluster::etcd::Etcd;
use baton_cluster::local_etcd::LocalEtcd;
use baton_cluster::share::{FACTS, FactWriter, PeerState, own_facts};
use baton_openflow::{DatapathId, PortNo};
use baton_runtime::SwitchId;
use baton_runtime::testing::port;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Switches 1..=n served here, each with a link arriving on port 1 from
/// the previous one's port 2.
fn chain(n: u64) -> Topology {
    let mut t = Topology::default();
    for d in 1..=n {
        t.switches.insert(
            DatapathId(d),
            Arc::new(SwitchNode {
                served: Served::Here(SwitchId::new(d as u32, 0)),
                dpid: DatapathId(d),
                ports: [(PortNo(1), port(1)), (PortNo(2), port(2))].into(),
            }),
        );
        if d > 1 {
            t.add_link(Link {
                src: PortRef::new(DatapathId(d - 1), PortNo(2)),
                dst: PortRef::new(DatapathId(d), PortNo(1)),
            });
        }
    }
    t
}

/// What member "b" reads of the others now.
fn read(etcd: &Etcd) -> PeerState {
    let mut b = PeerState::new("b");
    let (_, kvs) = etcd.get_prefix(&format!("{PREFIX}{FACTS}")).unwrap();
    for kv in kvs {
        b.apply(kv.key.strip_prefix(PREFIX).unwrap(), Some(&kv.value));
    }
    b
}

#[test]
fn facts_are_written_once_read_back_and_go_with_the_lease() {
    let cluster = LocalEtcd::start(1).unwrap_or_else(|e| panic!("starting etcd: {e}"));
    let etcd = Etcd::new(&cluster.endpoints(), Duration::from_secs(5));
    let lease = etcd.grant(Duration::from_secs(30)).unwrap();
    let mut writer = FactWriter::default();
    let three = chain(3);
    let facts = own_facts("a", Some(&three), Some(&Hosts::default()));
    assert_eq!(facts.len(), 5, "3 switches and 2 links");
    writer.sync(&etcd, lease, &facts).unwrap();
    assert_eq!((writer.puts, writer.deletes), (5, 0));
    let peers = read(&etcd).peers();
    let a = &peers.members[&Arc::<str>::from("a")];
    assert_eq!((a.switches.len(), a.links.len()), (3, 2));
    // The same facts again: nothing written. One switch fewer: its switch
    // and link keys deleted, nothing else.
    writer.sync(&etcd, lease, &facts).unwrap();
    assert_eq!((writer.puts, writer.deletes), (5, 0));
    let two = own_facts("a", Some(&chain(2)), None);
    writer.sync(&etcd, lease, &two).unwrap();
    assert_eq!((writer.puts, writer.deletes), (5, 2));
    assert_eq!(read(&etcd).len(), 3);
    // A new lease (the old one lost): everything again under it.
    let lease2 = etcd.grant(Duration::from_secs(30)).unwrap();
    writer.sync(&etcd, lease2, &two).unwrap();
    assert_eq!(writer.puts, 8);
    etcd.revoke(lease).unwrap();
    assert_eq!(read(&etcd).len(), 3, "held under the new lease");
    // The member goes: its facts go with its lease.
    etcd.revoke(lease2).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !read(&etcd).is_empty() {
        assert!(Instant::now() < deadline, "facts outlived their lease");
        std::thread::sleep(Duration::from_millis(50));
    }
}
