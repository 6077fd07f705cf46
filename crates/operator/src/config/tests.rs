use super::*;

fn file(text: &str) -> Result<Settings, ConfigError> {
    let source = Source::File("baton.toml".into());
    let layer = parse(text, source.clone())?;
    Layer::default().over(layer, source).resolve()
}

fn error(text: &str) -> String {
    file(text).unwrap_err().to_string()
}

#[test]
fn the_example_in_the_repository_loads() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/baton.toml"
    ));
    let s = check_file(path).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = s.apps.iter().map(|a| a.name()).collect();
    assert_eq!(names, ["topology", "devices", "routing"]);
    assert_eq!(s.apps[0].settings()["probe_interval_ms"], 2000);
    assert_eq!(s.runtime.scheduler, SchedulerKind::Fair);
    assert_eq!(s.runtime.bdu, Duration::from_millis(1));
    assert_eq!(
        (s.runtime.echo_interval, s.runtime.echo_timeout),
        (Duration::from_secs(5), Duration::from_secs(15))
    );
    assert_eq!(s.stats_interval, Duration::ZERO);
    assert_eq!(s.runtime.weights, [(DatapathId(0xa), 4)]);
    assert_eq!(s.log.as_deref(), Some("info"));
    let api = s.api.unwrap();
    assert_eq!(api.addr, "127.0.0.1:8080".parse().unwrap());
    assert!(s.tls.is_none());
}

#[test]
fn an_empty_file_is_the_defaults() {
    let s = file("").unwrap();
    let d = Config::default();
    assert_eq!((s.runtime.listen, s.runtime.workers), (d.listen, d.workers));
    let names: Vec<&str> = s.apps.iter().map(|a| a.name()).collect();
    assert_eq!(names, ["topology", "devices", "routing"]);
    assert_eq!(s.api.unwrap().addr, ApiOptions::default().addr);
}

#[test]
fn every_error_names_the_file_the_line_and_the_key() {
    for (text, want) in [
        (
            "wokers = 3",
            "baton.toml:1:1: key `wokers`: unknown field `wokers`, expected one of",
        ),
        (
            "workers = \"many\"",
            "baton.toml:1:11: key `workers`: invalid type",
        ),
        (
            "\nscheduler = \"fifo\"",
            "baton.toml:2:13: key `scheduler`: unknown scheduler \"fifo\"",
        ),
        (
            "bdu_us = \"1ms\"",
            "baton.toml:1:10: key `bdu_us`: invalid type: string \"1ms\", expected u64",
        ),
        (
            "echo_timeout_ms = -1",
            "key `echo_timeout_ms`: invalid value: integer `-1`, expected u64",
        ),
        (
            "listen = [\"0.0.0.0\"]",
            "key `listen[0]`: bad address \"0.0.0.0\": expected ADDR:PORT",
        ),
        (
            "[api]\nlisten = \"everywhere\"",
            "baton.toml:2:10: key `api.listen`: bad API address",
        ),
        ("[api]\ntokn = \"x\"", "unknown field `tokn`"),
        ("[weights]\n\"zz\" = 2", "bad datapath id"),
        ("workers = 2\nworkers = 3", "baton.toml:2:1"),
        ("[tls]\ncert = 3", "key `tls.cert`: invalid type"),
        (
            "log = \"info,baton_runtime=loud\"",
            "baton.toml:1:7: key `log`: bad log filter",
        ),
    ] {
        let got = error(text);
        assert!(got.contains(want), "{text:?}: {got:?} lacks {want:?}");
        assert!(got.starts_with("baton.toml"), "{got}");
    }
}

