//! The libbpf-rs skeletons build.rs generates, one per algorithm.
#![allow(
    clippy::all,
    unused_imports,
    dead_code,
    non_camel_case_types,
    non_snake_case
)]

pub mod fast {
    include!(concat!(env!("OUT_DIR"), "/fast.skel.rs"));
}
pub mod scalable {
    include!(concat!(env!("OUT_DIR"), "/scalable.skel.rs"));
}
pub mod highspeed {
    include!(concat!(env!("OUT_DIR"), "/highspeed.skel.rs"));
}
pub mod vegas {
    include!(concat!(env!("OUT_DIR"), "/vegas.skel.rs"));
}
pub mod lion {
    include!(concat!(env!("OUT_DIR"), "/lion.skel.rs"));
}
pub mod reject {
    include!(concat!(env!("OUT_DIR"), "/reject.skel.rs"));
}
