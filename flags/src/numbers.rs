//! The flags of the model's numbers: one a row of its table (`Size`), with
//! the row's flag and help, built rather than declared, so that a new size
//! or budget has its flag as soon as it has its row.

use clap::builder::RangedU64ValueParser;
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use rocketmq_rebalance_model::configuration::{Dense, Fault, Scenario, Size, Sizes};

/// The numbers given on the command line, each a row of the model's table
/// (`Size`): sizes, fault budgets and orderly consumption's durations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Numbers {
    given: Vec<(Size, usize)>,
}

impl Numbers {
    /// The number given for `size`, if any.
    pub fn get(&self, size: Size) -> Option<usize> {
        self.given.iter().find(|(s, _)| *s == size).map(|&(_, v)| v)
    }

    /// The duration given for `size`, if any (a duration's flag takes
    /// 0..=255 only).
    pub fn duration(&self, size: Size) -> Option<u8> {
        self.get(size).and_then(|v| u8::try_from(v).ok())
    }

    /// Every size and budget given, in the table's order.
    pub fn given(&self) -> impl Iterator<Item = (Size, usize)> + '_ {
        self.given.iter().copied().filter(|(s, _)| !s.is_duration())
    }

    /// Every duration given, in the table's order.
    pub fn durations(&self) -> impl Iterator<Item = (Size, usize)> + '_ {
        self.given.iter().copied().filter(|(s, _)| s.is_duration())
    }
}

/// The argument's id: the flag without its dashes.
fn id(size: Size) -> &'static str {
    size.flag().trim_start_matches("--")
}

/// Where `--help` lists the flag.
fn heading(size: Size) -> &'static str {
    let budget = Fault::all().any(|f| f.spec().budgets.contains(&size));
    match (size.is_duration(), budget) {
        (true, _) => "Orderly durations",
        (false, true) => "Fault budgets",
        (false, false) => "Sizes",
    }
}

/// The row's help, and for a size, its default and the scenarios whose
/// own default differs: `(default 0; crash: 1)`.
fn help(size: Size) -> String {
    let text = size.help();
    let Some(default) = Sizes::DEFAULT.count(size) else {
        return text;
    };
    let mut others: Vec<(usize, Vec<&str>)> = Vec::new();
    for &scenario in Scenario::ALL {
        let value = scenario.default_sizes().count(size).unwrap_or(default);
        if value == default {
            continue;
        }
        match others.iter_mut().find(|(v, _)| *v == value) {
            Some((_, names)) => names.push(scenario.name()),
            None => others.push((value, vec![scenario.name()])),
        }
    }
    let mut defaults = format!("default {default}");
    for (value, names) in others {
        defaults += &format!("; {}: {value}", names.join(", "));
    }
    format!("{} ({defaults}).", text.trim_end_matches('.'))
}

impl Args for Numbers {
    fn augment_args(cmd: Command) -> Command {
        Size::all().fold(cmd, |cmd, size| {
            let (parser, name) = if size.is_duration() {
                (RangedU64ValueParser::<usize>::new().range(0..=255), "TICKS")
            } else {
                (RangedU64ValueParser::<usize>::new().range(0..), "N")
            };
            cmd.arg(
                Arg::new(id(size))
                    .long(id(size))
                    .value_name(name)
                    .value_parser(parser)
                    .help(help(size))
                    .help_heading(heading(size)),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for Numbers {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let given = Size::all()
            .filter_map(|size| Some((size, *matches.get_one::<usize>(id(size))?)))
            .collect();
        Ok(Self { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}
