//! Where `rebalance check` runs its distributed search: the workers of
//! `--workers`, `--hosts` and `--process`, and the processes that
//! `--local-processes` starts on loopback.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rocketmq_rebalance_model::Workers;

/// The flags that place the workers.
pub struct Placement<'a> {
    pub workers: Option<usize>,
    pub hosts: Option<&'a Path>,
    pub process: Option<usize>,
    pub local_processes: Option<usize>,
}

/// The workers the flags ask for (none: the default search), and the
/// hosts file to give the local processes; a message for bad input.
pub fn workers(placement: &Placement) -> Result<Option<(Workers, Option<PathBuf>)>, String> {
    if placement.workers.is_some_and(|n| n == 0 || n > 1024) {
        return Err("--workers must be 1..=1024".to_string());
    }
    let threads = placement.workers.unwrap_or(1);
    if let Some(path) = placement.hosts {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read --hosts {}: {e}", path.display()))?;
        let hosts = parse_hosts(&text).map_err(|e| format!("--hosts {}: {e}", path.display()))?;
        let process = placement.process.unwrap_or(0);
        if process >= hosts.len() {
            return Err(format!(
                "--process {process} is not a line of --hosts ({} processes, from 0)",
                hosts.len()
            ));
        }
        return Ok(Some((
            Workers::Cluster {
                threads,
                hosts,
                process,
            },
            None,
        )));
    }
    if let Some(n) = placement.local_processes {
        if n == 0 || n > 64 {
            return Err("--local-processes must be 1..=64".to_string());
        }
        let hosts = free_loopback_addresses(n)
            .map_err(|e| format!("cannot find free ports on loopback: {e}"))?;
        let file = std::env::temp_dir().join(format!("rebalance-hosts-{}.txt", std::process::id()));
        std::fs::write(&file, hosts.join("\n") + "\n")
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        return Ok(Some((
            Workers::Cluster {
                threads,
                hosts,
                process: 0,
            },
            Some(file),
        )));
    }
    Ok(placement.workers.map(|n| (Workers::Threads(n), None)))
}

/// The `host:port` lines of a hosts file: blank lines and `#` comments
/// skipped.
fn parse_hosts(text: &str) -> Result<Vec<String>, String> {
    let mut hosts = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let valid = line
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !valid {
            return Err(format!("line {}: {line:?} is not host:port", number + 1));
        }
        hosts.push(line.to_string());
    }
    if hosts.is_empty() {
        return Err("no host:port line".to_string());
    }
    Ok(hosts)
}

/// `n` addresses on loopback whose ports were free a moment ago.
fn free_loopback_addresses(n: usize) -> std::io::Result<Vec<String>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()?;
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.to_string()))
        .collect()
}

/// The processes 1 to N - 1 of `--local-processes`, ended when dropped.
pub struct LocalProcesses {
    children: Vec<Child>,
    hosts: PathBuf,
}

impl LocalProcesses {
    /// Starts this program again for each other line of `hosts`, with this
    /// run's arguments but `--local-processes`.
    pub fn start(hosts: PathBuf, processes: usize) -> Result<Self, String> {
        let program = std::env::current_exe().map_err(|e| e.to_string())?;
        let args = arguments_without_local_processes(std::env::args().skip(1));
        let mut started = LocalProcesses {
            children: Vec::new(),
            hosts,
        };
        for process in 1..processes {
            let child = Command::new(&program)
                .args(&args)
                .arg("--hosts")
                .arg(&started.hosts)
                .arg("--process")
                .arg(process.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| format!("{}: {e}", program.display()))?;
            started.children.push(child);
        }
        Ok(started)
    }
}

impl Drop for LocalProcesses {
    /// The search has ended in every process when the first one's ends, so
    /// the others exit by themselves; any left after a while are killed.
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        for child in &mut self.children {
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&self.hosts);
    }
}

/// `args` without `--local-processes N` (or `--local-processes=N`).
fn arguments_without_local_processes(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if skip_value {
            skip_value = false;
        } else if arg == "--local-processes" {
            skip_value = true;
        } else if !arg.starts_with("--local-processes=") {
            kept.push(arg);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_file_is_host_port_lines() {
        assert_eq!(
            parse_hosts("# two machines\n10.0.0.1:2101\n\n  node-b:2101  \n"),
            Ok(vec!["10.0.0.1:2101".to_string(), "node-b:2101".to_string()])
        );
        assert!(parse_hosts("10.0.0.1\n").unwrap_err().contains("line 1"));
        assert!(parse_hosts("a:b:99999\n").is_err());
        assert!(parse_hosts("# nothing\n").is_err());
    }

    #[test]
    fn the_other_processes_get_every_argument_but_local_processes() {
        let args = [
            "check",
            "--local-processes",
            "2",
            "--joins",
            "2",
            "--local-processes=3",
        ];
        assert_eq!(
            arguments_without_local_processes(args.iter().map(|s| s.to_string())),
            ["check", "--joins", "2"]
        );
    }
}
