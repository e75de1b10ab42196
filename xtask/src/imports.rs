//! No import circles: in every crate of the workspace, the files' `crate::` paths form a graph
//! without a cycle, so each file can be read knowing only those below it (issue 28.6).
//!
//! The crates are the workspace's members. A file is a module (`a/b.rs` is `a::b`); a path
//! `crate::a::b::…` (or `super::b` from `a::c`) names `a::b` where that is a file, else `a`. Comment lines and a file's
//! `#[cfg(test)] mod tests` are left out: a test may reach up to build what it checks. A
//! module's own descendants are not an edge up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

fn module_of(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    match parts.as_slice() {
        [only] if only == "lib" || only == "main" => "crate".to_owned(),
        _ => parts.join("::"),
    }
}

/// The module paths `text` names, each as its names from the crate's root: `crate::a::b`, and
/// `super::b` (or `super::super::b`) of a file whose module is `module`, resolved against it;
/// a braced list (`use super::{a, b::c}`) on one line gives each of its items. Comment lines
/// and the file's test module are left out.
fn paths_in(text: &str, module: &str) -> Vec<Vec<String>> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let name = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    // The names after a prefix, up to three, each name of a braced list starting its own path.
    let names_after = |rest: &str| -> Vec<Vec<String>> {
        let rest = rest.trim_start();
        let items: Vec<&str> = match rest.strip_prefix('{') {
            Some(list) => list.split('}').next().unwrap_or("").split(',').collect(),
            None => vec![rest],
        };
        items
            .into_iter()
            .map(|item| {
                let mut names = Vec::new();
                let mut at = item.trim_start();
                while names.len() < 3 {
                    let n = name(at);
                    if n.is_empty() {
                        break;
                    }
                    at = &at[n.len()..];
                    names.push(n);
                    match at.strip_prefix("::") {
                        Some(next) => at = next,
                        None => break,
                    }
                }
                names
            })
            .filter(|names| !names.is_empty())
            .collect()
    };
    let own: Vec<String> = if module == "crate" {
        Vec::new()
    } else {
        module.split("::").map(str::to_owned).collect()
    };
    let mut paths = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            // `$crate::` in a macro is the crate too; a name ending in `crate` is not.
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            paths.extend(names_after(&line[at + "crate::".len()..]));
        }
        for (at, _) in line.match_indices("super::") {
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = &line[at..];
            let mut base = own.clone();
            while let Some(next) = rest.strip_prefix("super::") {
                base.pop();
                rest = next;
            }
            for names in names_after(rest) {
                let mut full = base.clone();
                full.extend(names);
                paths.push(full);
            }
        }
    }
    paths
}

/// Where a circle is known and left to be broken: each entry a crate and the modules of one
/// circle, sorted, as the test reports it. The test fails on any other circle, and on an entry
/// here that is no longer a circle, so the list only shrinks.
const KNOWN_CIRCLES: &[(&str, &[&str])] = &[];

fn graph_of(root: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let texts: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            (
                module_of(root, f),
                std::fs::read_to_string(f).unwrap_or_default(),
            )
        })
        .collect();
    let mut graph = Graph::new();
    for (module, text) in &texts {
        let edges = graph.entry(module.clone()).or_default();
        for names in paths_in(text, module) {
            // The longest leading part of the path that is a file.
            let target = (1..=names.len())
                .rev()
                .map(|n| names[..n].join("::"))
                .find(|m| texts.contains_key(m));
            let Some(target) = target else { continue };
            let own = *module == target || module.starts_with(&format!("{target}::"));
            if !own {
                edges.insert(target);
            }
        }
    }
    graph
}

/// The strongly connected parts of `graph` with more than one module (Tarjan's algorithm).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(walk: &mut Walk<'g>, node: &'g str) {
        let at = walk.index.len();
        walk.index.insert(node, at);
        walk.low.insert(node, at);
        walk.stack.push(node);
        for next in walk.graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !walk.index.contains_key(next) {
                visit(walk, next);
                let low = walk.low[next].min(walk.low[node]);
                walk.low.insert(node, low);
            } else if walk.stack.contains(&next) {
                let low = walk.index[next].min(walk.low[node]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let mut part = Vec::new();
            while let Some(top) = walk.stack.pop() {
                part.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                walk.found.push(part);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

#[test]
fn no_crate_of_the_workspace_has_an_import_circle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the workspace's members");
    let crates: Vec<String> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .map(|m| format!("{m}/src"))
        .collect();
    assert!(crates.iter().any(|c| c == "sandbox-core/src"), "{crates:?}");
    let mut found = Vec::new();
    for krate in &crates {
        let root = workspace.join(krate);
        let graph = graph_of(&root);
        assert!(!graph.is_empty(), "{krate}: no modules found");
        found.extend(
            circles(&graph)
                .into_iter()
                .map(|c| format!("{krate}: {c:?}")),
        );
    }
    let known: Vec<String> = KNOWN_CIRCLES
        .iter()
        .map(|(krate, circle)| format!("{krate}/src: {circle:?}"))
        .collect();
    let new: Vec<&String> = found.iter().filter(|c| !known.contains(c)).collect();
    assert!(new.is_empty(), "import circles:\n{new:#?}");
    let gone: Vec<&String> = known.iter().filter(|c| !found.contains(c)).collect();
    assert!(
        gone.is_empty(),
        "no longer circles; take them out of KNOWN_CIRCLES:\n{gone:#?}"
    );
}

#[test]
fn a_circle_is_found() {
    let mut graph = Graph::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph.entry(from.into()).or_default().insert(to.into());
        graph.entry(to.into()).or_default();
    }
    assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
    let text = concat!(
        "use crate::x::y;\n// crate::z\n",
        "fn f() { crate::w(); }\nuse super::{p, q::r};\nuse super::super::s;\n",
        "#[cfg(test)]\nmod tests { crate::t; }",
    );
    let names = |p: &[&str]| p.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        paths_in(text, "a::b::c"),
        vec![
            names(&["x", "y"]),
            names(&["w"]),
            names(&["a", "b", "p"]),
            names(&["a", "b", "q", "r"]),
            names(&["a", "s"]),
        ]
    );
}
