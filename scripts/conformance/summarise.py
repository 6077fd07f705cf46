#!/usr/bin/env python3
"""Summarise os-ken switch-tester logs (scripts/conformance/osken-switch-tester.sh).

Usage:
    summarise.py BATON_LOG[,BATON_LOG...] [OVS_LOG[,OVS_LOG...]]

Each argument is one log or a comma-separated list of logs of the same
target (e.g. the per-category runs baton-match.log,baton-action.log).  The
first is taken as baton's, the second (optional) as the baseline's (OVS).

Prints, per category (top-level test directory: match, action, group,
meter) and per file group (the test file's description, e.g.
"match: 03_ETH_DST"), passed/failed counts; the first target's failures
grouped by a normalised failure message with counts and examples; and,
with two targets, the tests the first fails that the second passes and vice
versa.  Tests the tester never reached (log cut short) are reported as
missing.

Artefacts of the suite and of this setup, seen with both targets (2026-11):
- "Received incorrect packet: sctp(csum=...)" after set_field on sctp_src/
  sctp_dst: os-ken 3.x/4.x computes SCTP checksums over str(bytearray)
  (a Python 3 porting bug in os_ken/lib/packet/sctp.py _checksum), so the
  expected packet carries a wrong CRC32c; a switch that writes the RFC 4960
  CRC fails.
- "it is malformed" after pop_mpls on short ICMP frames: the expected frame
  is padded to 60 bytes, the switch forwards the 56-byte frame (veths do
  not pad).
- "Receiving timeout: increment in rx_packets in tester.": the tester OVS
  counted the frame on its port 2 but sent no PACKET_IN (seen in a capture,
  CAPTURE=1), a different ~1-2 % of cases each run: flaky, not the target.
- "Received unexpected throughput" in select groups: the tester offers
  ~1.8 Mbit/s instead of 2 (packet-outs from Python on 2 cores), so a
  1000 kbit/s +-10 % bucket is at the edge.
"""

import collections
import re
import sys

RESULT = re.compile(r"^    (\S.*?)\s+(OK|ERROR)\s*$")
FILE_DESC = re.compile(r"^(match|action|group|meter)\s*:\s*(.+?)\s*$")
REPORT = re.compile(r"^(OK|ERROR)\(\d+\) / ERROR\(\d+\)|^--- Test report ---")

# OpenFlow 1.3 error types and codes (ofp_error_type and its code enums).
OFPET = {
    0: ("HELLO_FAILED", ["INCOMPATIBLE", "EPERM"]),
    1: ("BAD_REQUEST", ["BAD_VERSION", "BAD_TYPE", "BAD_MULTIPART",
                        "BAD_EXPERIMENTER", "BAD_EXP_TYPE", "EPERM", "BAD_LEN",
                        "BUFFER_EMPTY", "BUFFER_UNKNOWN", "BAD_TABLE_ID",
                        "IS_SLAVE", "BAD_PORT", "BAD_PACKET",
                        "MULTIPART_BUFFER_OVERFLOW"]),
    2: ("BAD_ACTION", ["BAD_TYPE", "BAD_LEN", "BAD_EXPERIMENTER",
                       "BAD_EXP_TYPE", "BAD_OUT_PORT", "BAD_ARGUMENT", "EPERM",
                       "TOO_MANY", "BAD_QUEUE", "BAD_OUT_GROUP",
                       "MATCH_INCONSISTENT", "UNSUPPORTED_ORDER", "BAD_TAG",
                       "BAD_SET_TYPE", "BAD_SET_LEN", "BAD_SET_ARGUMENT"]),
    3: ("BAD_INSTRUCTION", ["UNKNOWN_INST", "UNSUP_INST", "BAD_TABLE_ID",
                            "UNSUP_METADATA", "UNSUP_METADATA_MASK",
                            "BAD_EXPERIMENTER", "BAD_EXP_TYPE", "BAD_LEN",
                            "EPERM"]),
    4: ("BAD_MATCH", ["BAD_TYPE", "BAD_LEN", "BAD_TAG", "BAD_DL_ADDR_MASK",
                      "BAD_NW_ADDR_MASK", "BAD_WILDCARDS", "BAD_FIELD",
                      "BAD_VALUE", "BAD_MASK", "BAD_PREREQ", "DUP_FIELD",
                      "EPERM"]),
    5: ("FLOW_MOD_FAILED", ["UNKNOWN", "TABLE_FULL", "BAD_TABLE_ID",
                            "OVERLAP", "EPERM", "BAD_TIMEOUT", "BAD_COMMAND",
                            "BAD_FLAGS"]),
    6: ("GROUP_MOD_FAILED", ["GROUP_EXISTS", "INVALID_GROUP",
                             "WEIGHT_UNSUPPORTED", "OUT_OF_GROUPS",
                             "OUT_OF_BUCKETS", "CHAINING_UNSUPPORTED",
                             "WATCH_UNSUPPORTED", "LOOP", "UNKNOWN_GROUP",
                             "CHAINED_GROUP", "BAD_TYPE", "BAD_COMMAND",
                             "BAD_BUCKET", "BAD_WATCH", "EPERM"]),
    12: ("METER_MOD_FAILED", ["UNKNOWN", "METER_EXISTS", "INVALID_METER",
                              "UNKNOWN_METER", "BAD_COMMAND", "BAD_FLAGS",
                              "BAD_RATE", "BAD_BURST", "BAD_BAND",
                              "BAD_BAND_VALUE", "OUT_OF_METERS",
                              "OUT_OF_BANDS"]),
}


