//! Where a distributed search's workers run: threads of this process, or
//! threads of processes that talk over TCP, on sockets connected here.

use std::any::Any;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::Hooks;

/// Where the workers of a distributed search run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Workers {
    /// Threads of this process.
    Threads(usize),
    /// `threads` in each of the processes at `hosts` (`host:port`, one per
    /// process, in the same order for every process), this one the
    /// `process`th.
    Cluster {
        /// Worker threads in each process.
        threads: usize,
        /// Every process's address.
        hosts: Vec<String>,
        /// This process's index in `hosts`.
        process: usize,
    },
}

impl Workers {
    /// Timely's workers: threads that talk in memory, or threads of
    /// processes that talk over TCP, on sockets connected here (timely's
    /// own set-up prints to stdout, where a report goes, and waits for
    /// ever).
    pub(super) fn builders(&self) -> Result<(Vec<AllocatorBuilder>, Box<dyn Any + Send>), String> {
        match self {
            Workers::Threads(n) => timely::CommunicationConfig::Process((*n).max(1)).try_build(),
            Workers::Cluster {
                threads,
                hosts,
                process,
            } => {
                let threads = (*threads).max(1);
                let sockets = connect(hosts, *process, Instant::now() + CONNECT_WITHIN)?;
                let hooks = Hooks::default();
                let local = ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), None);
                let (builders, guard) =
                    initialize_networking_from_sockets(local, sockets, *process, threads, hooks)
                        .map_err(|e| format!("cannot start the network: {e}"))?;
                Ok((
                    builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
                    Box::new(guard),
                ))
            }
        }
    }
}

/// How long a process waits for the others to come up.
const CONNECT_WITHIN: Duration = Duration::from_secs(300);

/// One socket to every other process, as timely expects them: this one
/// connects to those before it, saying its index, and accepts those after.
fn connect(
    hosts: &[String],
    process: usize,
    deadline: Instant,
) -> Result<Vec<Option<TcpStream>>, String> {
    let Some(own) = hosts.get(process) else {
        return Err(format!(
            "process {process} is not among {} hosts",
            hosts.len()
        ));
    };
    let listener = TcpListener::bind(own).map_err(|e| format!("cannot listen on {own}: {e}"))?;
    let mut sockets: Vec<Option<TcpStream>> = (0..hosts.len()).map(|_| None).collect();
    for (index, address) in hosts.iter().enumerate().take(process) {
        let mut stream = loop {
            match TcpStream::connect(address) {
                Ok(stream) => break stream,
                Err(e) if Instant::now() >= deadline => {
                    return Err(format!(
                        "cannot connect to process {index} at {address}: {e}"
                    ))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        let sent = stream
            .set_nodelay(true)
            .and_then(|()| stream.write_all(&(process as u64).to_be_bytes()));
        sent.map_err(|e| format!("cannot greet process {index} at {address}: {e}"))?;
        sockets[index] = Some(stream);
    }
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot listen on {own}: {e}"))?;
    while sockets[process + 1..].iter().any(Option::is_none) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                let mut index = [0; 8];
                stream
                    .set_nonblocking(false)
                    .and_then(|()| stream.set_nodelay(true))
                    .and_then(|()| stream.read_exact(&mut index))
                    .map_err(|e| format!("a process greeting {own}: {e}"))?;
                let index = u64::from_be_bytes(index) as usize;
                if index <= process || index >= hosts.len() {
                    return Err(format!("a process greeting {own} says it is {index}"));
                }
                sockets[index] = Some(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(format!(
                        "the processes after {process} did not connect to {own}"
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(format!("cannot accept on {own}: {e}")),
        }
    }
    Ok(sockets)
}
