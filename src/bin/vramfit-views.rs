//! The views module (loaded by the page when a view other than "Size it" first shows; see
//! `src/views.rs`).

fn main() {
    vramfit_web::views::start();
}