#[test]
fn keys_checked_together_are_named() {
    for (text, want) in [
        ("workers = 0", "key `workers`: at least 1"),
        (
            "bdu_us = 5",
            "key `bdu_us`: 5 is out of range: 10 to 1000000 microseconds",
        ),
        ("bdu_us = 2000000", "key `bdu_us`: 2000000 is out of range"),
        ("echo_interval_ms = 0", "key `echo_interval_ms`: at least 1"),
        (
            "echo_timeout_ms = 15",
            "key `echo_timeout_ms`: echo_timeout_ms (15 ms) must be longer than echo_interval_ms (5000 ms)",
        ),
        (
            "echo_interval_ms = 20000",
            "key `echo_interval_ms`: echo_timeout_ms (15000 ms) must be longer",
        ),
        (
            "apps = [\"hub\", \"lerning-switch\"]",
            "key `apps`: unknown application \"lerning-switch\"",
        ),
        (
            "apps = [\"hub\", \"hub\"]",
            "key `apps`: \"hub\" is listed twice",
        ),
        (
            "apps = [\"hub\"]\n[app.topology]\nprobe_interval_ms = 1",
            "key `app.topology`: settings for an application that is not run",
        ),
        (
            "apps = [\"topology\"]\n[app.topology]\nprobe_interval_ms = \"soon\"",
            "key `app.topology`: setting \"probe_interval_ms\"",
        ),
        (
            "apps = [\"topology\"]\n[app.topology]\nprobe_intervall_ms = 5",
            "key `app.topology`: unknown setting \"probe_intervall_ms\"",
        ),
        (
            "[weights]\n\"00:00:00:00:00:00:00:01\" = 0",
            "key `weights.00:00:00:00:00:00:00:01`: weight 0 is out of range",
        ),
        (
            "[api]\nlisten = \"0.0.0.0:8080\"",
            "key `api.listen`: the API would listen on 0.0.0.0:8080",
        ),
        (
            "[api]\ntoken = \"a b\"",
            "key `api.token`: the API token must be printable",
        ),
        (
            "[api]\ntoken_file = \"/nonexistent/token\"",
            "key `api.token_file`: cannot read /nonexistent/token",
        ),
        (
            "[tls]\ncert = \"c.pem\"",
            "key `listen_tls`: the [tls] files are given",
        ),
        (
            "listen_tls = [\"0.0.0.0:6654\"]",
            "key `tls.cert`: listen_tls needs a certificate",
        ),
        (
            "listen_tls = [\"0.0.0.0:6654\"]\n[tls]\ncert = \"/nonexistent/c.pem\"\nkey = \"k.pem\"",
            "key `tls.cert`: cannot read /nonexistent/c.pem",
        ),
    ] {
        let got = error(text);
        assert!(got.starts_with("baton.toml: key"), "{text:?}: {got}");
        assert!(got.contains(want), "{text:?}: {got:?} lacks {want:?}");
    }
}

#[test]
fn the_command_line_wins_key_by_key_and_is_named_in_errors() {
    let source = Source::File("baton.toml".into());
    let file = parse(
        "workers = 3\nbdu_us = 2000\napps = [\"topology\"]\n[weights]\n1 = 2\n2 = 3\n[app.topology]\nprobe_interval_ms = 700",
        source.clone(),
    )
    .unwrap();
    let flags = Layer {
        workers: Some(5),
        weights: [(Parsed(DatapathId(2)), 9)].into_iter().collect(),
        ..Layer::default()
    };
    let s = flags
        .clone()
        .over(file.clone(), source.clone())
        .resolve()
        .unwrap();
    assert_eq!(s.runtime.workers, 5);
    assert_eq!(s.runtime.bdu, Duration::from_millis(2));
    assert_eq!(s.runtime.weights, [(DatapathId(1), 2), (DatapathId(2), 9)]);
    assert_eq!(s.apps[0].settings()["probe_interval_ms"], 700);
    // A flag that makes the file's app settings stray is named as a flag.
    let flags = Layer {
        apps: Some(vec!["hub".into()]),
        ..Layer::default()
    };
    let e = flags.over(file, source).resolve().unwrap_err();
    assert_eq!(e.source, Source::CommandLine);
    assert_eq!(e.key, "app.topology");
    // Flags alone.
    let e = Sourced::flags(Layer {
        api: ApiLayer {
            listen: Some(Parsed("10.0.0.1:80".parse().unwrap())),
            ..ApiLayer::default()
        },
        ..Layer::default()
    })
    .resolve()
    .unwrap_err();
    assert!(
        e.to_string().starts_with("command line: key `api.listen`"),
        "{e}"
    );
}

