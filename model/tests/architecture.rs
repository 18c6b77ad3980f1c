//! The layout is the architecture: every module of the model imports only
//! from the layers below it, so the import graph between modules has no
//! circle. Read from the source, so that a new `use crate::...` that makes
//! one fails here, with the circle named. `docs/spec.md`'s table of files
//! names every source file, lowest layer first, so that a file added,
//! moved or removed cannot leave it stale.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may use its own layer and those
/// before it.
const LAYERS: &[&[&str]] = &[
    &["search"],
    &["config"],
    &["protocol"],
    &["shell"],
    &["guarantees"],
    &["trace"],
    &["view"],
    &["explorer"],
    &["model"],
    &["check"],
    &["conform"],
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`lib` for lib.rs).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src");
    let first = relative
        .components()
        .next()
        .expect("a component")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// The top-level modules a file names through `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        // `rocketmq_rebalance::...` and the like are other crates.
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = text[at + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let module = module_of(&src, &file);
        let text = std::fs::read_to_string(&file).expect("readable source");
        let uses = graph.entry(module.clone()).or_default();
        uses.extend(imports(&text).into_iter().filter(|m| *m != module));
    }
    graph
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn every_module_imports_only_from_lower_layers() {
    let graph = graph();
    for (module, uses) in &graph {
        if module == "lib" {
            continue;
        }
        let own = layer(module).unwrap_or_else(|| panic!("module {module} has no layer"));
        for used in uses {
            let theirs = layer(used).unwrap_or_else(|| panic!("{module} uses unknown {used}"));
            assert!(
                theirs <= own,
                "{module} (layer {own}) imports {used} (layer {theirs}): an upward import"
            );
        }
    }
}

#[test]
fn the_import_graph_has_no_circle() {
    let graph = graph();
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(at) = path.iter().position(|n| n == node) {
            panic!("import circle: {} -> {node}", path[at..].join(" -> "));
        }
        if done.contains(node) {
            return;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(node.to_string());
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done);
    }
}

/// The opening of `docs/spec.md`'s table of every file of the model.
const FILES_TABLE: &str = "Every file of the model (`model/src/`)";

/// The files `docs/spec.md`'s table of files names, in order: every
/// backticked path in the first cell of each of its rows.
fn files_in_the_spec() -> Vec<String> {
    let spec = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/spec.md");
    let spec = std::fs::read_to_string(spec).expect("docs/spec.md reads");
    let (_, after) = spec
        .split_once(FILES_TABLE)
        .expect("docs/spec.md has the table of files");
    after
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2) // the heading and its rule
        .flat_map(|row| {
            let cell = row.split('|').nth(1).unwrap_or_default();
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_specs_table_names_every_file_lowest_layer_first() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let on_disk: BTreeSet<String> = files
        .iter()
        .map(|file| {
            let relative = file.strip_prefix(&src).expect("under src");
            let parts: Vec<_> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            parts.join("/")
        })
        .collect();
    let named = files_in_the_spec();
    let named_set: BTreeSet<String> = named.iter().cloned().collect();
    let missing: Vec<_> = on_disk.difference(&named_set).collect();
    let stale: Vec<_> = named_set.difference(&on_disk).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/spec.md's table of files: {missing:?} not named, {stale:?} no such file"
    );
    let layers: Vec<(usize, &String)> = named
        .iter()
        .filter(|file| *file != "lib.rs")
        .map(|file| {
            let module = file.split('/').next().unwrap_or_default();
            let module = module.trim_end_matches(".rs");
            (
                layer(module).unwrap_or_else(|| panic!("{file}: no layer")),
                file,
            )
        })
        .collect();
    for pair in layers.windows(2) {
        assert!(
            pair[0].0 <= pair[1].0,
            "docs/spec.md's table of files: {} (a lower layer) after {}",
            pair[1].1,
            pair[0].1
        );
    }
}
