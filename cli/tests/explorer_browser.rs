//! End to end in a real browser: `rebalance explore` serves the
//! duplicate-client-id scenario, headless Chromium follows the path of the
//! counterexample that `rebalance check` prints, and the page must show the
//! double-owned queue. Saves a screenshot to
//! `target/explorer-duplicate-client-id.png`.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it). Without it the test
//! is skipped with a message, except under CI (`CI` set), where it fails.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REBALANCE: &str = env!("CARGO_BIN_EXE_rebalance");

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The status code of `GET path`, or `None` when nothing answers.
fn get_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.split_whitespace().nth(1)?.parse().ok()
}

fn counterexample_path() -> String {
    let output = Command::new(REBALANCE)
        .args(["check", "--scenario", "duplicate-client-id", "--json"])
        .output()
        .expect("rebalance check runs");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    report["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["name"] == "no queue stays double-owned")
        .and_then(|p| p["explorer_path"].as_str())
        .expect("a counterexample with an explorer path")
        .to_string()
}

fn run_chromium(browser: &Path, extra: &[&str], url: &str, profile: &Path) -> String {
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stderr(Stdio::null())
        .output()
        .expect("chromium runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_explorer_shows_the_double_owned_queue_of_a_counterexample() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is required under CI (apt-get install chromium)"
        );
        eprintln!("SKIPPED: no chromium; install Debian's chromium to run this test");
        return;
    };
    let path = counterexample_path();
    assert!(path.starts_with("#/steps/0"), "{path}");

    let port = free_port();
    let _server = Server(
        Command::new(REBALANCE)
            .args(["explore", "--scenario", "duplicate-client-id", "--addr"])
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rebalance explore starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while get_status(port, "/") != Some(200) {
        assert!(Instant::now() < deadline, "the explorer never answered");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Malformed paths and unknown URLs: 404, and the server keeps serving.
    assert_eq!(get_status(port, "/.states/not/a/path"), Some(404));
    assert_eq!(get_status(port, "/.states/0/999/999"), Some(404));
    assert_eq!(get_status(port, "/no-such-page"), Some(404));
    assert_eq!(get_status(port, "/"), Some(200));

    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let url = format!("http://127.0.0.1:{port}/{path}");
    let dom = run_chromium(
        &browser,
        &["--dump-dom"],
        &url,
        &target.join("chromium-dom"),
    );
    assert!(
        dom.contains("ownership (route version 0)"),
        "the ownership picture is missing"
    );
    let twice = dom
        .split("owned twice: ")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .expect("the page names a queue owned twice");
    assert!(!twice.trim().is_empty());
    assert!(
        dom.contains("owned by nobody: "),
        "the orphaned block is shown too"
    );
    assert!(
        dom.contains("broker-a -&gt; c3: consumer list")
            || dom.contains("broker-a -> c3: consumer list")
    );
    // The sequence diagram speaks RocketMQ too, never Rust's debug forms.
    assert!(dom.contains("GET_CONSUMER_LIST_BY_GROUP (TopicA)</text>"));
    assert!(dom.contains("consumer list [c1 c2 c2]</text>"));
    for debug in [
        "ConsumerList {",
        "GetConsumerList {",
        "Deliver {",
        "Timeout(",
    ] {
        assert!(!dom.contains(debug), "{debug} on the page");
    }

    let screenshot = target.join("../explorer-duplicate-client-id.png");
    run_chromium(
        &browser,
        &[
            "--window-size=1400,1300",
            &format!("--screenshot={}", screenshot.display()),
        ],
        &url,
        &target.join("chromium-shot"),
    );
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
    assert_eq!(
        get_status(port, "/"),
        Some(200),
        "still serving after the browser"
    );
}
