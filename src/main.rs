fn main() {
    ellery::limits::tune_allocator();
    std::process::exit(ellery::cli::main());
}
