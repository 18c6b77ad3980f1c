//! `rebalance explore`: Stateright's Explorer over the rebalance model, with
//! the rebalance's own views (see `rocketmq_rebalance_model::view`).

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::process::ExitCode;

use clap::Args;
use rocketmq_rebalance_model::build_model;
use stateright::Model;

use crate::input::bad_input;
use rocketmq_rebalance_flags::ModelArgs;

/// Flags of `rebalance explore`.
#[derive(Args, Debug)]
pub struct ExploreArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Address to serve on. The page has no authentication: anything but a
    /// loopback address needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1:3000")]
    addr: String,
    /// Allow serving on a non-loopback address (prints a warning).
    #[arg(long)]
    allow_remote: bool,
    /// Threads of the on-demand checker behind the page.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The periodic rebalance, as `check --liveness` models it (to step
    /// through a liveness lasso).
    #[arg(long)]
    liveness: bool,
}

/// Serves until Ctrl-C. Exit 2 when the flags or the address are bad.
pub fn run(args: ExploreArgs) -> ExitCode {
    if args.threads == 0 || args.threads > 1024 {
        return bad_input("--threads must be 1..=1024");
    }
    let config = match args.model.build_config() {
        Ok(config) => config.with_periodic_rebalance(args.liveness),
        Err(message) => return bad_input(message),
    };
    let addresses: Vec<SocketAddr> = match args.addr.to_socket_addrs() {
        Ok(addresses) => addresses.collect(),
        Err(e) => return bad_input(format!("bad --addr {:?}: {e}", args.addr)),
    };
    let Some(&addr) = addresses.first() else {
        return bad_input(format!("--addr {:?} resolves to no address", args.addr));
    };
    if !addr.ip().is_loopback() {
        if !args.allow_remote {
            return bad_input(format!(
                "--addr {addr} is not a loopback address; the explorer has no authentication, \
                 pass --allow-remote to serve it anyway"
            ));
        }
        eprintln!("warning: serving on {addr}: anyone who can reach it can use the explorer");
    }
    // Stateright panics when it cannot bind: try the address first.
    if let Err(e) = TcpListener::bind(addr) {
        return bad_input(format!("cannot serve on {addr}: {e}"));
    }
    if let Err(e) = ctrlc::set_handler(|| {
        eprintln!("explorer stopped");
        std::process::exit(0);
    }) {
        eprintln!("warning: Ctrl-C will not stop cleanly: {e}");
    }
    println!("explorer: http://{addr}/  (Ctrl-C to stop)");
    build_model(config)
        .checker()
        .threads(args.threads)
        .serve(addr);
    ExitCode::SUCCESS
}
