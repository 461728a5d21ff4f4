/// Big tables on huge pages where the kernel offers them ([`ellery::alloc`]).
#[global_allocator]
static ALLOC: ellery::alloc::BigPages = ellery::alloc::BigPages;

fn main() {
    ellery::limits::tune_allocator();
    std::process::exit(ellery::cli::main());
}