def error_name(t, c):
    name, codes = OFPET.get(t, ("type %d" % t, []))
    code = codes[c] if c < len(codes) else "code %d" % c
    return "OFPET_%s/%s" % (name, code)


def parse(path):
    """Returns an ordered dict {(file_desc, test_desc, n): (ok, message)}
    and a list of trailing notes (timeouts, crashes)."""
    results = collections.OrderedDict()
    notes = []
    file_desc = None
    seen = collections.Counter()
    last = None
    in_report = False
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("!!!"):
                notes.append(line)
                continue
            if REPORT.match(line.strip()):
                in_report = True
                continue
            if in_report:
                continue
            m = FILE_DESC.match(line)
            if m:
                file_desc = "%s: %s" % (m.group(1), m.group(2))
                last = None
                continue
            m = RESULT.match(line)
            if m and file_desc:
                desc = m.group(1)
                seen[(file_desc, desc)] += 1
                key = (file_desc, desc, seen[(file_desc, desc)])
                results[key] = (m.group(2) == "OK", "")
                last = key if m.group(2) == "ERROR" else None
                continue
            if last and line.startswith("        ") and line.strip():
                ok, msg = results[last]
                if not msg:
                    results[last] = (ok, line.strip())
                last = None
    return results, notes


def parse_many(arg):
    results = collections.OrderedDict()
    notes = []
    for p in arg.split(","):
        r, n = parse(p)
        results.update(r)
        notes.extend("%s: %s" % (p, x) for x in n)
    return results, notes


def category(key):
    return key[0].split(":", 1)[0]


def group(key):
    return key[0]


def normalise(msg):
    """A failure message without the per-case details, for grouping."""
    if not msg:
        return "(no message)"
    m = re.search(r"OFPErrorMsg\[type=0x(\w+), code=0x(\w+)\]", msg)
    if m:
        return "%s (%s)" % (msg, error_name(int(m.group(1), 16),
                                            int(m.group(2), 16)))
    if "it is malformed" in msg:
        return ("Received incorrect packet: all parsed fields equal, bytes "
                "differ (os-ken: 'it is malformed'; e.g. frame length/padding)")
    m = re.match(r"(Received incorrect packet): (.*)", msg)
    if m:
        # keep which header fields differed, drop the values
        fields = []
        for seg in re.findall(r"(?:^|/)(\w+\(.*?\))(?=/\w+\(|$)", m.group(2)):
            proto = seg.split("(", 1)[0]
            attrs = re.findall(r"(?:\(|,)(\w+)=", seg)
            fields.append("%s.%s" % (proto, "+".join(dict.fromkeys(attrs))))
        return "%s (differs in: %s)" % (m.group(1), " ".join(fields) or "?")
    m = re.match(r"(Received incorrect packet-in): (\w+)", msg)
    if m:
        return "%s: %s" % (m.group(1), m.group(2)) + (
            re.search(r"\[reason=\d+\]", msg).group(0)
            if "reason=" in msg else "")
    m = re.match(r"(Added incorrect \w+):", msg)
    if m:
        return m.group(1) + " (flow/meter/group stats differ from the mod)"
    m = re.match(r"(Received unexpected throughput):", msg)
    if m:
        return m.group(1)
    return msg


