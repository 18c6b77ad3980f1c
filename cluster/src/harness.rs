//! The Java harness (`cluster/harness/`, a Maven project): finding Java and
//! Maven, building it for one RocketMQ version, and the command lines of
//! its two programs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::ClusterError;

/// RocketMQ versions the harness is built and run against.
pub const VERSIONS: &[&str] = &["5.3.3", "5.5.0"];

/// The JVM flags every RocketMQ process of a run gets: RocketMQ ships no
/// module opens, and JDK 17 needs these for its direct buffers; the serial
/// collector and the C1 compiler keep a small process small and quick to
/// start on two cores.
pub const JVM_FLAGS: &[&str] = &[
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
];

/// The harness built for one RocketMQ version.
#[derive(Clone, Debug)]
pub struct Harness {
    /// The version.
    pub version: String,
    /// The Java classpath: the harness's classes, then RocketMQ's jars.
    pub classpath: String,
    /// The classpath of a FIFO group's consumer: the harness's classes,
    /// then the gRPC client's jar (shaded) and what the harness's own
    /// classes use. The gRPC client's protocol classes have the names of
    /// the proxy's, so the two never share a JVM.
    pub grpc_classpath: String,
}

/// The harness's Maven project: `$REBALANCE_HARNESS`, else the one in this
/// source tree.
pub fn project_dir() -> PathBuf {
    std::env::var_os("REBALANCE_HARNESS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("harness"))
}

fn runs(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Builds the harness for `version` unless it is built and newer than its
/// sources, logging Maven's output to `log`. Without Java or Maven: bad
/// input at once. A failed build (no Maven Central, say): the cluster
/// cannot start.
pub fn build(version: &str, log: &Path) -> Result<Harness, ClusterError> {
    if !VERSIONS.contains(&version) {
        return Err(ClusterError::BadInput(format!(
            "--rocketmq {version}: the harness is pinned to {}",
            VERSIONS.join(" and ")
        )));
    }
    if !runs("java", "-version") || !runs("mvn", "-v") {
        return Err(ClusterError::BadInput(
            "rebalance cluster needs Java 17 and Maven on the PATH (`java -version`, `mvn -v`)"
                .into(),
        ));
    }
    let project = project_dir();
    let target = project.join("target").join(version);
    let classpath_file = target.join("classpath.txt");
    if !is_fresh(&project, &classpath_file) {
        let out = std::fs::File::create(log)
            .map_err(|e| ClusterError::BadInput(format!("cannot write {}: {e}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(|e| ClusterError::BadInput(e.to_string()))?;
        let status = Command::new("mvn")
            .args([
                "-B",
                "-q",
                &format!("-Drocketmq.version={version}"),
                "compile",
            ])
            .current_dir(&project)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .status();
        if !status.is_ok_and(|s| s.success()) {
            return Err(ClusterError::NotStarted {
                reason: format!("the harness did not build for RocketMQ {version}"),
                log: log.to_owned(),
            });
        }
    }
    let classpath = |file: &str| {
        let jars =
            std::fs::read_to_string(target.join(file)).map_err(|e| ClusterError::NotStarted {
                reason: format!("no {file} after the build: {e}"),
                log: log.to_owned(),
            })?;
        Ok(format!(
            "{}:{}",
            target.join("classes").display(),
            jars.trim()
        ))
    };
    Ok(Harness {
        version: version.to_owned(),
        classpath: classpath("classpath.txt")?,
        grpc_classpath: classpath("grpc-classpath.txt")?,
    })
}

/// Whether `built` exists and is newer than the pom and every source file.
fn is_fresh(project: &Path, built: &Path) -> bool {
    let Ok(built) = built.metadata().and_then(|m| m.modified()) else {
        return false;
    };
    let mut stack = vec![project.join("src"), project.join("pom.xml")];
    while let Some(path) = stack.pop() {
        let Ok(meta) = path.metadata() else { continue };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else if meta.modified().is_ok_and(|m| m > built) {
            return false;
        }
    }
    true
}
