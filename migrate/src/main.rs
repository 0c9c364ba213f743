//! The `alexdb-migrate` command. See `alexdb-migrate --help`.

use clap::Parser;

fn main() {
    let cli = alexdb_migrate::cli::Cli::parse();
    std::process::exit(alexdb_migrate::cli::run(cli));
}
