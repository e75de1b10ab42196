//! No import circles: in every crate of the workspace, the files' `crate::` paths form a graph
//! without a cycle, so each file can be read knowing only those below it (issue 28.6).
//!
//! The crates are the workspace's members. A file is a module (`a/b.rs` is `a::b`); a path
//! `crate::a::b::…` names `a::b` where that is a file, else `a`. Comment lines and a file's
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

/// The `crate::` paths of `text` outside comments and its test module, each as up to two names.
fn paths_in(text: &str) -> Vec<(String, Option<String>)> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let name = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut paths = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let first = name(rest);
            if first.is_empty() {
                continue;
            }
            let second = rest[first.len()..]
                .strip_prefix("::")
                .map(name)
                .filter(|s| !s.is_empty());
            paths.push((first, second));
        }
    }
    paths
}

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
        for (first, second) in paths_in(text) {
            let nested = second.map(|s| format!("{first}::{s}"));
            let target = match nested {
                Some(n) if texts.contains_key(&n) => n,
                _ if texts.contains_key(&first) => first,
                _ => continue,
            };
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
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
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
        "fn f() { crate::w(); }\n#[cfg(test)]\nmod tests { crate::t; }",
    );
    let paths = paths_in(text);
    assert_eq!(
        paths,
        vec![("x".into(), Some("y".into())), ("w".into(), None)]
    );
}