def table(title, per, order):
    print(title)
    print("  %-40s %6s %6s %6s" % ("", "total", "pass", "fail"))
    tp = tf = 0
    for k in order:
        p, f = per[k]
        tp += p
        tf += f
        print("  %-40s %6d %6d %6d" % (k, p + f, p, f))
    print("  %-40s %6d %6d %6d" % ("TOTAL", tp + tf, tp, tf))


def summary(name, results, other=None, other_name=None, groups=False):
    cats = collections.OrderedDict()
    grps = collections.OrderedDict()
    for k, (ok, _) in results.items():
        for d, key in ((cats, category(k)), (grps, group(k))):
            p, f = d.get(key, (0, 0))
            d[key] = (p + ok, f + (not ok))
    order = [c for c in ("match", "action", "group", "meter") if c in cats]
    table("== %s: per category" % name, cats, order)
    if groups:
        table("== %s: per test file" % name, grps, list(grps))
    return cats


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    a, a_notes = parse_many(argv[1])
    b, b_notes = parse_many(argv[2]) if len(argv) == 3 else (None, [])
    an = "baton"
    bn = "ovs"
    show_groups = True
    summary(an, a, groups=show_groups)
    print()
    if b is not None:
        summary(bn, b, groups=False)
        print()
    if a_notes or b_notes:
        print("== notes from the logs")
        for n in a_notes + b_notes:
            print("  " + n)
        print()

    fails = collections.OrderedDict()
    for k, (ok, msg) in a.items():
        if not ok:
            fails.setdefault(normalise(msg), []).append((k, msg))
    print("== %s failures by reason (%d)" % (an, sum(len(v) for v in fails.values())))
    for reason, items in sorted(fails.items(), key=lambda x: -len(x[1])):
        print("  [%d] %s" % (len(items), reason))
        cats = collections.Counter(category(k) for k, _ in items)
        print("       categories: %s" % ", ".join("%s %d" % c for c in cats.most_common()))
        for k, msg in items[:3]:
            print("       e.g. %s / %s" % (k[0], k[1]))
            if msg != reason:
                print("            %s" % msg[:300])
    print()

    if b is not None:
        bf = collections.Counter(normalise(msg) for ok, msg in b.values() if not ok)
        print("== %s failures by reason (%d)" % (bn, sum(bf.values())))
        for reason, n in bf.most_common():
            print("  [%d] %s" % (n, reason))
        print()
        only_a = [k for k, (ok, _) in a.items() if not ok and k in b and b[k][0]]
        only_b = [k for k, (ok, _) in b.items() if not ok and k in a and a[k][0]]
        both = [k for k, (ok, _) in a.items() if not ok and k in b and not b[k][0]]
        print("== %s fails, %s passes (%d)" % (an, bn, len(only_a)))
        for k in only_a:
            print("  %s / %s\n      %s" % (k[0], k[1], a[k][1]))
        print()
        print("== %s fails, %s passes (%d)" % (bn, an, len(only_b)))
        for k in only_b:
            print("  %s / %s\n      %s" % (k[0], k[1], b[k][1]))
        print()
        print("== both fail (%d)" % len(both))
        for k in both:
            print("  %s / %s\n      %s: %s\n      %s: %s" % (k[0], k[1], an, a[k][1], bn, b[k][1]))
        missing_a = [k for k in b if k not in a]
        missing_b = [k for k in a if k not in b]
        if missing_a or missing_b:
            print()
            print("== not run: %d in %s's logs, %d in %s's logs"
                  % (len(missing_a), an, len(missing_b), bn))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