#[test]
fn a_token_from_a_file_allows_any_address_and_tls_files_are_carried() {
    let dir = std::env::temp_dir().join(format!("baton-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = dir.join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let cert = dir.join("cert.pem");
    std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\n").unwrap();
    let text = format!(
        "listen_tls = [\"127.0.0.1:6654\"]\n[api]\nlisten = \"0.0.0.0:8080\"\ntoken_file = {token:?}\n[tls]\ncert = {cert:?}\nkey = {cert:?}\n"
    );
    let s = file(&text).unwrap();
    let api = s.api.unwrap();
    assert_eq!(api.token.unwrap().secret(), "s3cret");
    let tls = s.tls.unwrap();
    assert_eq!((tls.cert, tls.client_ca), (cert, None));
    // listen_tls alone: TLS only, no plain TCP on the default address.
    assert!(s.runtime.listen.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
    let off = file("[api]\nlisten = \"off\"").unwrap();
    assert!(off.api.is_none());
}

#[test]
fn every_duration_is_an_integer_named_for_its_unit() {
    let s = file(
        "bdu_us = 250\necho_interval_ms = 1500\necho_timeout_ms = 4000\nstats_interval_ms = 10000",
    )
    .unwrap();
    assert_eq!(s.runtime.bdu, Duration::from_micros(250));
    assert_eq!(s.runtime.echo_interval, Duration::from_millis(1500));
    assert_eq!(s.runtime.echo_timeout, Duration::from_millis(4000));
    assert_eq!(s.stats_interval, Duration::from_secs(10));
    // A flag over the file: --bdu-us 40.
    let source = Source::File("baton.toml".into());
    let layer = parse("bdu_us = 250", source.clone()).unwrap();
    let flags = Layer {
        bdu_us: Some(40),
        ..Layer::default()
    };
    let s = flags.over(layer, source).resolve().unwrap();
    assert_eq!(s.runtime.bdu, Duration::from_micros(40));
}

#[test]
fn a_duration_key_from_before_the_units_says_what_it_became() {
    for (text, want) in [
        (
            "bdu = \"1ms\"",
            "baton.toml:1:1: key `bdu`: renamed to `bdu_us`, microseconds as an integer, e.g. bdu_us = 1000",
        ),
        (
            "workers = 2\nbdu = \"250us\"",
            "baton.toml:2:1: key `bdu`: renamed to `bdu_us`, microseconds as an integer, e.g. bdu_us = 250",
        ),
        (
            "echo_interval = \"2s\"",
            "baton.toml:1:1: key `echo_interval`: renamed to `echo_interval_ms`, milliseconds as an integer, e.g. echo_interval_ms = 2000",
        ),
        (
            "echo_timeout = \"soon\"",
            "baton.toml:1:1: key `echo_timeout`: renamed to `echo_timeout_ms`, milliseconds as an integer, e.g. echo_timeout_ms = 15000",
        ),
        (
            // Not a whole number of milliseconds: the default as the example.
            "stats_interval = \"1.5us\"",
            "baton.toml:1:1: key `stats_interval`: renamed to `stats_interval_ms`, milliseconds as an integer, e.g. stats_interval_ms = 0",
        ),
    ] {
        let got = error(text);
        assert!(got.starts_with(want), "{text:?}: {got:?} is not {want:?}");
    }
}

#[test]
fn a_declared_dag_is_built_from_the_stages_the_applications_offer() {
    let s = file(
        r#"
[dag.routing]
apps = ["routes", "route-flow"]
edges = [["routes", "route-flow"]]
every_ms = 500
"#,
    )
    .unwrap();
    assert_eq!(s.dags.len(), 1);
    let d = &s.dags[0];
    assert_eq!(d.name(), "routing");
    assert_eq!(
        *d.trigger(),
        baton_runtime::dag::Trigger::Every(Duration::from_millis(500))
    );
    assert_eq!(d.status().stages, [vec!["routes"], vec!["route-flow"]]);
    let views = file(
        r#"
[dag.paths]
apps = ["routes"]
views = ["topology"]
"#,
    )
    .unwrap();
    assert_eq!(
        *views.dags[0].trigger(),
        baton_runtime::dag::Trigger::Views(vec![baton_runtime::env::ViewId::of::<
            baton_apps::views::Topology,
        >()])
    );
}

#[test]
fn a_declared_dag_that_cannot_run_names_what_is_wrong() {
    let e = error("[dag.d]\napps = [\"router\"]\nviews = [\"topology\"]\n");
    assert!(e.contains("dag.d.apps") && e.contains("\"router\""), "{e}");
    assert!(e.contains("routes, route-flow"), "{e}");
    let e = error("apps = [\"hub\"]\n[dag.d]\napps = [\"routes\"]\nviews = [\"topology\"]\n");
    assert!(e.contains("offered: none"), "{e}");
    let e = error("[dag.d]\napps = [\"routes\"]\nviews = [\"switches\"]\n");
    assert!(
        e.contains("dag.d.views") && e.contains("\"switches\""),
        "{e}"
    );
    let e = error("[dag.d]\napps = [\"routes\"]\n");
    assert!(e.contains("views = [...] or every_ms"), "{e}");
    let e = error("[dag.d]\napps = [\"routes\"]\nviews = [\"topology\"]\nevery_ms = 5\n");
    assert!(e.contains("one of them"), "{e}");
    let e = error(
        "[dag.d]\napps = [\"routes\", \"route-flow\"]\nedges = [[\"routes\", \"route-flow\"], [\"route-flow\", \"routes\"]]\nevery_ms = 5\n",
    );
    assert!(e.contains("dag.d") && e.contains("cycle"), "{e}");
    let e = error("[dag.d]\napps = [\"routes\"]\nevery = 5\n");
    assert!(e.contains("every"), "{e}");
}

#[test]
fn a_cluster_section_joins_a_cluster_and_makes_the_runtime_clustered() {
    let s = file(
        "[cluster]\netcd = [\"http://127.0.0.1:2379\", \"http://10.0.0.2:2379\"]\nnode = \"baton-a\"\nttl_ms = 5000\n",
    )
    .unwrap();
    let c = s.cluster.unwrap();
    assert_eq!(
        c.endpoints,
        ["http://127.0.0.1:2379", "http://10.0.0.2:2379"]
    );
    assert_eq!(
        (c.node.as_str(), c.ttl),
        ("baton-a", Duration::from_secs(5))
    );
    assert!(s.runtime.clustered);
    let standalone = file("").unwrap();
    assert!(standalone.cluster.is_none() && !standalone.runtime.clustered);
}

#[test]
fn a_bad_cluster_section_names_its_key() {
    for (text, want) in [
        (
            "[cluster]\netcd = [\"http://127.0.0.1:2379\"]\n",
            "key `cluster.node`",
        ),
        (
            "[cluster]\nnode = \"a\"\n",
            "key `cluster.node`: only with cluster.etcd",
        ),
        (
            "[cluster]\netcd = [\"127.0.0.1:2379\"]\nnode = \"a\"\n",
            "key `cluster.etcd`: \"127.0.0.1:2379\" is not an etcd client URL",
        ),
        (
            "[cluster]\netcd = []\nnode = \"a\"\n",
            "key `cluster.etcd`: give at least one etcd URL",
        ),
        (
            "[cluster]\netcd = [\"http://e:2379\"]\nnode = \"a b\"\n",
            "key `cluster.node`",
        ),
        (
            "[cluster]\netcd = [\"http://e:2379\"]\nnode = \"a\"\nttl_ms = 1500\n",
            "key `cluster.ttl_ms`: 1500: whole seconds, at least 2000",
        ),
    ] {
        let e = error(text);
        assert!(e.contains(want), "{text:?}: {e}");
    }
}
