//! How long building the filters takes (a measuring aid, not an example to copy).
fn main() {
    let arch = sandbox_linux::filter::Arch::current().unwrap();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let n: u32 = std::env::var("N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200);
        for _ in 0..n {
            std::hint::black_box(sandbox_linux::filter::build(arch, 4242).unwrap());
        }
        println!("{:?} per build", t.elapsed() / n);
    }
}
