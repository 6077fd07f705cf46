//! The forwarding path allocates nothing per packet once warmed up: frames
//! through 1.0 flows with rewrites, through a 1.3 pipeline with
//! goto-table, the action set, a select group and an all group, through
//! MPLS push, set, decrement and pop, and through PBB push, set and pop
//! are counted by an allocator that counts the allocations of the thread
//! that forwards: the test harness's main thread allocates while the test
//! runs (its table of running tests), and counting it made the test fail
//! about one run in ten.

use baton_openflow::Version;
use baton_openflow::types::{BufferId, Cookie, MacAddr, PortNo};
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::oxm::{Match13, Oxm};
use baton_openflow::{v10, v13};
use baton_switch::inproc::Network;
use baton_switch::testutil::{tcp_frame, udp_frame};
use baton_switch::{Config, PortSpec, Switch};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    // `try_with`: the thread-local may be gone while a thread exits.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator unchanged, only counting (an
// atomic and a const-initialised thread-local `Cell`, neither allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note();
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note();
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note();
        // SAFETY: as for `realloc` itself.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Installs flows through a controller connection, then takes the switch.
fn configured(version: Version, msgs: Vec<Vec<u8>>) -> Switch {
    let now = Instant::now();
    let mut sw = Switch::new(Config::new(1, version), now);
    for i in 1..=4 {
        sw.add_port(PortSpec::named(format!("p{i}"), i), now);
    }
    let mut net = Network::new(now);
    let id = net.add_switch(sw);
    let c = net.connect(id);
    let mut b = Vec::new();
    baton_openflow::hello::Hello::baton().encode(version, baton_openflow::types::Xid(1), &mut b);
    for m in msgs {
        b.extend(m);
    }
    net.send(c, &b);
    let out = net.recv(c);
    // Only the HELLO came back: no errors.
    assert_eq!(
        baton_openflow::frame(&out).unwrap(),
        Some(out.len()),
        "{out:02x?}"
    );
    net.disconnect(c);
    // Take the switch back out of the network.
    let mut sw2 = Switch::new(Config::new(1, version), now);
    std::mem::swap(net.switch_mut(id), &mut sw2);
    sw2
}

