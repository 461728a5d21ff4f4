//! Reads each history file given and prints op counts or the error: a quick
//! way to check the reader against a directory of real histories.

fn main() {
    for path in std::env::args().skip(1) {
        match ellery::read::read_history_file(std::path::Path::new(&path)) {
            Ok(h) => println!(
                "{path}: {} client ops, {} other",
                h.ops.len(),
                h.non_client_ops
            ),
            Err(e) => println!("ERROR {e}"),
        }
    }
}
