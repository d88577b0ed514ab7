//! Mounts the app. Everything else lives in the library (`lib.rs`).

fn main() {
    vramfit_web::start();
}