fn count(sw: &mut Switch, frames: &[Vec<u8>]) -> usize {
    let now = Instant::now();
    let mut bytes = 0usize;
    let mut tx = |_: PortNo, f: &[u8]| bytes += f.len();
    for _ in 0..3 {
        for f in frames {
            sw.receive(now, PortNo(1), f, &mut tx);
        }
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    for _ in 0..200 {
        for f in frames {
            sw.receive(now, PortNo(1), f, &mut tx);
        }
    }
    COUNTING.with(|c| c.set(false));
    let n = ALLOCS.load(Ordering::Relaxed) - before;
    assert!(bytes > 0);
    n
}

fn enc10(m: v10::Message) -> Vec<u8> {
    let mut b = Vec::new();
    m.encode(baton_openflow::types::Xid(2), &mut b);
    b
}

fn enc13(m: v13::Message) -> Vec<u8> {
    let mut b = Vec::new();
    m.encode(baton_openflow::types::Xid(2), &mut b);
    b
}

#[test]
fn forwarding_allocates_nothing_per_packet() {
    let fm = v10::FlowMod {
        match_: v10::Match10::ALL,
        cookie: Cookie(0),
        command: v10::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 1,
        buffer_id: BufferId::NONE,
        out_port: PortNo::ANY,
        flags: 0,
        actions: vec![
            v10::Action::SetDlDst(MacAddr([2, 0, 0, 0, 0, 9])),
            v10::Action::SetVlanVid(5),
            v10::Action::Output {
                port: PortNo(2),
                max_len: 0,
            },
            v10::Action::Output {
                port: PortNo::FLOOD,
                max_len: 0,
            },
        ],
    };
    let mut sw = configured(Version::V10, vec![enc10(v10::Message::FlowMod(fm))]);
    let frames: Vec<_> = (0..32)
        .map(|i| udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 1, i], 53))
        .collect();
    assert_eq!(count(&mut sw, &frames), 0, "1.0 forwarding allocated");

    let out = |p| v13::Action::Output {
        port: PortNo(p),
        max_len: 0,
    };
    let bucket = |p| v13::Bucket {
        weight: 1,
        watch_port: PortNo::ANY,
        watch_group: group_id::ANY,
        actions: vec![out(p)],
    };
    let group = |id, t, buckets| {
        enc13(v13::Message::GroupMod(v13::GroupMod {
            command: v13::GroupModCommand::Add,
            group_type: t,
            group_id: id,
            buckets,
        }))
    };
    let flow = |table, fields, inst| {
        enc13(v13::Message::FlowMod(v13::FlowMod::from_parts(
            v13::FlowModHead {
                table_id: table,
                ..Default::default()
            },
            Match13 { fields },
            inst,
        )))
    };
    let mut all = bucket(3);
    all.weight = 0;
    let mut all2 = bucket(4);
    all2.weight = 0;
    let msgs = vec![
        group(1, v13::GroupType::Select, vec![bucket(2), bucket(3)]),
        group(2, v13::GroupType::All, vec![all, all2]),
        flow(
            0,
            vec![Oxm::EthType(0x0800)],
            vec![
                v13::Instruction::ApplyActions(vec![v13::Action::SetField(Oxm::Ipv4Dst {
                    value: [10, 1, 1, 1].into(),
                    mask: None,
                })]),
                v13::Instruction::WriteMetadata {
                    metadata: 1,
                    mask: 1,
                },
                v13::Instruction::WriteActions(vec![v13::Action::Group(2)]),
                v13::Instruction::GotoTable(1),
            ],
        ),
        flow(
            1,
            vec![Oxm::Metadata {
                value: 1,
                mask: None,
            }],
            vec![v13::Instruction::ApplyActions(vec![
                v13::Action::PushVlan(0x8100),
                v13::Action::Group(1),
            ])],
        ),
    ];
    let mut sw = configured(Version::V13, msgs);
    let frames: Vec<_> = (0..32)
        .map(|i| tcp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 1, 2], 1000 + i, 80))
        .collect();
    assert_eq!(count(&mut sw, &frames), 0, "1.3 pipeline allocated");

    // MPLS: push, set, decrement and copy the TTL in, and set the tunnel
    // id, in table 0; match the label and tunnel id, copy the TTL out and
    // pop in table 1 (each push and pop re-keys the packet).
    let msgs = vec![
        flow(
            0,
            vec![Oxm::EthType(0x0800)],
            vec![
                v13::Instruction::ApplyActions(vec![
                    v13::Action::PushMpls(0x8847),
                    v13::Action::SetField(Oxm::MplsLabel(5)),
                    v13::Action::DecMplsTtl,
                    v13::Action::CopyTtlIn,
                    v13::Action::SetField(Oxm::TunnelId {
                        value: 9,
                        mask: None,
                    }),
                ]),
                v13::Instruction::GotoTable(1),
            ],
        ),
        flow(
            1,
            vec![
                Oxm::EthType(0x8847),
                Oxm::MplsLabel(5),
                Oxm::TunnelId {
                    value: 9,
                    mask: Some(0xff),
                },
            ],
            vec![
                v13::Instruction::ApplyActions(vec![
                    v13::Action::CopyTtlOut,
                    v13::Action::PopMpls(0x0800),
                ]),
                v13::Instruction::WriteActions(vec![v13::Action::CopyTtlIn, out(2)]),
            ],
        ),
    ];
    let mut sw = configured(Version::V13, msgs);
    assert_eq!(count(&mut sw, &frames), 0, "1.3 MPLS pipeline allocated");

    // PBB: push and set the I-SID in table 0; match it, pop, and push
    // again from the action set in table 1 (each re-keys the packet).
    let msgs = vec![
        flow(
            0,
            vec![Oxm::EthType(0x0800)],
            vec![
                v13::Instruction::ApplyActions(vec![
                    v13::Action::PushPbb(0x88e7),
                    v13::Action::SetField(Oxm::PbbIsid {
                        value: 7,
                        mask: None,
                    }),
                ]),
                v13::Instruction::GotoTable(1),
            ],
        ),
        flow(
            1,
            vec![
                Oxm::EthType(0x88e7),
                Oxm::PbbIsid {
                    value: 7,
                    mask: Some(0xff),
                },
            ],
            vec![
                v13::Instruction::ApplyActions(vec![v13::Action::PopPbb]),
                v13::Instruction::WriteActions(vec![v13::Action::PushPbb(0x88e7), out(2)]),
            ],
        ),
    ];
    let mut sw = configured(Version::V13, msgs);
    assert_eq!(count(&mut sw, &frames), 0, "1.3 PBB pipeline allocated");
}
