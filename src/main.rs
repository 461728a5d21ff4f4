fn main() {
    std::process::exit(ellery::cli::main());
}
