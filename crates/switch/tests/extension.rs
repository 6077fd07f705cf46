//! The extension example does what it says: counts per source through the
//! packet hook, answers its experimenter request, and its extra action
//! drops a source's packets past the limit. Unknown experimenters and
//! malformed extension actions get the errors the spec names.

#[path = "../examples/counting_switch.rs"]
mod example;

use baton_openflow::Version;
use baton_openflow::types::{MacAddr, Xid};
use baton_openflow::v13::{self, Instruction, Message};
use baton_switch::inproc::Network;
use baton_switch::{Config, PortSpec, Switch};
use std::time::Instant;

#[test]
fn counts_per_source_and_limits_through_the_extra_action() {
    let (counts, delivered) = example::demo();
    assert_eq!(
        counts,
        [
            (MacAddr([2, 0, 0, 0, 0, 0xa]), 5),
            (MacAddr([2, 0, 0, 0, 0, 0xb]), 1)
        ]
    );
    // Source a: 3 of 5 pass the limit; source b: 1.
    assert_eq!(delivered, 4);
}

fn errors(bytes: &[u8]) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Ok(Some(n)) = baton_openflow::frame(rest) {
        if let Ok((
            _,
            Message::Error(v13::ErrorMsg::Standard {
                error_type, code, ..
            }),
        )) = v13::decode(&rest[..n])
        {
            out.push((u16::from(error_type), code));
        }
        rest = &rest[n..];
    }
    out
}

#[test]
fn unknown_experimenters_and_bad_extension_actions_are_refused() {
    let now = Instant::now();
    let mut sw = Switch::new(Config::new(1, Version::V13), now);
    sw.add_port(PortSpec::named("p1", 1), now);
    sw.register(Box::new(example::SourceCounter::default()))
        .unwrap();
    assert!(
        sw.register(Box::new(example::SourceCounter::default()))
            .is_err()
    );
    let mut net = Network::new(now);
    let s = net.add_switch(sw);
    let c = net.connect(s);
    let mut b = Vec::new();
    Message::Hello(baton_openflow::hello::Hello::baton()).encode(Xid(1), &mut b);
    // An experimenter nobody registered: OFPBRC_BAD_EXPERIMENTER.
    Message::Experimenter {
        experimenter: 99,
        exp_type: 1,
        data: vec![],
    }
    .encode(Xid(2), &mut b);
    // Our experimenter, an unknown type: OFPBRC_BAD_EXP_TYPE.
    Message::Experimenter {
        experimenter: example::EXPERIMENTER,
        exp_type: 9,
        data: vec![],
    }
    .encode(Xid(3), &mut b);
    // The extra action with a body of the wrong length: OFPBAC_BAD_LEN.
    let bad = v13::Action::Experimenter {
        experimenter: example::EXPERIMENTER,
        data: vec![1; 12],
    };
    let fm = v13::FlowMod::from_parts(
        v13::FlowModHead::default(),
        v13::Match13::all(),
        vec![Instruction::ApplyActions(vec![bad])],
    );
    Message::FlowMod(fm).encode(Xid(4), &mut b);
    net.send(c, &b);
    assert_eq!(errors(&net.recv(c)), [(1, 3), (1, 4), (2, 1)]);
}
